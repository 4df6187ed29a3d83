import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { applyOwned } from '../../kube/apply.ts';
import { setCondition } from '../../kube/conditions.ts';
import { KubeApiError } from '../../kube/errors.ts';
import { withFinalizer } from '../../kube/finalizer.ts';
import { startHealthServer } from '../../kube/health.ts';
import { Manager } from '../../kube/manager.ts';
import { objectKey, splitKey, type KubeObject } from '../../kube/objects.ts';
import { ItemExponentialRateLimiter } from '../../kube/rate-limiter.ts';
import { DONE, type ReconcileContext } from '../../kube/reconciler.ts';
import { NEVER, ReconcileError, retryAfter } from '../../kube/reconcile-error.ts';
import { CONFIGMAPS, LEASES } from '../../kube/resources.ts';
import { VAULT_POLICIES, VAULT_ROLE_BINDINGS } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

interface VRB extends KubeObject {
  spec: { policies: string[] };
}

/** Resolves when `pred` holds, re-checked whenever `poke` is called. */
function waiter(): { poke: () => void; until: (pred: () => boolean) => Promise<void> } {
  const ws: (() => void)[] = [];
  return {
    poke: () => {
      for (const w of ws.splice(0)) w();
    },
    until: async (pred) => {
      while (!pred()) await new Promise<void>((r) => ws.push(r));
    },
  };
}

const vp = (name: string): KubeObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: 'default' },
  spec: { policy: 'p' },
});

