// VaultDynamicSecret access rules (issue #23 item 5): what the credential's lifecycle asks of Vault,
// checked against the store's Vault identity as vaultgate knows it. Table tests of the pure check (each
// rule fires, and does not fire on the corrected input), the identity read from the webhook's caches,
// and the whole review core: a denial names the field, the capability, the path and the rule.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  VDS_ACCESS_RULES as R,
  accessFindings,
  lifecycleNeeds,
  rolloutNamespaceFindings,
  storeIdentity,
  type StoreIdentity,
} from '../../../webhook/rules/vaultdynamicsecret-access.ts';
import { defaultContext, type AdmissionContext } from '../../../webhook/admission/context.ts';
import { decideSync } from '../../../webhook/review/review.ts';
import type { AdmissionRequest } from '../../../webhook/admission/types.ts';
import type { AclRule } from '../../../policy/acl.ts';

const NS = 'team-a';
const rule = (path: string, ...capabilities: string[]): AclRule => ({ path, capabilities });
/** The minting token's look-up by accessor: optional, never asked at admission (granted here as a careful operator would). */
const LOOKUP = rule('auth/token/lookup-accessor', 'update');
const GRANTS_ALL: AclRule[] = [rule('database/creds/app', 'read'), rule('sys/leases/revoke', 'update'), LOOKUP];

function binding(rules: AclRule[], extra: Partial<Extract<StoreIdentity, { kind: 'binding' }>> = {}): StoreIdentity {
  return {
    kind: 'binding',
    binding: `${NS}/app`,
    policies: [{ name: `${NS}/creds`, rules }],
    unknownPolicies: [],
    ...extra,
  };
}
const spec = (s: Record<string, unknown> = {}): Record<string, unknown> => ({
  storeRef: { name: 'vault' },
  path: 'database/creds/app',
  ...s,
});
const summary = (fs: ReturnType<typeof accessFindings>) => fs.map((f) => `${f.severity} ${f.rule} ${f.field}`);

void describe('lifecycleNeeds: what the lifecycle of a spec sends with the store token', () => {
  const table: Array<{ name: string; spec: Record<string, unknown>; needs: string[] }> = [
    {
      name: 'a lease with the default revocation: issue (read), renew, lookup, revoke',
      spec: spec(),
      needs: [
        'read database/creds/app spec.path',
        'update sys/leases/renew spec.leasePolicy',
        'update sys/leases/lookup spec.leasePolicy',
        'update sys/leases/revoke spec.revocation',
      ],
    },
    {
      name: 'no revocation asked: no revoke',
      spec: spec({ revocation: { onDelete: false, previous: 'Never' } }),
      needs: [
        'read database/creds/app spec.path',
        'update sys/leases/renew spec.leasePolicy',
        'update sys/leases/lookup spec.leasePolicy',
      ],
    },
    {
      name: 'only replaced credentials revoked: the field is revocation.previous',
      spec: spec({ revocation: { onDelete: false } }),
      needs: [
        'read database/creds/app spec.path',
        'update sys/leases/renew spec.leasePolicy',
        'update sys/leases/lookup spec.leasePolicy',
        'update sys/leases/revoke spec.revocation.previous',
      ],
    },
    {
      name: 'PUT issues with update',
      spec: spec({ path: 'kubernetes/creds/app', method: 'PUT', parameters: { kubernetes_namespace: 'x' } }),
      needs: [
        'update kubernetes/creds/app spec.path',
        'update sys/leases/renew spec.leasePolicy',
        'update sys/leases/lookup spec.leasePolicy',
        'update sys/leases/revoke spec.revocation',
      ],
    },
    {
      name: "a certificate: issue (update) and the PKI mount's revoke, no lease",
      spec: spec({ path: 'pki/int/issue/web', method: 'PUT', credentialType: 'Certificate' }),
      needs: ['update pki/int/issue/web spec.path', 'update pki/int/revoke spec.revocation'],
    },
    {
      name: "a certificate from a named issuer: the mount's revoke, not the issuer's",
      spec: spec({ path: 'pki/issuer/default/issue/web', method: 'PUT', credentialType: 'Certificate' }),
      needs: ['update pki/issuer/default/issue/web spec.path', 'update pki/revoke spec.revocation'],
    },
    {
      name: 'a certificate without revocation: no revoke',
      spec: spec({
        path: 'pki/issue/web',
        method: 'PUT',
        credentialType: 'Certificate',
        revocation: { onDelete: false, previous: 'Never' },
      }),
      needs: ['update pki/issue/web spec.path'],
    },
    {
      name: 'a static role: a read, nothing else',
      spec: spec({ path: 'database/static-creds/app', credentialType: 'StaticRole' }),
      needs: ['read database/static-creds/app spec.path'],
    },
  ];
  for (const c of table)
    void test(c.name, () => {
      assert.deepEqual(
        lifecycleNeeds(c.spec).map((n) => `${n.capability} ${n.path} ${n.field}`),
        c.needs,
      );
    });
  void test('the PUT parameters are evaluated, as strings', () => {
    const [issue] = lifecycleNeeds(spec({ method: 'POST', parameters: { ttl: '1h' } }));
    assert.deepEqual(issue?.parameters, { ttl: '1h' });
  });
});

