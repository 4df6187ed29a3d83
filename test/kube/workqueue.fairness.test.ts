// A fair share of the workers per namespace (issue #20: a tenant must never stall the work of other
// namespaces). Seen on the real tier under load: team-h's 27 hostile ExternalSecrets, each waiting its turn
// in the render pool (one render per namespace at a time, up to its 2 s deadline), held every reconcile
// worker, and team-q's new ExternalSecrets waited 23-42 s for one. With fairness a namespace holds at most
// its share while another namespace's key waits; with nothing else waiting it may use every worker.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../kube/clock.ts';
import { namespaceOfKey, Priority, WorkQueue } from '../../kube/workqueue.ts';

const fair = (maxInFlight: number): WorkQueue =>
  new WorkQueue({ clock: new FakeClock(), fairness: { partition: namespaceOfKey, maxInFlight } });

/** Take up to `n` keys without finishing them (workers busy with them). */
async function take(q: WorkQueue, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n && q.length > 0; i++) out.push((await q.get())!);
  return out;
}

void describe('work queue fairness between namespaces', () => {
  void test("a namespace with 100 waiting keys holds its share; the other namespace's key is next", async () => {
    const q = fair(2);
    for (let i = 0; i < 100; i++) q.add(`team-h/es-${i}`);
    q.add('team-q/new');
    assert.deepEqual(await take(q, 3), ['team-h/es-0', 'team-h/es-1', 'team-q/new']);
  });

  void test('without fairness (the bug): the other namespace waits behind all 100', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    for (let i = 0; i < 100; i++) q.add(`team-h/es-${i}`);
    q.add('team-q/new');
    assert.ok(!(await take(q, 4)).includes('team-q/new'));
  });

  void test('work-conserving: with nothing else waiting, one namespace uses every worker, in order', async () => {
    const q = fair(2);
    for (let i = 0; i < 6; i++) q.add(`ns/k${i}`);
    assert.deepEqual(await take(q, 6), ['ns/k0', 'ns/k1', 'ns/k2', 'ns/k3', 'ns/k4', 'ns/k5']);
  });

  void test('a key set aside keeps its priority: a new key of the busy namespace goes before its refreshes', async () => {
    const q = fair(1);
    for (let i = 0; i < 5; i++) q.add(`a/refresh-${i}`, Priority.Low);
    q.add('b/x', Priority.Low);
    const first = await take(q, 2); // a/refresh-0 in flight; a/refresh-1..4 set aside; b/x
    assert.deepEqual(first, ['a/refresh-0', 'b/x']);
    q.add('a/new', Priority.High);
    q.done('a/refresh-0');
    assert.deepEqual(await take(q, 1), ['a/new']);
  });

  void test('set-aside keys come back in their order when their namespace frees a worker', async () => {
    const q = fair(1);
    for (let i = 0; i < 3; i++) q.add(`a/k${i}`);
    for (let i = 0; i < 3; i++) q.add(`b/k${i}`);
    const order: string[] = [];
    for (let round = 0; round < 3; round++) {
      const keys = await take(q, 2);
      order.push(...keys);
      for (const k of keys) q.done(k);
    }
    assert.deepEqual(order, ['a/k0', 'b/k0', 'a/k1', 'b/k1', 'a/k2', 'b/k2']);
  });

  void test('a set-aside key raised to a higher priority is handed out once', async () => {
    const q = fair(1);
    q.add('a/k0');
    q.add('a/k1', Priority.Low);
    q.add('b/k0', Priority.Low);
    assert.deepEqual(await take(q, 2), ['a/k0', 'b/k0']); // a/k1 set aside
    q.add('a/k1', Priority.High);
    q.done('a/k0');
    q.done('b/k0');
    assert.deepEqual(await take(q, 5), ['a/k1']);
    assert.equal(q.length, 0);
  });

  void test('cluster-scoped keys are not limited', async () => {
    const q = fair(1);
    for (let i = 0; i < 3; i++) q.add(`policy-${i}`);
    q.add('ns/x');
    assert.deepEqual(await take(q, 4), ['policy-0', 'policy-1', 'policy-2', 'ns/x']);
  });

  void test('10,000 keys of one namespace and 10,000 of another: each namespace always holds about its share', async () => {
    const q = fair(2);
    for (let i = 0; i < 10_000; i++) q.add(`a/${i}`, Priority.Low);
    for (let i = 0; i < 10_000; i++) q.add(`b/${i}`, Priority.Low);
    const inFlight: string[] = await take(q, 4);
    assert.deepEqual(inFlight.map((k) => k[0]).sort(), ['a', 'a', 'b', 'b']);
    let handed = 4;
    while (inFlight.length > 0) {
      q.done(inFlight.shift()!);
      if (q.length > 0) {
        inFlight.push((await q.get())!);
        handed++;
      }
      const a = inFlight.filter((k) => k.startsWith('a/')).length;
      if (handed < 19_990) assert.deepEqual([a, inFlight.length - a], [2, 2], `after ${handed} handed out`);
    }
    assert.equal(handed, 20_000);
  });
});
