// ClusterExternalSecret reconciler on the in-memory Kubernetes: an ExternalSecret per selected namespace
// (by name and by label), ESO's status, a namespace that holds someone else's ExternalSecret of that
// name left alone and listed as failed, deselected namespaces and a renamed externalSecretName cleaned
// up (only what it controls), a refused spec creating nothing, another controller's store leaving it be.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeKube } from './harness.ts';
import { NAMESPACES } from '../../../kube/resources.ts';
import { CLUSTER_EXTERNAL_SECRETS, CLUSTER_SECRET_STORES, EXTERNAL_SECRETS } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { createClusterExternalSecretReconciler } from '../../../controller/reconcilers/clusterexternalsecret.ts';

const ns = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
});
const esSpec = {
  secretStoreRef: { name: 'vault', kind: 'SecretStore' },
  refreshInterval: '1h',
  data: [{ secretKey: 'password', remoteRef: { key: 'shared/db', property: 'password' } }],
};
const ces = (spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'external-secrets.io/v1',
  kind: 'ClusterExternalSecret',
  metadata: { name: 'db' },
  spec: {
    externalSecretName: 'db-credentials',
    namespaces: ['team-a'],
    namespaceSelectors: [{ matchLabels: { db: 'true' } }],
    externalSecretMetadata: { labels: { app: 'db' } },
    externalSecretSpec: esSpec,
    ...spec,
  },
});

function setup(): { kube: FakeKube; run: () => Promise<unknown> } {
  const kube = new FakeKube();
  for (const n of [ns('team-a'), ns('team-b', { db: 'true' }), ns('team-c', { db: 'true' }), ns('other')])
    kube.put(NAMESPACES, n);
  const r = createClusterExternalSecretReconciler({ controllerClass: 'vaultgate', namePrefix: 'vaultgate' });
  return { kube, run: () => kube.reconcile(r, 'db') };
}
const statusOf = (kube: FakeKube): Record<string, unknown> =>
  kube.getObj(CLUSTER_EXTERNAL_SECRETS, 'db')?.status as Record<string, unknown>;
const esNames = (kube: FakeKube): string[] =>
  kube
    .cacheOf(EXTERNAL_SECRETS)
    .list()
    .map((e) => `${e.metadata.namespace}/${e.metadata.name}`)
    .sort();

void describe('ClusterExternalSecret → ExternalSecrets', () => {
  void test("one per selected namespace (by name, by label), with its labels, spec and a controller reference; ESO's status", async () => {
    const { kube, run } = setup();
    const owner = kube.put(CLUSTER_EXTERNAL_SECRETS, ces());
    await run();
    assert.deepEqual(esNames(kube), ['team-a/db-credentials', 'team-b/db-credentials', 'team-c/db-credentials']);
    const es = kube.getObj(EXTERNAL_SECRETS, 'team-b/db-credentials')!;
    assert.deepEqual(es.spec, { ...esSpec, refreshInterval: '1h0m0s' }, "durations in Go's form, as ESO writes them");
    assert.equal(es.metadata.labels?.app, 'db');
    assert.deepEqual(
      es.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
      [['ClusterExternalSecret', 'db', owner.metadata.uid, true]],
    );
    assert.deepEqual(statusOf(kube), {
      externalSecretName: 'db-credentials',
      provisionedNamespaces: ['team-a', 'team-b', 'team-c'],
      conditions: [{ type: 'Ready', status: 'True' }],
    });
    const writes = kube.writes.length;
    await run();
    assert.equal(kube.writes.length, writes, 'a second run writes nothing');
  });

  void test("a namespace already holding someone else's ExternalSecret of that name: left alone, listed as failed (ESO's reason)", async () => {
    const { kube, run } = setup();
    const theirs = kube.put(EXTERNAL_SECRETS, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      metadata: { name: 'db-credentials', namespace: 'team-b' },
      spec: { ...esSpec, refreshInterval: '5m' },
    });
    kube.put(CLUSTER_EXTERNAL_SECRETS, ces());
    await run();
    assert.deepEqual(kube.getObj(EXTERNAL_SECRETS, 'team-b/db-credentials'), theirs);
    assert.deepEqual(statusOf(kube), {
      externalSecretName: 'db-credentials',
      failedNamespaces: [{ namespace: 'team-b', reason: 'external secret already exists in namespace' }],
      provisionedNamespaces: ['team-a', 'team-c'],
      conditions: [{ type: 'Ready', status: 'False', message: 'one or more namespaces failed' }],
    });
  });

  void test('a namespace no longer selected loses its ExternalSecret; a renamed externalSecretName replaces the old ones; nothing else is touched', async () => {
    const { kube, run } = setup();
    kube.put(CLUSTER_EXTERNAL_SECRETS, ces());
    const unrelated = kube.put(EXTERNAL_SECRETS, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      metadata: { name: 'mine', namespace: 'team-c' },
      spec: esSpec,
    });
    await run();
    kube.put(NAMESPACES, ns('team-c'));
    await run();
    assert.deepEqual(esNames(kube), ['team-a/db-credentials', 'team-b/db-credentials', 'team-c/mine']);
    kube.put(CLUSTER_EXTERNAL_SECRETS, ces({ externalSecretName: 'db-v2' }));
    await run();
    assert.deepEqual(esNames(kube), ['team-a/db-v2', 'team-b/db-v2', 'team-c/mine']);
    assert.deepEqual(kube.getObj(EXTERNAL_SECRETS, 'team-c/mine'), unrelated);
    assert.deepEqual((statusOf(kube) as { provisionedNamespaces?: string[] }).provisionedNamespaces, [
      'team-a',
      'team-b',
    ]);
  });

  void test('a spec the ExternalSecret rules refuse creates nothing and says which rule', async () => {
    const { kube, run } = setup();
    kube.put(CLUSTER_EXTERNAL_SECRETS, ces({ externalSecretSpec: { ...esSpec, data: [] } }));
    await run();
    assert.deepEqual(esNames(kube), []);
    const cond = (statusOf(kube).conditions as Array<{ status: string; message: string }>)[0];
    assert.equal(cond?.status, 'False');
    assert.match(
      cond?.message ?? '',
      /spec\.externalSecretSpec: either data or dataFrom should be specified \(rule eso\.es\.data-required\)/,
    );
  });

  void test("its ExternalSecrets reading another controller's ClusterSecretStore: left to that controller", async () => {
    const { kube, run } = setup();
    kube.put(CLUSTER_SECRET_STORES, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'ClusterSecretStore',
      metadata: { name: 'shared' },
      spec: { controller: 'eso', provider: { vault: { server: 'https://vault' } } },
    });
    kube.put(
      CLUSTER_EXTERNAL_SECRETS,
      ces({ externalSecretSpec: { ...esSpec, secretStoreRef: { name: 'shared', kind: 'ClusterSecretStore' } } }),
    );
    await run();
    assert.deepEqual(esNames(kube), []);
    assert.equal(statusOf(kube), undefined);
  });
});
