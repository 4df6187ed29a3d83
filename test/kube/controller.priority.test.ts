// The controller queues keys by priority (issue #24.2): with one worker busy and hundreds of keys waiting
// from the initial list, a metadata-only change or a periodic requeue, a new object is the next one run.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../kube/clock.ts';
import { Manager } from '../../kube/manager.ts';
import { DONE, requeueAfter } from '../../kube/reconciler.ts';
import { VAULT_POLICIES } from '../../schemas/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';
import { until, vp } from './fixtures.ts';

/** A one-worker controller whose reconciles wait while `hold` is set; `runs` lists the keys in order. */
function setup(kube: FakeKubeClient, periodic: Set<string>, clock?: FakeClock) {
  const mgr = new Manager({ client: kube, informer: { resyncMs: 0 }, ...(clock ? { clock } : {}) });
  const runs: string[] = [];
  let release: (() => void) | undefined;
  let hold: Promise<void> | undefined;
  const gate = {
    close: (): void => {
      hold = new Promise<void>((r) => {
        release = r;
      });
    },
    open: (): void => {
      hold = undefined;
      release?.();
    },
  };
  mgr
    .controller('prio')
    .for(VAULT_POLICIES)
    .workers(1)
    .complete(async (key) => {
      runs.push(key);
      if (hold) await hold;
      if (periodic.delete(key)) return requeueAfter(30_000); // once: its "refresh" comes due later
      return DONE;
    });
  return { mgr, runs, gate };
}

describe('controller priorities', () => {
  test('a new object runs before the initial list, a force-sync-like change before the initial list', async () => {
    const kube = new FakeKubeClient();
    for (let i = 0; i < 300; i++) await kube.create(VAULT_POLICIES, vp(`old-${i}`));
    const { mgr, runs, gate } = setup(kube, new Set());
    gate.close();
    await mgr.start();
    await until(() => runs.length === 1, 'the first reconcile');
    assert.equal(runs[0], 'default/old-0');
    await kube.patch(
      VAULT_POLICIES,
      'old-250',
      'default',
      { metadata: { annotations: { 'external-secrets.io/force-sync': '1' } } },
      'merge',
    );
    await kube.create(VAULT_POLICIES, vp('new'));
    await until(() => mgr.status().controllers.some((c) => c.queued === 300), 'the new key queued');
    gate.open();
    await until(() => runs.length === 301, 'every key');
    assert.deepEqual(runs.slice(0, 4), ['default/old-0', 'default/new', 'default/old-250', 'default/old-1']);
    await mgr.stop();
  });

  test('a new object runs before due periodic requeues', async () => {
    const kube = new FakeKubeClient();
    const periodic = new Set(Array.from({ length: 200 }, (_, i) => `default/p-${i}`));
    const clock = new FakeClock();
    const { mgr, runs, gate } = setup(kube, periodic, clock);
    await mgr.start();
    for (let i = 0; i < 200; i++) await kube.create(VAULT_POLICIES, vp(`p-${i}`));
    await until(() => runs.length === 200 && mgr.status().controllers.every((c) => c.inFlight === 0), 'the first sync');
    gate.close();
    await kube.create(VAULT_POLICIES, vp('blocker'));
    await until(() => runs.at(-1) === 'default/blocker', 'the worker busy');
    await clock.advance(30_000); // every requeue-after is due and queued
    await until(() => mgr.status().controllers.some((c) => c.queued === 200), 'the requeues queued');
    await kube.create(VAULT_POLICIES, vp('created'));
    gate.open();
    await until(() => runs.length === 402, 'the refreshes');
    assert.equal(runs[201], 'default/created', 'the new object first');
    assert.equal(runs[202], 'default/p-0');
    await mgr.stop();
  });
});
