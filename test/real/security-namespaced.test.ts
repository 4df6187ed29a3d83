// #14 item 1 (real tier): a namespaced install (chart watchNamespaces: [team-a, team-b]) on a real
// kube-apiserver and OpenBao 2.7.2. The controller and the webhook run with exactly the chart's rights
// (Roles in team-a and team-b; cluster-wide only VaultGuardrails and those two Namespace objects) and a
// token of their own ServiceAccount. A tenant in team-a gets policies, roles and synced Secrets; team-c
// is not served, and the controller can read nothing there nor mint a token for any ServiceAccount
// outside team-a and team-b (kube-system's included).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChartInstall, readyOf as ready, startChartInstall } from '../harness/chart-rbac.ts';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';
import { CommandError } from '../harness/tools.ts';

const tier = await realTier();
const skip = tier.skip || baoSkipReason();

type Obj = Record<string, unknown>;
const access = (ns: string): Obj[] => [
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: ns } },
  {
    apiVersion: 'vaultgate.io/v1alpha1',
    kind: 'VaultPolicy',
    metadata: { name: 'read', namespace: ns },
    spec: { rules: [{ path: 'secret/data/{{namespace}}/*', capabilities: ['read'] }] },
  },
  {
    apiVersion: 'vaultgate.io/v1alpha1',
    kind: 'VaultRoleBinding',
    metadata: { name: 'app', namespace: ns },
    spec: { serviceAccounts: ['app'], policies: ['read'], audience: 'vault' },
  },
];
const storeAndSecret = (ns: string, server: string): Obj[] => [
  {
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: { name: 'vault', namespace: ns },
    spec: {
      provider: {
        vault: {
          server,
          path: 'secret',
          version: 'v2',
          auth: {
            kubernetes: { mountPath: 'kubernetes', role: `vaultgate.${ns}.app`, serviceAccountRef: { name: 'app' } },
          },
        },
      },
    },
  },
  {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { name: 'db', namespace: ns },
    spec: {
      secretStoreRef: { name: 'vault', kind: 'SecretStore' },
      refreshInterval: '1h',
      target: { name: 'db' },
      data: [{ secretKey: 'password', remoteRef: { key: `${ns}/db`, property: 'password' } }],
    },
  },
];

