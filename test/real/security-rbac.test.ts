// #14 item 1 (real tier): the controller and the webhook run with exactly the chart's RBAC (each with a
// TokenRequest token of its own ServiceAccount, as its pod would), on a real kube-apiserver and a real
// OpenBao 2.7.2, in a cluster-wide install (ESO kinds on) and with the ESO kinds off. What a user does
// works (policy, role, store, ExternalSecret → Secret); what the chart does not grant, the apiserver
// refuses. With the ESO kinds off the controller can read no Secret and mint no token at all.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChartInstall, type ChartRbac, startChartInstall } from '../harness/chart-rbac.ts';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';

const tier = await realTier();
const skip = tier.skip || baoSkipReason();
const NS = 'team-a';

type Obj = Record<string, unknown>;

/** A policy and role in team-a for ServiceAccount `app`, and KV data under secret/team-a/. */
function tenantVaultAccess(): Obj[] {
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: NS } },
    {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultPolicy',
      metadata: { name: 'read', namespace: NS },
      spec: { rules: [{ path: 'secret/data/{{namespace}}/*', capabilities: ['read'] }] },
    },
    {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultRoleBinding',
      metadata: { name: 'app', namespace: NS },
      spec: { serviceAccounts: ['app'], policies: ['read'], audience: 'vault' },
    },
  ];
}

const forbidden = async (rbac: ChartRbac, method: string, path: string, body?: unknown): Promise<void> => {
  const res = await rbac.asController(method, path, body);
  assert.equal(res.status, 403, `${method} ${path} as the controller: ${JSON.stringify(res.body).slice(0, 300)}`);
};

void describe('chart RBAC, cluster-wide install with the ESO kinds (real apiserver, OpenBao 2.7.2)', { skip }, () => {
  let ci: ChartInstall;

  before(async () => {
    ci = await startChartInstall({ namespaces: [NS] });
    await ci.cp.bao(['kv', 'put', 'secret/team-a/db', 'password=chart-rbac-canary']);
  });
  after(async () => {
    await ci?.stop();
  });

  void test("with only the chart's rights the controller converges a policy, a role, a store and an ExternalSecret", async () => {
    await ci.cp.apply(tenantVaultAccess());
    await ci.waitReady(`/apis/vaultgate.io/v1alpha1/namespaces/${NS}/vaultrolebindings/app`);
    assert.match(await ci.cp.bao(['policy', 'read', 'vaultgate.team-a.read']), /secret\/data\/team-a\/\*/);
    await ci.cp.apply([
      {
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault', namespace: NS },
        spec: {
          provider: {
            vault: {
              server: ci.cp.vaultAddr,
              path: 'secret',
              version: 'v2',
              auth: {
                kubernetes: {
                  mountPath: 'kubernetes',
                  role: 'vaultgate.team-a.app',
                  serviceAccountRef: { name: 'app' },
                },
              },
            },
          },
        },
      },
      {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: { name: 'db', namespace: NS },
        spec: {
          secretStoreRef: { name: 'vault', kind: 'SecretStore' },
          refreshInterval: '1h',
          target: { name: 'db' },
          data: [{ secretKey: 'password', remoteRef: { key: 'team-a/db', property: 'password' } }],
        },
      },
    ]);
    await ci.waitReady(`/apis/external-secrets.io/v1/namespaces/${NS}/externalsecrets/db`);
    const secret = await ci.get(`/api/v1/namespaces/${NS}/secrets/db`);
    assert.equal(
      Buffer.from(String((secret?.data as Record<string, string>).password), 'base64').toString(),
      'chart-rbac-canary',
    );
    // The leader Lease and the audit key are the chart's named objects in the release namespace.
    assert.ok(await ci.get('/apis/coordination.k8s.io/v1/namespaces/vaultgate/leases/rel-vaultgate-controller'));
    assert.ok(await ci.get('/api/v1/namespaces/vaultgate/secrets/vaultgate-audit-key'));
  });

  void test('what the chart does not grant is refused by the apiserver', async () => {
    // update (not patch) of its kinds, and anything on workloads or RBAC (no way to escalate)
    await forbidden(ci.rbac, 'PUT', `/apis/vaultgate.io/v1alpha1/namespaces/${NS}/vaultpolicies/read`, {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultPolicy',
      metadata: { name: 'read', namespace: NS },
      spec: {},
    });
    await forbidden(ci.rbac, 'POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'x' },
      spec: { containers: [{ name: 'x', image: 'x' }] },
    });
    await forbidden(ci.rbac, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'x' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'User', name: 'x' }],
    });
    await forbidden(ci.rbac, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles');
    await forbidden(ci.rbac, 'DELETE', `/api/v1/namespaces/${NS}`);
    // guardrails are read-only to it; status of guardrails is not its business
    await forbidden(ci.rbac, 'POST', '/apis/vaultgate.io/v1alpha1/vaultguardrails', {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultGuardrail',
      metadata: { name: 'x' },
      spec: {},
    });
    // another Lease than its own, another webhook configuration than its release's two
    await ci.cp.apply({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'someone-else', namespace: 'vaultgate' },
      spec: {},
    });
    await forbidden(ci.rbac, 'PUT', '/apis/coordination.k8s.io/v1/namespaces/vaultgate/leases/someone-else', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'someone-else', namespace: 'vaultgate' },
      spec: { holderIdentity: 'me' },
    });
    await forbidden(
      ci.rbac,
      'GET',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/other-release-validate',
    );
    // Secrets in its own release namespace other than the ones the chart names
    await ci.cp.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'not-ours', namespace: 'vaultgate' },
      stringData: { k: 'v' },
    });
    const other = await ci.rbac.asController('GET', '/api/v1/namespaces/vaultgate/secrets/not-ours');
    assert.equal(
      other.status,
      200,
      'cluster-wide with the ESO kinds, Secrets are readable everywhere (tenants choose target names): watchNamespaces is the way to bound that',
    );
  });
});

void describe('chart RBAC with the ESO kinds off (real apiserver, OpenBao 2.7.2)', { skip }, () => {
  let ci: ChartInstall;

  before(async () => {
    ci = await startChartInstall({ set: ['eso.enabled=false'], namespaces: [NS] });
    assert.ok(ci.rbac.controllerArgs.includes('--no-eso-kinds'));
  });
  after(async () => {
    await ci?.stop();
  });

  void test('policies and roles still converge', async () => {
    await ci.cp.apply(tenantVaultAccess());
    await ci.waitReady(`/apis/vaultgate.io/v1alpha1/namespaces/${NS}/vaultrolebindings/app`);
    const role = JSON.parse(await ci.cp.bao(['read', '-format=json', 'auth/kubernetes/role/vaultgate.team-a.app'])) as {
      data: { bound_service_account_names: string[] };
    };
    assert.deepEqual(role.data.bound_service_account_names, ['app']);
  });

  void test('the controller can read no Secret, list none, and mint no ServiceAccount token', async () => {
    await ci.cp.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tenant', namespace: NS },
      stringData: { k: 'v' },
    });
    await forbidden(ci.rbac, 'GET', `/api/v1/namespaces/${NS}/secrets/tenant`);
    await forbidden(ci.rbac, 'GET', '/api/v1/secrets');
    await forbidden(ci.rbac, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/app/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    await forbidden(ci.rbac, 'POST', '/api/v1/namespaces/kube-system/serviceaccounts/default/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    await forbidden(ci.rbac, 'GET', `/apis/external-secrets.io/v1/namespaces/${NS}/secretstores`);
  });
});