void describe('accessFindings: deny when the known policies certainly lack it, warn when uncertain', () => {
  const table: Array<{
    name: string;
    spec?: Record<string, unknown>;
    identity: StoreIdentity;
    timing?: { minValidityMs?: number; maxTTLMs?: number };
    findings: string[];
    message?: RegExp;
  }> = [
    {
      name: 'every need granted (renew and lookup by the shipped default policy): nothing',
      identity: binding(GRANTS_ALL),
      findings: [],
    },
    {
      name: 'no read on the issuing path: access-issue denied',
      identity: binding([rule('database/creds/other', 'read'), rule('sys/leases/revoke', 'update'), LOOKUP]),
      findings: [`deny ${R.issue} spec.path`],
      message: /lacks read on database\/creds\/app, needed to issue the credential: no policy has a pattern matching/,
    },
    {
      name: 'a glob granting list only on the issuing path: denied, the reason names what it grants',
      identity: binding([rule('database/creds/*', 'list'), rule('sys/leases/revoke', 'update'), LOOKUP]),
      findings: [`deny ${R.issue} spec.path`],
      message: /"database\/creds\/\*" grants list but not read/,
    },
    {
      name: 'sys/leases/renew denied by a known policy: it overrides the default policy, access-renew denied',
      identity: binding([...GRANTS_ALL, rule('sys/leases/renew', 'deny')]),
      findings: [`deny ${R.renew} spec.leasePolicy`],
      message: /lacks update on sys\/leases\/renew, needed to renew the lease: "sys\/leases\/renew" is denied/,
    },
    {
      name: 'sys/leases/lookup denied: access-lookup denied',
      identity: binding([...GRANTS_ALL, rule('sys/leases/lookup', 'deny')]),
      findings: [`deny ${R.lookup} spec.leasePolicy`],
    },
    {
      name: 'no sys/leases/revoke while revocation is asked: access-revoke denied, with both ways out',
      identity: binding([rule('database/creds/app', 'read'), LOOKUP]),
      findings: [`deny ${R.revoke} spec.revocation`],
      message:
        /lacks update on sys\/leases\/revoke, needed to revoke leases on delete and of replaced credentials: .*VaultGuardrail relaxing sys-paths.*or set revocation\.onDelete: false and revocation\.previous: Never/,
    },
    {
      name: 'sys/leases/revoke granted through a segment wildcard (+/leases/revoke): nothing',
      identity: binding([rule('database/creds/app', 'read'), rule('+/leases/revoke', 'update'), LOOKUP]),
      findings: [],
    },
    {
      name: 'no sys/leases/revoke and no revocation asked: nothing',
      spec: spec({ revocation: { onDelete: false, previous: 'Never' } }),
      identity: binding([rule('database/creds/app', 'read'), LOOKUP]),
      findings: [],
    },
    {
      name: 'a VaultPolicy the binding names is not known: the same gap only warns',
      identity: binding([rule('database/creds/app', 'read'), LOOKUP], { unknownPolicies: ['later'] }),
      findings: [`warn ${R.revoke} spec.revocation`],
      message: /VaultPolicy "later" not known here/,
    },
    {
      name: 'an identity-templated rule path: only warns',
      identity: binding([rule('database/creds/app', 'read'), rule('secret/{{identity.entity.id}}/*', 'read'), LOOKUP]),
      findings: [`warn ${R.revoke} spec.revocation`],
      message: /identity template/,
    },
    {
      name: 'a parameter the rule does not allow: access-issue denied, naming the parameter, never its value',
      spec: spec({ path: 'kubernetes/creds/app', method: 'PUT', parameters: { kubernetes_namespace: 'prod-ns' } }),
      identity: binding([
        { path: 'kubernetes/creds/app', capabilities: ['update'], allowedParameters: { ttl: [] } },
        rule('sys/leases/revoke', 'update'),
        LOOKUP,
      ]),
      findings: [`deny ${R.issue} spec.path`],
      message: /parameter "kubernetes_namespace" is not in the allowed parameters/,
    },
    {
      name: "a certificate without the PKI mount's revoke: access-pki-revoke denied",
      spec: spec({ path: 'pki/issue/web', method: 'PUT', credentialType: 'Certificate' }),
      identity: binding([rule('pki/issue/web', 'update')]),
      findings: [`deny ${R.pkiRevoke} spec.revocation`],
      message: /lacks update on pki\/revoke, needed to revoke certificates/,
    },
    {
      name: "a certificate with the PKI mount's revoke: nothing",
      spec: spec({ path: 'pki/issue/web', method: 'PUT', credentialType: 'Certificate' }),
      identity: binding([rule('pki/issue/web', 'update'), rule('pki/revoke', 'update')]),
      findings: [],
    },
    {
      name: 'no auth/token/lookup-accessor: nothing said (optional; the built-in guardrails keep auth/ from tenants)',
      identity: binding([rule('database/creds/app', 'read'), rule('sys/leases/revoke', 'update')]),
      findings: [],
    },
    {
      name: 'a certificate does not die with its token: no lookup-accessor asked',
      spec: spec({ path: 'pki/issue/web', method: 'PUT', credentialType: 'Certificate' }),
      identity: binding([rule('pki/issue/web', 'update'), rule('pki/revoke', 'update')]),
      findings: [],
    },
    {
      name: 'a role vaultgate does not write: one warning listing every need',
      identity: { kind: 'unmanaged', why: 'SecretStore "vault" logs in as kubernetes-auth role "ops"' },
      findings: [`warn ${R.unchecked} spec.storeRef`],
      message:
        /role "ops", so its policies are not known here and were not checked; .*read on database\/creds\/app .*update on sys\/leases\/renew .*update on sys\/leases\/revoke/,
    },
    {
      name: 'tokens living no longer than minValidity: token-lifetime denied',
      identity: binding(GRANTS_ALL, { tokenMaxTTLSeconds: 60 }),
      timing: { minValidityMs: 120_000, maxTTLMs: 3_600_000 },
      findings: [`deny ${R.tokenLifetime} spec.leasePolicy.minValidity`],
      message: /tokenMaxTTL 1m, not periodic\) live no longer than minValidity 2m/,
    },
    {
      name: "tokens ending before the credential's max TTL: token-lifetime warns",
      identity: binding(GRANTS_ALL, { tokenMaxTTLSeconds: 3600 }),
      timing: { minValidityMs: 120_000, maxTTLMs: 7_200_000 },
      findings: [`warn ${R.tokenLifetime} spec.leasePolicy.maxTTL`],
      message: /tokenMaxTTL 1h, not periodic\) end before the credential's maxTTL 2h.*up to 1h before its max TTL/,
    },
    {
      name: "tokens outliving the credential's max TTL: nothing",
      identity: binding(GRANTS_ALL, { tokenMaxTTLSeconds: 86_400 }),
      timing: { minValidityMs: 120_000, maxTTLMs: 3_600_000 },
      findings: [],
    },
    {
      name: "the credential's max TTL not stated: only the minValidity bound is checked",
      identity: binding(GRANTS_ALL, { tokenMaxTTLSeconds: 600 }),
      timing: { minValidityMs: 120_000 },
      findings: [],
    },
  ];
  for (const c of table)
    void test(c.name, () => {
      const fs = accessFindings(lifecycleNeeds(c.spec ?? spec()), c.identity, c.timing);
      assert.deepEqual(summary(fs), c.findings);
      if (c.message) assert.match(fs[0]?.message ?? '', c.message);
      for (const f of fs) assert.doesNotMatch(f.message, /prod-ns/, 'a parameter value appears in a message');
    });
});