void describe('namespaced install: watchNamespaces [team-a, team-b] (real apiserver, OpenBao 2.7.2)', { skip }, () => {
  let ci: ChartInstall;
  const get = (path: string): Promise<Obj | undefined> => ci.get(path);
  const asController = async (method: string, path: string, body?: unknown): Promise<number> =>
    (await ci.rbac.asController(method, path, body)).status;

  before(async () => {
    ci = await startChartInstall({
      valuesFile: 'ci/namespaced-values.yaml',
      namespaces: ['team-a', 'team-b', 'team-c'],
    });
    assert.deepEqual(
      ci.rbac.controllerArgs.filter((a) => a.startsWith('--namespace')),
      ['--namespace=team-a', '--namespace=team-b'],
    );
    for (const ns of ['team-a', 'team-c']) await ci.cp.bao(['kv', 'put', `secret/${ns}/db`, `password=canary-${ns}`]);
  });
  after(async () => {
    await ci?.stop();
  });

  void test('team-a: policy, role, store and ExternalSecret converge with the Roles alone', async () => {
    await ci.cp.apply([...access('team-a'), ...storeAndSecret('team-a', ci.cp.vaultAddr!)]);
    await ci.waitReady('/apis/vaultgate.io/v1alpha1/namespaces/team-a/vaultrolebindings/app');
    await ci.waitReady('/apis/external-secrets.io/v1/namespaces/team-a/externalsecrets/db');
    const secret = await get('/api/v1/namespaces/team-a/secrets/db');
    assert.equal(
      Buffer.from(String((secret?.data as Record<string, string>).password), 'base64').toString(),
      'canary-team-a',
    );
  });

  void test('an ExternalSecret naming a ClusterSecretStore is told the install serves none (not "not found")', async () => {
    await ci.cp.apply({
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      metadata: { name: 'from-cluster-store', namespace: 'team-a' },
      spec: {
        secretStoreRef: { name: 'vault', kind: 'ClusterSecretStore' },
        refreshInterval: '1h',
        target: { name: 'from-cluster-store' },
        data: [{ secretKey: 'password', remoteRef: { key: 'team-a/db', property: 'password' } }],
      },
    });
    const es = await ci.waitReady(
      '/apis/external-secrets.io/v1/namespaces/team-a/externalsecrets/from-cluster-store',
      'False',
    );
    assert.match(
      String(ready(es)?.message),
      /ClusterSecretStore vault cannot be used: this controller is installed for some namespaces only \(watchNamespaces\) and serves no ClusterSecretStore; use a SecretStore in namespace team-a/,
    );
    assert.equal(await get('/api/v1/namespaces/team-a/secrets/from-cluster-store'), undefined);
  });

  void test('the webhook serves team-a only: a floor-breaking policy is refused there, and team-c is not sent to it', async () => {
    const sudo = (ns: string): Obj => ({
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultPolicy',
      metadata: { name: 'root', namespace: ns },
      spec: { rules: [{ path: 'sys/*', capabilities: ['sudo', 'update'] }] },
    });
    const refused = await ci.cp.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(sudo('team-a')) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(refused instanceof CommandError, 'refused in team-a');
    assert.match(`${refused.stderr}`, /sys\/\*|sudo/);
    // team-c is outside the install: admitted untouched (no webhook) and inert (no controller).
    await ci.cp.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(sudo('team-c')) });
  });

  void test('team-c is not reconciled: no status, nothing written to Vault, no Secret synced', async () => {
    await ci.cp.apply([...access('team-c'), ...storeAndSecret('team-c', ci.cp.vaultAddr!)]);
    // A marker in team-b, applied after, converges: the controller is up and has seen everything before it.
    await ci.cp.apply(access('team-b'));
    await ci.waitReady('/apis/vaultgate.io/v1alpha1/namespaces/team-b/vaultrolebindings/app');
    await ci.waitReady('/apis/vaultgate.io/v1alpha1/namespaces/team-b/vaultpolicies/read');
    assert.equal(ready(await get('/apis/vaultgate.io/v1alpha1/namespaces/team-c/vaultpolicies/read')), undefined);
    assert.equal(ready(await get('/apis/external-secrets.io/v1/namespaces/team-c/externalsecrets/db')), undefined);
    assert.equal(await get('/api/v1/namespaces/team-c/secrets/db'), undefined);
    const policies = await ci.cp.bao(['policy', 'list']);
    assert.match(policies, /vaultgate\.team-b\.read/);
    assert.doesNotMatch(policies, /vaultgate\.team-c\./);
  });

  void test('as the controller: nothing in team-c or kube-system, no cluster-wide list, no token outside its namespaces', async () => {
    await ci.cp.apply([
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'private', namespace: 'team-c' }, stringData: { k: 'v' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'powerful', namespace: 'kube-system' } },
    ]);
    const token = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} };
    assert.equal(
      await asController('GET', '/api/v1/namespaces/team-c/secrets/private'),
      403,
      'a Secret it does not manage, in a namespace it does not serve',
    );
    assert.equal(await asController('GET', '/api/v1/namespaces/team-c/secrets'), 403);
    assert.equal(await asController('GET', '/api/v1/secrets'), 403, 'no cluster-wide list');
    assert.equal(await asController('GET', '/api/v1/namespaces/kube-system/secrets'), 403);
    assert.equal(
      await asController('POST', '/api/v1/namespaces/kube-system/serviceaccounts/powerful/token', token),
      403,
      'a token for a kube-system ServiceAccount no store references',
    );
    assert.equal(await asController('POST', '/api/v1/namespaces/team-c/serviceaccounts/app/token', token), 403);
    assert.equal(await asController('GET', '/api/v1/namespaces'), 403, 'Namespaces only by name');
    assert.equal(await asController('GET', '/api/v1/namespaces/team-c'), 403);
    assert.equal(
      await asController('GET', '/apis/external-secrets.io/v1/clustersecretstores'),
      403,
      'no ClusterSecretStore in a namespaced install',
    );
    // ... while what it serves stays reachable
    assert.equal(await asController('GET', '/api/v1/namespaces/team-a'), 200);
    assert.equal(await asController('GET', '/api/v1/namespaces/team-a/secrets/db'), 200);
  });
});
