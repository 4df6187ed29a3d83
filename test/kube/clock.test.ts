import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, systemClock } from '../../kube/clock.ts';

describe('FakeClock', () => {
  test('time moves only on advance, and due timers fire in due order (ties in the order set)', async () => {
    const clock = new FakeClock(1000);
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimer(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimer(() => fired.push(`c@${clock.now()}`), 20);
    clock.setTimer(() => fired.push('late'), 31);
    assert.equal(clock.now(), 1000);
    assert.equal(clock.pending, 4);
    await clock.advance(30);
    assert.deepEqual(fired, ['a@1010', 'b@1020', 'c@1020']);
    assert.equal(clock.now(), 1030);
    assert.equal(clock.pending, 1);
  });

  test('a cancelled timer never fires; a negative delay is due now', async () => {
    const clock = new FakeClock();
    let fired = 0;
    clock.setTimer(() => fired++, 5).cancel();
    clock.setTimer(() => fired++, -100);
    await clock.advance(0);
    assert.equal(fired, 1);
    assert.equal(clock.pending, 0);
  });

  test('sleep resolves when time reaches it, or early when its signal aborts', async () => {
    const clock = new FakeClock();
    let slept = false;
    const p = clock.sleep(100).then(() => (slept = true));
    await clock.advance(99);
    assert.equal(slept, false);
    await clock.advance(1);
    await p;
    assert.equal(slept, true);

    const ac = new AbortController();
    const aborted = clock.sleep(1_000_000, ac.signal);
    ac.abort();
    await aborted;
    assert.equal(clock.pending, 0, 'the aborted sleep cancelled its timer');
    await clock.sleep(5, ac.signal); // already aborted: resolves at once, without a timer
    assert.equal(clock.pending, 0);
  });
});

describe('systemClock', () => {
  test('an aborted sleep resolves at once instead of keeping the process waiting', async () => {
    const ac = new AbortController();
    const start = Date.now();
    const p = systemClock.sleep(60_000, ac.signal);
    ac.abort();
    await p;
    assert.ok(Date.now() - start < 5_000);
  });
});
