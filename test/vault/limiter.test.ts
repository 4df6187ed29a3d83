import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { RequestLimiter } from '../../vault/limiter.ts';

/** A task that runs until released, noting that it started. */
function gate(started: number[], i: number): { run: () => Promise<number>; release: () => void } {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return {
    run: async () => {
      started.push(i);
      await done;
      return i;
    },
    release: () => release(),
  };
}

test('at most maxConcurrent requests run at once; the others wait and start in FIFO order', async () => {
  const l = new RequestLimiter({ maxConcurrent: 2, ratePerSecond: 0 });
  const started: number[] = [];
  const gates = [0, 1, 2, 3].map((i) => gate(started, i));
  const results = gates.map((g) => l.run(g.run));
  await sleep(5);
  assert.deepEqual(started, [0, 1]);
  assert.equal(l.active, 2);
  assert.equal(l.queued, 2);
  gates[1]?.release();
  await sleep(5);
  assert.deepEqual(started, [0, 1, 2]);
  for (const g of gates) g.release();
  assert.deepEqual(await Promise.all(results), [0, 1, 2, 3]);
  assert.equal(l.active, 0);
  assert.equal(l.queued, 0);
});

test('a failing request frees its slot and its error reaches the caller', async () => {
  const l = new RequestLimiter({ maxConcurrent: 1, ratePerSecond: 0 });
  await assert.rejects(
    l.run(() => Promise.reject(new Error('vault down'))),
    /vault down/,
  );
  assert.equal(await l.run(() => Promise.resolve('next')), 'next');
});

test('the token bucket lets a burst through at once, then paces at the rate', async () => {
  let now = 0;
  const l = new RequestLimiter({ maxConcurrent: 100, ratePerSecond: 100, burst: 3, now: () => now });
  let ran = 0;
  const all = Array.from({ length: 5 }, () => l.run(() => Promise.resolve(++ran)));
  await sleep(1);
  assert.equal(ran, 3, 'the burst');
  assert.equal(l.queued, 2);
  now += 10; // one token per 10 ms at 100/s
  for (const deadline = Date.now() + 5_000; ran < 4 && Date.now() < deadline;) await sleep(5);
  assert.equal(ran, 4);
  await sleep(30);
  assert.equal(ran, 4, 'no token, no request: the clock has not moved');
  now += 10;
  await Promise.all(all);
  assert.equal(ran, 5);
});