void describe('rollout targets stay in the namespace', () => {
  void test('a target naming another namespace is denied with its field', () => {
    const fs = rolloutNamespaceFindings(
      [
        { kind: 'Deployment', name: 'web' },
        { kind: 'Deployment', name: 'x', namespace: 'other' },
      ],
      NS,
    );
    assert.deepEqual(summary(fs), [`deny ${R.rolloutNamespace} spec.rolloutRestartTargets[1].namespace`]);
  });
  void test('its own namespace, or none, is not', () => {
    assert.deepEqual(
      rolloutNamespaceFindings(
        [
          { kind: 'Deployment', name: 'x', namespace: NS },
          { kind: 'Deployment', name: 'y' },
        ],
        NS,
      ),
      [],
    );
  });
});

// --- The identity from the webhook's caches, and the review core ------------------------------------

type Objects = Record<string, Record<string, unknown>>;
function cacheContext(objects: Objects, known = true): AdmissionContext {
  const look = (key: string) => (known ? (objects[key] ?? null) : undefined);
  return defaultContext({
    namePrefix: 'vaultgate',
    vaultPolicy: (ns, name) => look(`VaultPolicy/${ns}/${name}`),
    vaultRoleBinding: (ns, name) => look(`VaultRoleBinding/${ns}/${name}`),
    secretStore: (kind, name, ns) => look(`${kind}/${ns ?? ''}/${name}`),
  });
}
function store(auth: Record<string, unknown>): Record<string, unknown> {
  return { spec: { provider: { vault: { server: 'https://vault.example:8200', auth } } } };
}
const k8sAuth = (role: string, mountPath = 'kubernetes') => ({
  kubernetes: { role, mountPath, serviceAccountRef: { name: 'app' } },
});
function world(policyRules: AclRule[], bindingSpec: Record<string, unknown> = {}): Objects {
  return {
    [`SecretStore/${NS}/vault`]: store(k8sAuth(`vaultgate.${NS}.app`)),
    [`VaultRoleBinding/${NS}/app`]: {
      spec: { serviceAccounts: ['app'], policies: ['creds'], tokenMaxTTL: '24h', ...bindingSpec },
    },
    [`VaultPolicy/${NS}/creds`]: { spec: { rules: policyRules } },
  };
}
const object = (s: Record<string, unknown> = spec()) => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultDynamicSecret',
  metadata: { name: 'db', namespace: NS },
  spec: s,
});

