// The coordinator on a real Manager (informers, caches, work queue) over the in-memory apiserver: what a
// user sees on their Deployment when the Secret an opted-in ExternalSecret writes changes, or does not.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { RolloutCoordinator, type SettledState } from '../../../controller/rollouts/coordinator.ts';
import { HmacKeyring } from '../../../controller/rollouts/hmac.ts';
import { RECORD_ANNOTATION, TEMPLATE_ANNOTATION } from '../../../controller/rollouts/plan.ts';
import { externalSecretSource } from '../../../controller/rollouts/sources.ts';
import type { EventInput, EventRecorder } from '../../../kube/events.ts';
import { Manager } from '../../../kube/manager.ts';
import { secretDigests } from '../../../kube/cache-transform.ts';
import { dataHash } from '../../../eso/target.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { DEPLOYMENTS, SECRETS, STATEFULSETS, DAEMONSETS } from '../../../kube/resources.ts';
import { EXTERNAL_SECRETS } from '../../../schemas/resources.ts';
import { FakeKubeClient } from '../../sim/kube-fake-client.ts';

const MANAGED = 'reconcile.external-secrets.io/managed=true';
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function world(): FakeKubeClient {
  const kube = new FakeKubeClient({ namespaces: ['default', 'team-a', 'vaultgate-system'] });
  for (const r of [DEPLOYMENTS, STATEFULSETS, DAEMONSETS])
    kube.store.register({
      ...r,
      statusSubresource: true,
      custom: true,
      singular: r.kind.toLowerCase(),
      shortNames: [],
    });
  return kube;
}

function start(kube: FakeKubeClient, policy = { coalesceMs: 150, cooldownMs: 400, maxConcurrent: 1 }) {
  const events: { object: string; event: EventInput }[] = [];
  const recorder: EventRecorder = {
    record: (o, event) => events.push({ object: `${o.kind}/${o.metadata.name}`, event }),
  };
  const registry = new Registry();
  // The Secret cache keeps digests, not values, as controller/main.ts configures it.
  const mgr = new Manager({
    client: kube,
    informer: { resyncMs: 0 },
    events: recorder,
    cacheTransforms: [{ resource: SECRETS, transform: secretDigests(dataHash) }],
  });
  // As in controller/main.ts: the ExternalSecret controller declares the Secret informer with this selector first.
  mgr.informer(EXTERNAL_SECRETS);
  mgr.informer(SECRETS, { labelSelector: MANAGED });
  const coordinator = new RolloutCoordinator({
    client: kube,
    keyring: new HmacKeyring(kube, 'vaultgate-system'),
    sources: [externalSecretSource],
    secretSelector: MANAGED,
    policy,
    registry,
  });
  coordinator.register(mgr, 2);
  return { mgr, coordinator, events, registry, started: mgr.start() };
}

const deployment = (name: string, ns = 'team-a'): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns },
  spec: {
    replicas: 1,
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  },
});
const es = (name: string, targets: string, ns = 'team-a'): KubeObject => ({
  apiVersion: 'external-secrets.io/v1',
  kind: 'ExternalSecret',
  metadata: { name, namespace: ns, annotations: { 'vaultgate.io/rollout-restart-targets': targets } },
  spec: { secretStoreRef: { name: 'vault' }, target: { name } },
});
const secret = (name: string, password: string, ns = 'team-a'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: ns, labels: { 'reconcile.external-secrets.io/managed': 'true' } },
  data: { password: b64(password) },
});

async function get(kube: FakeKubeClient, name: string, ns = 'team-a'): Promise<KubeObject> {
  return (await kube.get(DEPLOYMENTS, name, ns))!;
}
const templateValue = (d: KubeObject): string | undefined =>
  (d.spec as { template: { metadata?: { annotations?: Record<string, string> } } }).template.metadata?.annotations?.[
    TEMPLATE_ANNOTATION
  ];
/** What the Deployment controller would write once every pod runs the current template. */
async function rolledOut(kube: FakeKubeClient, name: string, ns = 'team-a'): Promise<void> {
  const d = await get(kube, name, ns);
  await kube.patch(
    DEPLOYMENTS,
    name,
    ns,
    {
      status: {
        observedGeneration: d.metadata.generation,
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
      },
    },
    'merge',
    { subresource: 'status' },
  );
}
async function setPassword(kube: FakeKubeClient, name: string, password: string, ns = 'team-a'): Promise<void> {
  await kube.patch(SECRETS, name, ns, { data: { password: b64(password) } }, 'merge');
}
const patchesOf = (kube: FakeKubeClient, plural: string): number =>
  kube.calls.filter((c) => c.verb === 'patch' && c.resource === plural && !c.subresource).length;
