// VaultDynamicSecret admission: every rule refuses (or warns about) one manifest, names the field and the
// rule, and accepts the corrected one; through the same review core the webhook serves.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decideSync } from '../../../webhook/review/review.ts';
import { defaultContext } from '../../../webhook/admission/context.ts';
import type { AdmissionRequest } from '../../../webhook/admission/types.ts';

const G = 'vaultgate.io';
function vds(given: Record<string, unknown>): AdmissionRequest {
  const { omit, ...spec } = given;
  const full: Record<string, unknown> = { storeRef: { name: 'vault' }, path: 'database/creds/app', ...spec };
  if (typeof omit === 'string') delete full[omit];
  return {
    uid: 'u',
    kind: { group: G, version: 'v1alpha1', kind: 'VaultDynamicSecret' },
    resource: { group: G, version: 'v1alpha1', resource: 'vaultdynamicsecrets' },
    name: 'db',
    namespace: 'team-a',
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object: {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultDynamicSecret',
      metadata: { name: 'db', namespace: 'team-a' },
      spec: full,
    },
  };
}
function run(req: AdmissionRequest) {
  const { validation } = decideSync(req, defaultContext());
  return {
    allowed: validation.response.allowed,
    rules: validation.rules,
    message: validation.response.status?.message ?? '',
    warnings: validation.response.warnings ?? [],
  };
}

const cases: Array<{
  rule: string;
  refused: Record<string, unknown>;
  accepted: Record<string, unknown>;
  message: RegExp;
  severity?: 'warn';
}> = [
  {
    rule: 'vaultdynamicsecret.credential-type',
    refused: { credentialType: 'StaticRole' },
    accepted: { credentialType: 'Lease' },
    message: /spec\.credentialType: "StaticRole" is not supported yet/,
  },
  {
    rule: 'vaultdynamicsecret.certificate-path',
    refused: { credentialType: 'Certificate', path: 'pki/sign/web', parameters: { common_name: 'a.example' } },
    accepted: { credentialType: 'Certificate', path: 'pki/issue/web', parameters: { common_name: 'a.example' } },
    message: /spec\.path: a Certificate is issued from a PKI issue path/,
  },
  {
    rule: 'vaultdynamicsecret.certificate-ttl',
    refused: { credentialType: 'Certificate', path: 'pki/issue/web', parameters: { ttl: '120' } },
    accepted: {
      credentialType: 'Certificate',
      path: 'pki/issuer/default/issue/web',
      parameters: { ttl: '120' },
      leasePolicy: { minValidity: '30s' },
    },
    message: /spec\.parameters\.ttl: ttl "120" must be longer than spec\.leasePolicy\.minValidity "2m"/,
  },
  {
    rule: 'vaultdynamicsecret.parameters-with-get',
    refused: { parameters: { ttl: '1h' } },
    accepted: { method: 'PUT', parameters: { ttl: '1h' } },
    message: /spec\.parameters: parameters are sent only with method PUT or POST/,
  },
  {
    rule: 'vaultdynamicsecret.kubernetes-namespace',
    refused: { path: 'kubernetes/creds/app', method: 'POST', parameters: { kubernetes_namespace: 'team-b' } },
    accepted: { path: 'kubernetes/creds/app', method: 'POST', parameters: { kubernetes_namespace: 'team-a' } },
    message:
      /spec\.parameters\.kubernetes_namespace: "team-b" must be this object's namespace "team-a": a token of the kubernetes secrets engine is minted only for the namespace that asks for it/,
  },
  {
    rule: 'vaultdynamicsecret.kubernetes-cluster-role-binding',
    refused: {
      path: 'k8s-prod/creds/app',
      method: 'PUT',
      parameters: { kubernetes_namespace: 'team-a', cluster_role_binding: 'True' },
    },
    accepted: {
      path: 'k8s-prod/creds/app',
      method: 'PUT',
      parameters: { kubernetes_namespace: 'team-a', cluster_role_binding: 'false' },
    },
    message:
      /spec\.parameters\.cluster_role_binding: "True" is refused: a ClusterRoleBinding would let the token act outside namespace "team-a"/,
  },
  {
    rule: 'vaultdynamicsecret.min-validity',
    refused: { leasePolicy: { maxTTL: '5m', minValidity: '5m' } },
    accepted: { leasePolicy: { maxTTL: '5m', minValidity: '2m' } },
    message: /spec\.leasePolicy\.minValidity: minValidity "5m" must be shorter than maxTTL "5m"/,
  },
  {
    rule: 'vaultdynamicsecret.path',
    refused: { path: 'database/creds/../../sys/raw' },
    accepted: { path: 'database/creds/app' },
    message: /spec\.path/,
  },
  {
    rule: 'vaultdynamicsecret.grace',
    refused: { revocation: { grace: '10m' } },
    accepted: { revocation: { grace: '1m' } },
    message: /spec\.revocation\.grace: grace "10m" is longer than minValidity/,
    severity: 'warn',
  },
  {
    rule: 'vaultdynamicsecret.min-validity-rollout',
    refused: { leasePolicy: { minValidity: '30s' }, rolloutRestartTargets: [{ kind: 'Deployment', name: 'api' }] },
    accepted: { leasePolicy: { minValidity: '2m' }, rolloutRestartTargets: [{ kind: 'Deployment', name: 'api' }] },
    message:
      /spec\.leasePolicy\.minValidity: minValidity "30s" is not longer than the 70s a restart of the rollout targets may wait/,
    severity: 'warn',
  },
  {
    rule: 'vaultdynamicsecret.duplicate-target',
    refused: {
      rolloutRestartTargets: [
        { kind: 'Deployment', name: 'api' },
        { kind: 'Deployment', name: 'api' },
      ],
    },
    accepted: {
      rolloutRestartTargets: [
        { kind: 'Deployment', name: 'api' },
        { kind: 'StatefulSet', name: 'api' },
      ],
    },
    message: /spec\.rolloutRestartTargets\[1\]: Deployment\/api is listed twice/,
    severity: 'warn',
  },
  {
    rule: 'schema.enum',
    refused: { rolloutRestartTargets: [{ kind: 'CronJob', name: 'api' }] },
    accepted: { rolloutRestartTargets: [{ kind: 'DaemonSet', name: 'api' }] },
    message: /spec\.rolloutRestartTargets\[0\]\.kind/,
  },
  { rule: 'schema.required', refused: { omit: 'path' }, accepted: {}, message: /spec\.path: is required/ },
];

