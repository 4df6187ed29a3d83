import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../kube/clock.ts';
import { ItemExponentialRateLimiter } from '../../kube/rate-limiter.ts';
import { WorkQueue } from '../../kube/workqueue.ts';

/** Resolve `p` if it settles after letting the event loop turn; else 'pending'. */
async function peek<T>(p: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => setImmediate(() => r('pending'))))]);
}

describe('work queue', () => {
  test('a key added many times while waiting is queued once', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    for (let i = 0; i < 5; i++) q.add('ns/a');
    q.add('ns/b');
    assert.equal(q.length, 2);
    assert.equal(await q.get(), 'ns/a');
    assert.equal(await q.get(), 'ns/b');
  });

  test('a key changed while being processed runs again after, never concurrently', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    q.add('k');
    const first = await q.get();
    assert.equal(first, 'k');
    q.add('k'); // changed while in flight
    const second = q.get();
    assert.equal(await peek(second), 'pending', 'not handed to a second worker while in flight');
    q.done('k');
    assert.equal(await second, 'k', 'runs again after done');
    q.done('k');
    assert.equal(q.length, 0);
  });

  test('failures back off per key exponentially from 5 ms, and forget resets', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock, rateLimiter: new ItemExponentialRateLimiter(5, 1000_000) });
    const delays: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      q.addRateLimited('k');
      const got = q.get();
      let waited = 0;
      while ((await peek(got)) === 'pending') {
        await clock.advance(1);
        waited++;
      }
      delays.push(waited);
      q.done('k');
    }
    assert.deepEqual(delays, [5, 10, 20, 40]);
    assert.equal(q.retries('k'), 4);
    q.forget('k');
    assert.equal(q.retries('k'), 0);
  });

  test('addAfter delays a key; the earliest pending addAfter wins', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock });
    q.addAfter('k', 1000);
    q.addAfter('k', 200);
    q.addAfter('k', 5000);
    const got = q.get();
    await clock.advance(199);
    assert.equal(await peek(got), 'pending');
    await clock.advance(1);
    assert.equal(await got, 'k');
    q.done('k');
    await clock.advance(10_000);
    assert.equal(q.length, 0, 'the later addAfter calls were absorbed');
  });

  test('shutdown stops handing out work and waits for in-flight keys', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    q.add('a');
    q.add('b');
    const key = await q.get();
    const waiting = q.get();
    const idle = q.get();
    assert.equal(await waiting, 'b');
    const stopped = q.shutDown();
    assert.equal(await idle, undefined, 'blocked getters are released');
    assert.equal(await peek(stopped), 'pending', 'shutdown waits for in-flight keys');
    q.done(key!);
    assert.equal(await peek(stopped), 'pending');
    q.done('b');
    await stopped;
    assert.equal(await q.get(), undefined);
    q.add('c');
    assert.equal(q.length, 0, 'no adds after shutdown');
  });

  test('a getter whose signal aborts leaves without taking a key', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    const ac = new AbortController();
    const got = q.get(ac.signal);
    ac.abort();
    assert.equal(await got, undefined);
    q.add('k');
    assert.equal(q.length, 1, 'the key stays for the next worker');
  });

  test('metrics hooks see adds, depth, latency, work duration and retries', async () => {
    const clock = new FakeClock();
    const seen = { adds: 0, depth: [] as number[], latency: [] as number[], work: [] as number[], retries: 0 };
    const q = new WorkQueue({
      clock,
      rateLimiter: new ItemExponentialRateLimiter(),
      metrics: {
        added: () => seen.adds++,
        depth: (n) => seen.depth.push(n),
        queueLatency: (s) => seen.latency.push(s),
        workDuration: (s) => seen.work.push(s),
        retried: () => seen.retries++,
      },
    });
    q.add('k');
    q.add('k');
    await clock.advance(2000);
    const k = await q.get();
    await clock.advance(500);
    q.done(k!);
    q.addRateLimited('k');
    assert.equal(seen.adds, 1);
    assert.deepEqual(seen.latency, [2]);
    assert.deepEqual(seen.work, [0.5]);
    assert.equal(seen.retries, 1);
    assert.deepEqual(seen.depth, [1, 0]);
  });
});