async function metric(registry: Registry, name: string): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return (m?.values ?? [])
    .filter((v) => !('metricName' in v) || v.metricName === name || v.metricName === `${name}_count`)
    .reduce((a, v) => a + v.value, 0);
}

void describe('controller/rollouts/coordinator', () => {
  void test('first sight records without a restart; a change restarts once; unchanged data and a controller restart restart nothing', async () => {
    const kube = world();
    await kube.create(DEPLOYMENTS, deployment('app'));
    await rolledOut(kube, 'app');
    await kube.create(SECRETS, secret('db', 'one'));
    await kube.create(EXTERNAL_SECRETS, es('db', 'deployment/app'));
    let c = start(kube);
    await c.started;
    const adopted = await until('the record', async () =>
      (await get(kube, 'app')).metadata.annotations?.[RECORD_ANNOTATION] ? get(kube, 'app') : undefined,
    );
    assert.equal(templateValue(adopted), undefined, 'no restart at first sight');
    assert.equal(adopted.metadata.generation, 1);
    assert.equal(await c.coordinator.settled('team-a', [{ kind: 'Deployment', name: 'app' }], 'db'), 'settled');

    await setPassword(kube, 'db', 'two');
    const restarted = await until('the restart', async () =>
      (await get(kube, 'app')).metadata.generation === 2 ? get(kube, 'app') : undefined,
    );
    const value = templateValue(restarted)!;
    assert.match(value, /^v1\.[A-Za-z0-9_-]{43}$/);
    assert.ok(!value.includes(b64('two')));
    assert.equal(
      await c.coordinator.settled('team-a', [{ kind: 'Deployment', name: 'app' }], 'db'),
      'rolling',
      'restarted, not rolled out yet',
    );
    await rolledOut(kube, 'app');
    await until(
      'settled',
      async () => (await c.coordinator.settled('team-a', [{ kind: 'Deployment', name: 'app' }], 'db')) === 'settled',
    );
    assert.equal(await metric(c.registry, 'vaultgate_rollout_restarts_total'), 1);
    await until(
      'the rollout duration measured',
      async () => (await metric(c.registry, 'vaultgate_rollout_duration_seconds')) === 1,
    );
    assert.deepEqual(
      c.events
        .filter((e) => e.event.reason === 'RolloutRestarted')
        .map((e) => e.object)
        .sort(),
      ['Deployment/app', 'ExternalSecret/db'],
    );
    assert.ok(c.events.every((e) => !e.event.note.includes('two') && !e.event.note.includes(b64('two'))));

    // The same data written again (a resync, a refresh): nothing.
    const before = patchesOf(kube, 'deployments');
    await kube.patch(
      SECRETS,
      'db',
      'team-a',
      { metadata: { annotations: { touched: 'yes' } }, data: { password: b64('two') } },
      'merge',
    );
    await sleep(700);
    assert.equal(patchesOf(kube, 'deployments'), before);

    // A restarted controller (new process: new manager, new keyring reading the same key): nothing.
    await c.mgr.stop();
    c = start(kube);
    await c.started;
    await sleep(700);
    assert.equal(patchesOf(kube, 'deployments'), before, 'a controller restart restarts nothing');
    assert.equal((await get(kube, 'app')).metadata.generation, 2);
    assert.equal(await c.coordinator.settled('team-a', [{ kind: 'Deployment', name: 'app' }], 'db'), 'settled');
    await c.mgr.stop();
  });

  void test('two changes in one millisecond are two values; within the window they make one restart; the cool-down delays the next', async () => {
    const kube = world();
    await kube.create(DEPLOYMENTS, deployment('app'));
    await rolledOut(kube, 'app');
    await kube.create(SECRETS, secret('db', 'one'));
    await kube.create(SECRETS, secret('tls', 'cert-1'));
    await kube.create(EXTERNAL_SECRETS, es('db', 'deployment/app'));
    await kube.create(EXTERNAL_SECRETS, es('tls', 'deploy/app'));
    const c = start(kube, { coalesceMs: 300, cooldownMs: 1_500, maxConcurrent: 1 });
    await c.started;
    await until('the record', async () => (await get(kube, 'app')).metadata.annotations?.[RECORD_ANNOTATION]);
    await Promise.all([setPassword(kube, 'db', 'two'), setPassword(kube, 'tls', 'cert-2')]);
    const first = await until('one restart', async () =>
      (await get(kube, 'app')).metadata.generation === 2 ? get(kube, 'app') : undefined,
    );
    await rolledOut(kube, 'app');
    await sleep(400);
    assert.equal((await get(kube, 'app')).metadata.generation, 2, 'two Secrets changed, one restart');
    assert.equal(await metric(c.registry, 'vaultgate_rollout_coalesced_total'), 0, 'one state seen: nothing folded');

    const t0 = Date.now();
    await setPassword(kube, 'db', 'three');
    await setPassword(kube, 'db', 'four');
    const second = await until('the second restart', async () =>
      (await get(kube, 'app')).metadata.generation === 3 ? get(kube, 'app') : undefined,
    );
    assert.ok(Date.now() - t0 >= 900, `the cool-down held the second restart (${Date.now() - t0} ms)`);
    assert.notEqual(templateValue(second), templateValue(first));
    await rolledOut(kube, 'app');
    await sleep(400);
    assert.equal((await get(kube, 'app')).metadata.generation, 3);
    assert.equal(await metric(c.registry, 'vaultgate_rollout_restarts_total'), 2);
    await c.mgr.stop();
  });

  void test('paused Deployment: an Event and settled() says paused, no patch; resumed, it restarts', async () => {
    const kube = world();
    await kube.create(DEPLOYMENTS, {
      ...deployment('app'),
      spec: { ...(deployment('app').spec as object), paused: true },
    });
    await rolledOut(kube, 'app');
    await kube.create(SECRETS, secret('db', 'one'));
    await kube.create(EXTERNAL_SECRETS, es('db', 'deployment/app'));
    const c = start(kube);
    await c.started;
    await until('the record', async () => (await get(kube, 'app')).metadata.annotations?.[RECORD_ANNOTATION]);
    await setPassword(kube, 'db', 'two');
    await until('the paused Event', () =>
      c.events.find((e) => e.event.reason === 'RolloutPaused' && e.object === 'Deployment/app'),
    );
    assert.equal(await c.coordinator.settled('team-a', [{ kind: 'Deployment', name: 'app' }], 'db'), 'paused');
    assert.equal((await get(kube, 'app')).metadata.generation, 1);
    await kube.patch(DEPLOYMENTS, 'app', 'team-a', { spec: { paused: false } }, 'merge');
    await rolledOut(kube, 'app'); // the Deployment controller observes the resume
    await until('the restart after resume', async () => templateValue(await get(kube, 'app')));
    await c.mgr.stop();
  });

  void test('cap: with maxConcurrent 1, a second workload waits until the first rolled out; settled() names a missing target', async () => {
    const kube = world();
    for (const n of ['a1', 'a2']) {
      await kube.create(DEPLOYMENTS, deployment(n));
      await rolledOut(kube, n);
    }
    await kube.create(SECRETS, secret('db', 'one'));
    await kube.create(EXTERNAL_SECRETS, es('db', 'deployment/a1,deployment/a2,deployment/gone'));
    const c = start(kube, { coalesceMs: 50, cooldownMs: 0, maxConcurrent: 1 });
    await c.started;
    await until(
      'both recorded',
      async () =>
        (await get(kube, 'a1')).metadata.annotations?.[RECORD_ANNOTATION] &&
        (await get(kube, 'a2')).metadata.annotations?.[RECORD_ANNOTATION],
    );
    const targets = [
      { kind: 'Deployment' as const, name: 'a1' },
      { kind: 'Deployment' as const, name: 'a2' },
    ];
    assert.equal(
      await c.coordinator.settled('team-a', [...targets, { kind: 'Deployment', name: 'gone' }], 'db'),
      'missing',
    );
    await setPassword(kube, 'db', 'two');
    const gens = async (): Promise<number[]> => [
      (await get(kube, 'a1')).metadata.generation!,
      (await get(kube, 'a2')).metadata.generation!,
    ];
    await until('one restart', async () => (await gens()).includes(2));
    await sleep(500);
    const g = await gens();
    assert.deepEqual(g.sort(), [1, 2], 'the other waits for the cap');
    const first = (await get(kube, 'a1')).metadata.generation === 2 ? 'a1' : 'a2';
    assert.equal(await c.coordinator.settled('team-a', targets, 'db'), 'rolling');
    await rolledOut(kube, first);
    await until('the second restart', async () => (await gens()).every((x) => x === 2), 15_000);
    await rolledOut(kube, first === 'a1' ? 'a2' : 'a1');
    await until('settled', async () => (await c.coordinator.settled('team-a', targets, 'db')) === 'settled');
    await c.mgr.stop();
  });
});

export type { SettledState };