void describe('VaultDynamicSecret admission', () => {
  for (const c of cases) {
    void test(`${c.rule}: ${c.message.source.slice(0, 60)}`, () => {
      const refused = run(vds(c.refused));
      assert.ok(refused.rules.includes(c.rule), `expected ${c.rule} in ${refused.rules.join(', ')}`);
      if (c.severity === 'warn') {
        assert.equal(refused.allowed, true);
        assert.ok(
          refused.warnings.some((w) => c.message.test(w)),
          refused.warnings.join('\n'),
        );
      } else {
        assert.equal(refused.allowed, false);
        assert.match(refused.message, c.message);
      }
      const accepted = run(vds(c.accepted));
      assert.equal(accepted.allowed, true, accepted.message);
      assert.ok(!accepted.rules.includes(c.rule), accepted.rules.join(', '));
    });
  }

  void test('a complete manifest is admitted without warnings', () => {
    const r = run(
      vds({
        method: 'GET',
        credentialType: 'Lease',
        target: { name: 'app-db', creationPolicy: 'Owner' },
        leasePolicy: { renewAtPercent: 67, jitterPercent: 10, minValidity: '2m', maxTTL: '5m' },
        revocation: { onDelete: true, previous: 'AfterRollout', grace: '30s' },
        rolloutRestartTargets: [{ kind: 'Deployment', name: 'api' }],
      }),
    );
    assert.equal(r.allowed, true, r.message);
    assert.deepEqual(r.warnings, []);
  });
});
