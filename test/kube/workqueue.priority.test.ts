// The work queue's priorities (issue #24.2): new or changed objects go ahead of periodic refreshes, the
// initial list and resyncs, as controller-runtime's priority queue, with the queue's other guarantees
// kept (one entry per key, never two runs of one key at once, per-key backoff, the token bucket).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../kube/clock.ts';
import { defaultControllerRateLimiter, ItemExponentialRateLimiter } from '../../kube/rate-limiter.ts';
import { Priority, WorkQueue } from '../../kube/workqueue.ts';

/** Resolve `p` if it settles after letting the event loop turn; else 'pending'. */
async function peek<T>(p: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => setImmediate(() => r('pending'))))]);
}

/** Every key the queue hands out, in order, each done at once. */
async function drain(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.length > 0) {
    const k = (await q.get())!;
    out.push(k);
    q.done(k);
  }
  return out;
}

const { High, Refresh, Low } = Priority;

describe('work queue priorities', () => {
  const cases: Array<{ name: string; adds: Array<[string, number]>; order: string[] }> = [
    {
      name: 'one priority: first in, first out',
      adds: [
        ['a', High],
        ['b', High],
        ['c', High],
      ],
      order: ['a', 'b', 'c'],
    },
    {
      name: 'the default priority is High',
      adds: [
        ['low', Low],
        ['new', NaN],
      ],
      order: ['new', 'low'],
    },
    {
      name: 'higher first, FIFO within each',
      adds: [
        ['l1', Low],
        ['r1', Refresh],
        ['h1', High],
        ['l2', Low],
        ['h2', High],
        ['r2', Refresh],
      ],
      order: ['h1', 'h2', 'r1', 'r2', 'l1', 'l2'],
    },
    {
      name: 'a waiting key added again with a higher priority moves up',
      adds: [
        ['a', Low],
        ['b', Low],
        ['b', High],
      ],
      order: ['b', 'a'],
    },
    {
      name: 'a waiting key added again with a lower priority keeps its place',
      adds: [
        ['a', High],
        ['b', High],
        ['a', Low],
      ],
      order: ['a', 'b'],
    },
    {
      name: 'raised twice, handed out once',
      adds: [
        ['x', Low],
        ['x', Refresh],
        ['x', High],
        ['y', High],
      ],
      order: ['x', 'y'],
    },
    {
      name: 'any integer priority',
      adds: [
        ['a', -7],
        ['b', 3],
        ['c', -7],
        ['d', 100],
      ],
      order: ['d', 'b', 'a', 'c'],
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const q = new WorkQueue({ clock: new FakeClock() });
      for (const [k, p] of c.adds) {
        if (Number.isNaN(p)) q.add(k);
        else q.add(k, p);
      }
      assert.equal(q.length, new Set(c.order).size, 'one entry per key');
      assert.deepEqual(await drain(q), c.order);
    });
  }

  test('a new key goes ahead of 10,000 queued refreshes', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    for (let i = 0; i < 10_000; i++) q.add(`ns/es-${i}`, Refresh);
    q.add('ns/new', High);
    assert.equal(q.length, 10_001);
    const first = (await q.get())!;
    assert.equal(first, 'ns/new');
    q.done(first);
    const rest = await drain(q);
    assert.equal(rest.length, 10_000);
    assert.deepEqual(rest.slice(0, 3), ['ns/es-0', 'ns/es-1', 'ns/es-2'], 'the refreshes keep their order');
  });

  test('a key in flight runs again after done at the highest priority it was added with, never concurrently', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    q.add('k', Low);
    assert.equal(await q.get(), 'k');
    q.add('k', Low);
    q.add('k', High); // changed while in flight
    q.add('other', Refresh);
    const second = q.get();
    assert.equal(await second, 'other', 'k is not handed out while in flight');
    const third = q.get();
    assert.equal(await peek(third), 'pending');
    q.add('low', Low);
    q.done('k');
    q.done('other');
    assert.equal(await third, 'low', 'the waiting getter took what was queued');
    assert.equal(await q.get(), 'k');
    assert.equal(q.inFlightPriority('k'), High, 'handed out with the raised priority');
  });

  test('addAfter carries its priority; the earliest pending one wins and keeps the highest priority', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock });
    q.addAfter('refresh', 1000, Low);
    q.addAfter('refresh', 5000, High); // later: absorbed, but its priority counts
    q.addAfter('other', 1000, Refresh);
    await clock.advance(1000);
    assert.deepEqual(await drain(q), ['refresh', 'other']);
  });

  test('a due requeue-after waits behind new work', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock });
    for (let i = 0; i < 3; i++) q.addAfter(`periodic-${i}`, 100, Low);
    await clock.advance(100);
    q.add('created', High);
    assert.deepEqual(await drain(q), ['created', 'periodic-0', 'periodic-1', 'periodic-2']);
  });

  test('a retry keeps the priority its key was handed out with, and its per-key backoff', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock, rateLimiter: new ItemExponentialRateLimiter(5, 1000_000) });
    q.add('failing-refresh', Low);
    q.add('failing-new', High);
    for (const k of ['failing-new', 'failing-refresh']) {
      assert.equal(await q.get(), k);
      q.addRateLimited(k); // what the controller does when the reconcile throws
      q.done(k);
    }
    await clock.advance(5);
    q.add('plain', Refresh);
    assert.deepEqual(await drain(q), ['failing-new', 'plain', 'failing-refresh']);
    assert.equal(q.retries('failing-new'), 1);
  });

  test('the token bucket drained by low-priority retries does not hold back a high-priority retry', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock, rateLimiter: defaultControllerRateLimiter(clock) });
    // 500 refreshes fail at once (Vault down): the first 100 retry at once, the rest at 10 per second.
    for (let i = 0; i < 500; i++) q.add(`r-${i}`, Low);
    for (let i = 0; i < 500; i++) {
      const k = (await q.get())!;
      q.addRateLimited(k);
      q.done(k);
    }
    // A new ExternalSecret's first attempt fails too (its store is not Ready yet).
    q.add('new', High);
    assert.equal(await q.get(), 'new');
    q.addRateLimited('new');
    q.done('new');
    await clock.advance(5); // its per-key backoff, not the 40 s the low-priority retries queue for
    const next = (await q.get())!;
    assert.equal(next, 'new');
    q.done(next);
    // The low-priority retries still pace at the bucket's rate.
    await clock.advance(1000);
    assert.ok(q.length <= 100 + 10 + 1, `low-priority retries released: ${q.length}`);
  });

  test('length and depth count each waiting key once whatever its priority history', async () => {
    const depth: number[] = [];
    const q = new WorkQueue({
      clock: new FakeClock(),
      metrics: {
        added: () => undefined,
        depth: (n) => depth.push(n),
        queueLatency: () => undefined,
        workDuration: () => undefined,
        retried: () => undefined,
      },
    });
    q.add('a', Low);
    q.add('a', Refresh);
    q.add('a', High);
    q.add('b', Low);
    assert.equal(q.length, 2);
    assert.deepEqual(await drain(q), ['a', 'b']);
    assert.equal(q.length, 0);
    assert.equal(depth.at(-1), 0);
  });

  test('shutdown hands out nothing more, whatever the priority', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    q.add('a', Low);
    q.add('b', High);
    await q.shutDown();
    assert.equal(await q.get(), undefined);
    q.add('c', High);
    assert.equal(q.length, 2, 'nothing is added after shutdown');
  });
});