describe('manager + controller', () => {
  test('reconciles primaries, owned objects map to their owner, watched kinds map through an index', async () => {
    const kube = new FakeKubeClient();
    const mgr = new Manager({ client: kube, informer: { resyncMs: 0 } });
    const w = waiter();
    const runs: string[] = [];
    let concurrent = 0;
    let maxConcurrent = 0;
    mgr
      .controller('vaultpolicy')
      .for(VAULT_POLICIES)
      .owns(CONFIGMAPS)
      .withIndex('bound-policy', (o) => (o as VRB).spec?.policies?.map((p) => `${o.metadata.namespace}/${p}`) ?? [])
      .watches(VAULT_ROLE_BINDINGS, (o) => (o as VRB).spec.policies.map((p) => `${o.metadata.namespace}/${p}`))
      .workers(4)
      .complete(async (key, ctx) => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        try {
          runs.push(key);
          const obj = ctx.cache(VAULT_POLICIES).get(key);
          if (!obj) return DONE;
          if (obj.metadata.labels?.i) runs.push(`${key}@${obj.metadata.labels.i}`);
          return await withFinalizer(ctx.client, VAULT_POLICIES, obj, {
            apply: async (o) => {
              await applyOwned(
                ctx.client,
                CONFIGMAPS,
                {
                  metadata: { name: `${o.metadata.name}-rendered`, namespace: o.metadata.namespace },
                  data: { policy: 'p' },
                },
                { owner: { res: VAULT_POLICIES, obj: o } },
              );
              const conditions = setCondition(
                (o.status as { conditions?: [] } | undefined)?.conditions,
                { type: 'Ready', status: 'True', reason: 'Synced', message: 'ok' },
                o.metadata.generation,
              );
              await applyStatus(ctx.client, VAULT_POLICIES, o, {
                observedGeneration: o.metadata.generation,
                conditions,
              });
              return DONE;
            },
            cleanup: (o) => {
              runs.push(`cleanup:${objectKey(o)}`);
              return Promise.resolve();
            },
          });
        } finally {
          concurrent--;
          w.poke();
        }
      });
    await mgr.start();
    assert.equal(mgr.status().synced, true);

    await kube.create(VAULT_POLICIES, vp('a'));
    await w.until(
      () =>
        (mgr.cache(VAULT_POLICIES).get('default/a')?.status as { observedGeneration?: number } | undefined)
          ?.observedGeneration === 1,
    );
    assert.ok(await kube.get(CONFIGMAPS, 'a-rendered', 'default'));

    // An owned object deleted behind our back is recreated (owns → owner key).
    const before = runs.length;
    await kube.delete(CONFIGMAPS, 'a-rendered', 'default');
    await w.until(() => runs.length > before && mgr.cache(CONFIGMAPS).get('default/a-rendered') !== undefined);

    // A VaultRoleBinding naming the policy enqueues it.
    const beforeVrb = runs.length;
    await kube.create(VAULT_ROLE_BINDINGS, {
      metadata: { name: 'rb', namespace: 'default' },
      spec: { policies: ['a'], serviceAccounts: ['x'] },
    });
    await w.until(() => runs.slice(beforeVrb).includes('default/a'));

    // Deletion runs cleanup, the finalizer goes, the object and its owned ConfigMap go.
    await kube.delete(VAULT_POLICIES, 'a', 'default');
    await w.until(() => runs.includes('cleanup:default/a') && mgr.cache(VAULT_POLICIES).get('default/a') === undefined);
    assert.equal(await kube.get(CONFIGMAPS, 'a-rendered', 'default'), undefined);

    // Many changes to one key never run it concurrently, though there are 4 workers.
    await kube.create(VAULT_POLICIES, vp('busy'));
    for (let i = 0; i < 20; i++)
      await kube.patch(VAULT_POLICIES, 'busy', 'default', { metadata: { labels: { i: String(i) } } }, 'merge');
    await w.until(() => runs.includes('default/busy@19'));
    assert.equal(maxConcurrent, 1);
    await mgr.stop();
  });

  test('errors retry with backoff, terminal errors do not, retry-after errors once after their delay, conflicts are not counted as errors', async () => {
    const kube = new FakeKubeClient();
    const mgr = new Manager({
      client: kube,
      informer: { resyncMs: 0 },
      rateLimiter: () => new ItemExponentialRateLimiter(1, 10),
    });
    const w = waiter();
    const attempts = new Map<string, number>();
    const seenRetries: number[] = [];
    const laterRetries: number[] = [];
    let laterFailedAt = 0;
    let laterDelay = 0;
    mgr
      .controller('flaky')
      .for(VAULT_POLICIES)
      .complete((key, ctx) => {
        const n = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, n);
        w.poke();
        const { name } = splitKey(key);
        if (name === 'retry') {
          seenRetries.push(ctx.retries);
          if (n <= 2) return Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'try later'));
        }
        if (name === 'terminal')
          return Promise.reject(new ReconcileError('PolicyInvalid', 'path sys/* is forbidden', NEVER));
        if (name === 'later') {
          laterRetries.push(ctx.retries);
          if (n === 1) {
            laterFailedAt = Date.now();
            return Promise.reject(
              new ReconcileError('SecretMissing', 'target Secret s does not exist', retryAfter(150)),
            );
          }
          laterDelay = Date.now() - laterFailedAt;
        }
        if (name === 'conflict' && n === 1)
          return Promise.reject(new KubeApiError(409, 'Conflict', 'the object has been modified'));
        return Promise.resolve(DONE);
      });
    await mgr.start();
    for (const n of ['retry', 'terminal', 'conflict', 'later']) await kube.create(VAULT_POLICIES, vp(n));
    await w.until(
      () =>
        attempts.get('default/retry') === 3 &&
        attempts.get('default/conflict') === 2 &&
        attempts.get('default/terminal') === 1 &&
        attempts.get('default/later') === 2,
    );
    assert.deepEqual(seenRetries, [0, 1, 2], 'ctx.retries counts consecutive failures');
    const metrics = await mgr.metrics.registry.getSingleMetricAsString('controller_runtime_reconcile_errors_total');
    assert.match(
      metrics,
      /controller_runtime_reconcile_errors_total\{controller="flaky"\} 4/,
      '2 transient + 1 terminal + 1 retry-after, no conflict',
    );
    assert.ok(
      laterDelay >= 140,
      `a retry-after error runs again after its delay, not with the backoff (1 ms): ${laterDelay} ms`,
    );
    assert.deepEqual(laterRetries, [0, 0], 'a retry-after error counts no backoff');
    assert.match(
      await mgr.metrics.registry.getSingleMetricAsString('controller_runtime_terminal_reconcile_errors_total'),
      /\{controller="flaky"\} 1/,
    );
    await mgr.stop();
    assert.equal(attempts.get('default/terminal'), 1, 'terminal errors are not retried');
  });

  test('graceful shutdown waits for the in-flight reconcile and takes no new work', async () => {
    const kube = new FakeKubeClient();
    const mgr = new Manager({ client: kube, informer: { resyncMs: 0 } });
    const w = waiter();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const started: string[] = [];
    let finished = 0;
    let sawAbort = false;
    mgr
      .controller('slow')
      .for(VAULT_POLICIES)
      .complete(async (key, ctx: ReconcileContext) => {
        started.push(key);
        w.poke();
        await gate;
        sawAbort = ctx.signal.aborted;
        finished++;
        return DONE;
      });
    await mgr.start();
    await kube.create(VAULT_POLICIES, vp('one'));
    await w.until(() => started.length === 1);
    await kube.create(VAULT_POLICIES, vp('two'));
    let stopped = false;
    const stopping = mgr.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(stopped, false, 'stop waits for the in-flight reconcile');
    release();
    await stopping;
    assert.equal(finished, 1);
    assert.equal(sawAbort, false, 'a graceful stop does not abort the reconcile');
    assert.deepEqual(started, ['default/one'], 'no new work after stop');
  });

  test('with leader election, workers run only on the leader; standbys keep a warm cache', async () => {
    const kube = new FakeKubeClient();
    const le = {
      namespace: 'default',
      name: 'vaultgate-controller',
      leaseDurationMs: 1200,
      renewDeadlineMs: 800,
      retryPeriodMs: 100,
    };
    const w = waiter();
    const runsBy: Record<string, string[]> = { a: [], b: [] };
    const make = (id: 'a' | 'b'): Manager => {
      const m = new Manager({ client: kube, informer: { resyncMs: 0 }, leaderElection: { ...le, identity: id } });
      m.controller('c')
        .for(VAULT_POLICIES)
        .complete((key) => {
          runsBy[id]!.push(key);
          w.poke();
          return Promise.resolve(DONE);
        });
      return m;
    };
    await kube.create(VAULT_POLICIES, vp('x'));
    const a = make('a');
    await a.start();
    await w.until(() => runsBy.a!.length === 1);
    const b = make('b');
    await b.start();
    assert.equal(b.status().leader, 'standby');
    assert.equal(b.status().synced, true, 'standby cache is warm');
    assert.equal(b.cache(VAULT_POLICIES).size, 1);
    assert.deepEqual(runsBy.b, []);
    // the leader leaves gracefully: the standby takes over and works through its queued keys
    await a.stop();
    await w.until(() => runsBy.b!.includes('default/x'));
    assert.equal(b.status().leader, 'leader');
    assert.equal(
      (await kube.get(LEASES, le.name, 'default'))?.spec &&
        ((await kube.get(LEASES, le.name, 'default'))!.spec as { holderIdentity: string }).holderIdentity,
      'b',
    );
    await b.stop();
  });

  test('a label selector on owns(): only matching objects are cached; one that stops matching leaves the cache and enqueues its owner', async () => {
    const kube = new FakeKubeClient();
    const mgr = new Manager({ client: kube, informer: { resyncMs: 0 } });
    const w = waiter();
    const runs: string[] = [];
    mgr
      .controller('selected')
      .for(VAULT_POLICIES)
      .owns(CONFIGMAPS, { labelSelector: 'app.kubernetes.io/managed-by=vaultgate' })
      .complete((key) => {
        runs.push(key);
        w.poke();
        return Promise.resolve(DONE);
      });
    await kube.create(VAULT_POLICIES, vp('owner'));
    const owner = (await kube.get(VAULT_POLICIES, 'owner', 'default'))!;
    const ownerRef = [
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        name: 'owner',
        uid: owner.metadata.uid!,
        controller: true,
      },
    ];
    const cm = (name: string, labels: Record<string, string>): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default', labels, ownerReferences: ownerRef },
      data: {},
    });
    await kube.create(CONFIGMAPS, cm('ours', { 'app.kubernetes.io/managed-by': 'vaultgate' }));
    await kube.create(CONFIGMAPS, cm('theirs', { 'app.kubernetes.io/managed-by': 'helm' }));
    await mgr.start();
    assert.deepEqual(mgr.cache(CONFIGMAPS).keys(), ['default/ours'], 'the unlabelled ConfigMap is never listed');
    assert.equal(
      mgr.status().informers.find((i) => i.resource === 'core/v1/configmaps')?.labelSelector,
      'app.kubernetes.io/managed-by=vaultgate',
    );
    await w.until(() => runs.length >= 1);

    // Removing the label: the watch reports a delete, the cache drops it, the owner is reconciled.
    const before = runs.length;
    await kube.patch(
      CONFIGMAPS,
      'ours',
      'default',
      { metadata: { labels: { 'app.kubernetes.io/managed-by': null } } },
      'merge',
    );
    await w.until(() => runs.length > before && mgr.cache(CONFIGMAPS).size === 0);
    assert.equal(runs.at(-1), 'default/owner');
    // Labelling one: it enters the cache.
    await kube.patch(
      CONFIGMAPS,
      'theirs',
      'default',
      { metadata: { labels: { 'app.kubernetes.io/managed-by': 'vaultgate' } } },
      'merge',
    );
    await w.until(() => mgr.cache(CONFIGMAPS).get('default/theirs') !== undefined);
    await mgr.stop();
  });

  test('one informer per resource: declaring it again with other selectors is a wiring error', () => {
    const mgr = new Manager({ client: new FakeKubeClient() });
    mgr
      .controller('a')
      .for(VAULT_POLICIES)
      .owns(CONFIGMAPS, { labelSelector: 'x=1' })
      .complete(() => Promise.resolve(DONE));
    assert.throws(
      () =>
        mgr
          .controller('b')
          .for(VAULT_ROLE_BINDINGS)
          .owns(CONFIGMAPS)
          .complete(() => Promise.resolve(DONE)),
      /already watched with labelSelector "x=1"; cannot also watch it with no selector/,
    );
    assert.throws(
      () => mgr.informer(CONFIGMAPS, { labelSelector: 'x=2' }),
      /cannot also watch it with labelSelector "x=2"/,
    );
    assert.equal(
      mgr.informer(CONFIGMAPS).opts.labelSelector,
      'x=1',
      'a lookup without selectors returns the shared informer',
    );
  });

  test('leader tasks run while leading: the signal aborts on stop, and stop waits for them to return', async () => {
    const mgr = new Manager({ client: new FakeKubeClient(), informer: { resyncMs: 0 } });
    const log: string[] = [];
    mgr
      .controller('c')
      .for(VAULT_POLICIES)
      .complete(() => Promise.resolve(DONE));
    mgr.addLeaderTask('keeper', async (signal) => {
      log.push('started');
      await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
      await Promise.resolve();
      log.push('returned');
    });
    assert.throws(() => mgr.addLeaderTask('keeper', () => Promise.resolve()), /already registered/);
    await mgr.start();
    assert.deepEqual(log, ['started'], 'without leader election the task starts with the workers');
    assert.throws(() => mgr.addLeaderTask('late', () => Promise.resolve()), /before start/);
    await mgr.stop();
    assert.deepEqual(log, ['started', 'returned']);
  });

  test('health server: /healthz, /readyz after sync, /metrics in Prometheus format', async () => {
    const kube = new FakeKubeClient();
    const mgr = new Manager({ client: kube, informer: { resyncMs: 0 } });
    mgr
      .controller('c')
      .for(VAULT_POLICIES)
      .complete(() => Promise.resolve(DONE));
    const health = await startHealthServer({ registry: mgr.metrics.registry, status: () => mgr.status() });
    try {
      const get = (p: string) => fetch(`http://127.0.0.1:${health.port}${p}`);
      assert.equal((await get('/healthz')).status, 200);
      assert.equal((await get('/readyz')).status, 503, 'not ready before the caches sync');
      await mgr.start();
      const ready = await get('/readyz');
      assert.equal(ready.status, 200);
      assert.equal(((await ready.json()) as { leader: string }).leader, 'disabled');
      const metrics = await (await get('/metrics')).text();
      assert.match(metrics, /workqueue_depth\{name="c"\}/);
      assert.match(metrics, /vaultgate_informer_synced\{resource="vaultgate.io\/v1alpha1\/vaultpolicies"\} 1/);
      assert.equal((await get('/nope')).status, 404);
    } finally {
      await health.close();
      await mgr.stop();
    }
  });
});