void describe('storeIdentity: the store, its role, the binding and its policies from the caches', () => {
  void test('a store logging in as a VaultRoleBinding role: its policies ({{namespace}} expanded) and token lifetime', () => {
    const id = storeIdentity(object(), cacheContext(world([rule('database/creds/{{namespace}}', 'read')])));
    assert.deepEqual(id, {
      kind: 'binding',
      binding: `${NS}/app`,
      policies: [{ name: `${NS}/creds`, rules: [rule(`database/creds/${NS}`, 'read')] }],
      unknownPolicies: [],
      tokenMaxTTLSeconds: 86_400,
    });
  });
  void test('a VaultPolicy the binding names that does not exist is listed as unknown', () => {
    const w = world(GRANTS_ALL, { policies: ['creds', 'missing'] });
    const id = storeIdentity(object(), cacheContext(w));
    assert.equal(id?.kind, 'binding');
    assert.deepEqual(id?.kind === 'binding' ? id.unknownPolicies : [], ['missing']);
  });
  const unmanaged: Array<{ name: string; objects: Objects; why: RegExp }> = [
    {
      name: 'another auth method',
      objects: { [`SecretStore/${NS}/vault`]: store({ appRole: { path: 'approle', roleId: 'r' } }) },
      why: /authenticates with appRole/,
    },
    {
      name: 'a role name vaultgate does not derive',
      objects: { [`SecretStore/${NS}/vault`]: store(k8sAuth('team-a-db')) },
      why: /role "team-a-db", which is not a VaultRoleBinding's role/,
    },
    {
      name: 'a derived name whose VaultRoleBinding does not exist',
      objects: { [`SecretStore/${NS}/vault`]: store(k8sAuth(`vaultgate.${NS}.gone`)) },
      why: /VaultRoleBinding team-a\/gone is not found/,
    },
    {
      name: 'the same role name on another auth mount',
      objects: { ...world(GRANTS_ALL), [`SecretStore/${NS}/vault`]: store(k8sAuth(`vaultgate.${NS}.app`, 'k8s-2')) },
      why: /on mount "k8s-2", where VaultRoleBinding team-a\/app writes no role/,
    },
  ];
  for (const c of unmanaged)
    void test(`unmanaged: ${c.name}`, () => {
      const id = storeIdentity(object(), cacheContext(c.objects));
      assert.equal(id?.kind, 'unmanaged');
      assert.match(id?.kind === 'unmanaged' ? id.why : '', c.why);
    });
  void test('raw policy text is parsed within a budget per review, then remembered: hostile sizes stay bounded', () => {
    // Three VaultPolicies of ~60 KiB raw HCL each; the budget (128 KiB) parses two per review.
    const hcl = (k: number) => {
      let text = `path "database/creds/app" { capabilities = ["read"] }\npath "sys/leases/revoke" { capabilities = ["update"] }\n`;
      for (let i = 0; text.length < 60_000; i++)
        text += `path "secret/data/${NS}/p${k}-${i}/*" { capabilities = ["read"] }\n`;
      return text;
    };
    const w = world([], { policies: ['a', 'b', 'c'] });
    for (const k of ['a', 'b', 'c']) w[`VaultPolicy/${NS}/${k}`] = { spec: { policy: hcl(k.charCodeAt(0)) } };
    const ctx = cacheContext(w);
    const first = storeIdentity(object(), ctx);
    assert.deepEqual(first?.kind === 'binding' ? first.unknownPolicies : undefined, ['c']);
    const second = storeIdentity(object(), ctx);
    assert.deepEqual(
      second?.kind === 'binding' ? second.unknownPolicies : undefined,
      [],
      'a and b remembered, c read now',
    );
    assert.equal(second?.kind === 'binding' ? second.policies.length : 0, 3);
  });
  void test('a ClusterSecretStore is looked up without a namespace', () => {
    const w = world(GRANTS_ALL);
    w['ClusterSecretStore//shared'] = w[`SecretStore/${NS}/vault`]!;
    const id = storeIdentity(
      object(spec({ storeRef: { name: 'shared', kind: 'ClusterSecretStore' } })),
      cacheContext(w),
    );
    assert.equal(id?.kind, 'binding');
  });
  void test('nothing is said when the store is missing, the caches are not synced, or there are no lookups', () => {
    assert.equal(storeIdentity(object(), cacheContext({})), undefined);
    assert.equal(storeIdentity(object(), cacheContext(world(GRANTS_ALL), false)), undefined);
    assert.equal(storeIdentity(object(), defaultContext()), undefined);
  });
});

void describe('through the review core (what kubectl apply answers)', () => {
  const request = (
    s: Record<string, unknown>,
    op: 'CREATE' | 'UPDATE' = 'CREATE',
    old?: Record<string, unknown>,
  ): AdmissionRequest => ({
    uid: 'u',
    kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultDynamicSecret' },
    resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultdynamicsecrets' },
    name: 'db',
    namespace: NS,
    operation: op,
    userInfo: { username: 'alice' },
    object: object(s),
    ...(old ? { oldObject: old } : {}),
  });

  void test('a binding whose policy lacks sys/leases/revoke: refused, naming field, capability, path and rule', () => {
    const { validation } = decideSync(
      request(spec()),
      cacheContext(world([rule('database/creds/app', 'read'), LOOKUP])),
    );
    assert.equal(validation.response.allowed, false);
    assert.deepEqual(validation.rules, [R.revoke]);
    assert.match(
      validation.response.status?.message ?? '',
      /spec\.revocation: the store's Vault role \(VaultRoleBinding team-a\/app, policies team-a\/creds and Vault's default\) lacks update on sys\/leases\/revoke.*\(rule vaultdynamicsecret\.access-revoke\)/,
    );
  });
  void test('the same object without revocation is admitted', () => {
    const s = spec({ revocation: { onDelete: false, previous: 'Never' } });
    const { validation } = decideSync(request(s), cacheContext(world([rule('database/creds/app', 'read'), LOOKUP])));
    assert.equal(validation.response.allowed, true, validation.response.status?.message);
    assert.deepEqual(validation.response.warnings ?? [], []);
  });
  void test('a store whose role vaultgate does not write: admitted with a warning', () => {
    const w = { [`SecretStore/${NS}/vault`]: store(k8sAuth('team-a-db')) };
    const { validation } = decideSync(request(spec()), cacheContext(w));
    assert.equal(validation.response.allowed, true);
    assert.equal(validation.response.warnings?.length, 1);
    assert.match(
      validation.response.warnings?.[0] ?? '',
      /spec\.storeRef: .*\(rule vaultdynamicsecret\.access-unchecked\)/,
    );
  });
  void test('an update leaving spec unchanged (a finalizer removed) is only warned: the object stays deletable', () => {
    const ctx = cacheContext(world([rule('database/creds/app', 'read'), LOOKUP]));
    const { validation } = decideSync(request(spec(), 'UPDATE', object(spec())), ctx);
    assert.equal(validation.response.allowed, true);
    assert.match(
      validation.response.warnings?.join('\n') ?? '',
      /sys\/leases\/revoke.*\(tolerated: this update leaves spec unchanged\) \(rule vaultdynamicsecret\.access-revoke\)/,
    );
  });
  void test('an update changing spec is checked like a create', () => {
    const ctx = cacheContext(world([rule('database/creds/app', 'read'), LOOKUP]));
    const old = object(spec({ revocation: { onDelete: false, previous: 'Never' } }));
    const { validation } = decideSync(request(spec(), 'UPDATE', old), ctx);
    assert.equal(validation.response.allowed, false);
  });
  void test("the store's role without auth/token/lookup-accessor: admitted without a warning", () => {
    const ctx = cacheContext(world([rule('database/creds/app', 'read'), rule('sys/leases/revoke', 'update')]));
    const { validation } = decideSync(request(spec()), ctx);
    assert.equal(validation.response.allowed, true);
    assert.deepEqual(validation.response.warnings ?? [], []);
  });
  void test('the controller re-check (no cache lookups) says nothing of access', () => {
    const { validation } = decideSync(request(spec()), defaultContext());
    assert.equal(validation.response.allowed, true);
    assert.deepEqual(validation.rules, []);
  });
});
