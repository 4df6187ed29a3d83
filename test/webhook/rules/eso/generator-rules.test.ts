// Admission of ESO's generators: ESO manifests unchanged are admitted; a VaultDynamicSecret's provider
// block is judged by the SecretStore rules (server allow-list, token audience, auth, references) under
// the generator's own field names; Password's impossible specs and DELETE are refused naming field and rule.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext, type AdmissionContext } from '../../../../webhook/admission/context.ts';
import type { KubeObject } from '../../../../webhook/admission/kinds.ts';
import { generatorHandlers } from '../../../../webhook/rules/eso/generator-handlers.ts';

const API = 'generators.external-secrets.io/v1alpha1';
const VAULT = 'https://vault.example:8200';
const ctx: AdmissionContext = { ...defaultContext(), vaultServers: [VAULT] };

function review(o: KubeObject, c: AdmissionContext = ctx): Array<[string, string, string]> {
  const h = generatorHandlers.find((x) => x.kind === o.kind)!;
  const ns = (o.metadata as { namespace?: string }).namespace;
  const fs = h.validate(o, undefined, c, {
    uid: 't',
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    kind: { group: 'generators.external-secrets.io', version: 'v1alpha1', kind: String(o.kind) },
    resource: { group: 'generators.external-secrets.io', version: 'v1alpha1', resource: 'x' },
    ...(ns ? { namespace: ns } : {}),
    object: o,
  });
  return fs.map((f) => [f.severity, f.field, f.rule]);
}

// ESO's documented example (docs/api/generator/vault.md), database credentials through kubernetes auth.
const provider = {
  server: VAULT,
  version: 'v2',
  auth: { kubernetes: { mountPath: 'kubernetes', role: 'app', serviceAccountRef: { name: 'app' } } },
};
const vds: KubeObject = {
  apiVersion: API,
  kind: 'VaultDynamicSecret',
  metadata: { name: 'pg', namespace: 'team-a' },
  spec: { path: '/database/creds/app', method: 'GET', resultType: 'Data', provider },
};
const password: KubeObject = {
  apiVersion: API,
  kind: 'Password',
  metadata: { name: 'pw', namespace: 'team-a' },
  spec: { length: 42, digits: 5, symbols: 5, symbolCharacters: '-_$@', noUpper: false, allowRepeat: true },
};
const with_ = (o: KubeObject, spec: Record<string, unknown>): KubeObject => ({
  ...o,
  spec: { ...(o.spec as object), ...spec },
});

void describe('ESO generator manifests, unchanged', () => {
  void test('ESO example manifests are admitted without findings', () => {
    assert.deepEqual(review(vds), []);
    assert.deepEqual(review(password), []);
    assert.deepEqual(
      review({
        apiVersion: API,
        kind: 'ClusterGenerator',
        metadata: { name: 'pw' },
        spec: { kind: 'Password', generator: { passwordSpec: password.spec } },
      }),
      [],
    );
  });
});

void describe('VaultDynamicSecret: the provider block gets the store rules', () => {
  void test('a server outside the allow-list is refused, named at spec.provider.server', () => {
    const fs = review(with_(vds, { provider: { ...provider, server: 'https://evil.example' } }));
    assert.deepEqual(fs, [['deny', 'spec.provider.server', 'eso.store.vault-server']]);
  });
  void test('an apiserver token audience is refused (guardrails decide per namespace)', () => {
    const c = { ...ctx, apiServerAudiences: ['https://kubernetes.default.svc'] };
    const sa = { name: 'app', audiences: ['https://kubernetes.default.svc'] };
    const fs = review(
      with_(vds, {
        provider: {
          ...provider,
          auth: { kubernetes: { mountPath: 'kubernetes', role: 'app', serviceAccountRef: sa } },
        },
      }),
      c,
    );
    assert.deepEqual(fs, [
      ['deny', 'spec.provider.auth.kubernetes.serviceAccountRef.audiences', 'eso.store.token-audience'],
    ]);
  });
  void test('no serviceAccountRef: vaultgate never logs in with its own identity', () => {
    const fs = review(with_(vds, { provider: { ...provider, auth: { kubernetes: { role: 'app' } } } }));
    assert.deepEqual(fs, [
      ['deny', 'spec.provider.auth.kubernetes.serviceAccountRef', 'eso.store.kubernetes-identity'],
    ]);
  });
  void test('a reference to another namespace is refused, as in a SecretStore', () => {
    const fs = review(
      with_(vds, {
        provider: { ...provider, auth: { tokenSecretRef: { name: 't', key: 'k', namespace: 'team-b' } } },
      }),
    );
    assert.deepEqual(fs, [['deny', 'spec.provider.auth.tokenSecretRef.namespace', 'eso.store.cross-namespace']]);
  });
  void test('DELETE, parameters with a read, and a path that climbs out are refused; retrySettings warned', () => {
    assert.deepEqual(review(with_(vds, { method: 'DELETE' })), [['deny', 'spec.method', 'eso.gen.method']]);
    assert.deepEqual(review(with_(vds, { parameters: { ttl: '1h' } })), [
      ['deny', 'spec.parameters', 'eso.gen.parameters-with-read'],
    ]);
    assert.deepEqual(review(with_(vds, { method: 'POST', parameters: { ttl: '1h' } })), []);
    assert.deepEqual(
      review(with_(vds, { path: 'database/../sys/raw' })).map((f) => f.slice(1)),
      [['spec.path', 'eso.gen.vault-path']],
    );
    assert.deepEqual(review(with_(vds, { retrySettings: { maxRetries: 3 } })), [
      ['warn', 'spec.retrySettings', 'eso.gen.ignored-field'],
    ]);
  });
  void test('a generator of another controller class is admitted untouched', () => {
    assert.deepEqual(review(with_(vds, { controller: 'other', method: 'DELETE' })), []);
  });
});

void describe('Password', () => {
  void test("go-password's impossible specs are refused naming the field", () => {
    assert.deepEqual(review(with_(password, { length: 8, digits: 5, symbols: 5 })), [
      ['deny', 'spec.length', 'eso.gen.password'],
    ]);
    assert.deepEqual(review(with_(password, { allowRepeat: false, digits: 11 })), [
      ['deny', 'spec.digits', 'eso.gen.password'],
    ]);
    assert.deepEqual(review(with_(password, { allowRepeat: false, symbols: 5 })), [
      ['deny', 'spec.symbols', 'eso.gen.password'],
    ]);
    // The schema bounds the length (memory): 4096.
    assert.ok(review(with_(password, { length: 100_000 })).some(([s, f]) => s === 'deny' && f === 'spec.length'));
  });
});

void describe('ClusterGenerator', () => {
  const cg = (spec: Record<string, unknown>): KubeObject => ({
    apiVersion: API,
    kind: 'ClusterGenerator',
    metadata: { name: 'g' },
    spec,
  });
  void test('kinds vaultgate does not generate are refused; the spec must be the kind named', () => {
    assert.deepEqual(
      review(cg({ kind: 'UUID', generator: { uuidSpec: {} } })).filter(([sev]) => sev === 'deny'),
      [['deny', 'spec.kind', 'eso.gen.unsupported-kind']],
    );
    assert.deepEqual(review(cg({ kind: 'Password', generator: { vaultDynamicSecretSpec: vds.spec } })), [
      ['deny', 'spec.generator.passwordSpec', 'eso.gen.kind-spec'],
    ]);
  });
  void test("a VaultDynamicSecret's provider is checked under spec.generator.vaultDynamicSecretSpec", () => {
    const spec = { ...(vds.spec as object), provider: { ...provider, server: 'https://evil.example' } };
    assert.deepEqual(review(cg({ kind: 'VaultDynamicSecret', generator: { vaultDynamicSecretSpec: spec } })), [
      ['deny', 'spec.generator.vaultDynamicSecretSpec.provider.server', 'eso.store.vault-server'],
    ]);
  });
});

// The lease an ExternalSecret keeps from the generator (issued, renewed, revoked when replaced, deleted or
// its generatorRef removed) is asked of the role the generator's own provider logs in as: the
// VaultDynamicSecret kind's access rules, under the generator's field names.
void describe("access rules for the generator's own provider role", () => {
  const NS = 'team-a';
  type Rule = { path: string; capabilities: string[] };
  const withRole = (rules: Rule[], binding: Record<string, unknown> = {}): AdmissionContext => {
    const objects: Record<string, Record<string, unknown>> = {
      [`VaultRoleBinding/${NS}/app`]: {
        spec: { serviceAccounts: ['app'], policies: ['creds'], tokenMaxTTL: '24h', ...binding },
      },
      [`VaultPolicy/${NS}/creds`]: { spec: { rules } },
    };
    return {
      ...ctx,
      vaultPolicy: (ns, name) => objects[`VaultPolicy/${ns}/${name}`] ?? null,
      vaultRoleBinding: (ns, name) => objects[`VaultRoleBinding/${ns}/${name}`] ?? null,
      secretStore: () => null,
    };
  };
  const ours = (spec: Record<string, unknown> = {}): KubeObject =>
    with_(vds, {
      provider: { ...provider, auth: { kubernetes: { ...provider.auth.kubernetes, role: `vaultgate.${NS}.app` } } },
      ...spec,
    });
  const messages = (o: KubeObject, c: AdmissionContext): string[] => {
    const h = generatorHandlers.find((x) => x.kind === o.kind)!;
    return h
      .validate(o, undefined, c, {
        uid: 't',
        operation: 'CREATE',
        userInfo: { username: 'alice' },
        kind: { group: 'generators.external-secrets.io', version: 'v1alpha1', kind: String(o.kind) },
        resource: { group: 'generators.external-secrets.io', version: 'v1alpha1', resource: 'x' },
        object: o,
      })
      .map((f) => f.message);
  };
  const read = { path: 'database/creds/app', capabilities: ['read'] };
  const revoke = { path: 'sys/leases/revoke', capabilities: ['update'] };

  void test('the role grants read on the path (leading "/" as ESO sends it stripped) and sys/leases/revoke: admitted', () => {
    assert.deepEqual(review(ours(), withRole([read, revoke])), []);
  });
  void test('no read on the path: denied on spec.path (access-issue)', () => {
    assert.deepEqual(review(ours(), withRole([{ path: 'database/creds/other', capabilities: ['read'] }, revoke])), [
      ['deny', 'spec.path', 'vaultdynamicsecret.access-issue'],
    ]);
  });
  void test("no sys/leases/revoke: denied on the provider's role, no VaultDynamicSecret-only way out offered", () => {
    const c = withRole([read]);
    assert.deepEqual(review(ours(), c), [
      ['deny', 'spec.provider.auth.kubernetes.role', 'vaultdynamicsecret.access-revoke'],
    ]);
    const [m] = messages(ours(), c);
    assert.match(
      m ?? '',
      /^the generator provider's Vault role \(VaultRoleBinding team-a\/app, policies team-a\/creds and Vault's default\) lacks update on sys\/leases\/revoke, needed to revoke leases on delete and of replaced credentials/,
    );
    assert.doesNotMatch(m ?? '', /revocation\.onDelete/);
  });
  void test('sys/leases/renew denied by a known policy: denied (access-renew)', () => {
    assert.deepEqual(review(ours(), withRole([read, revoke, { path: 'sys/leases/renew', capabilities: ['deny'] }])), [
      ['deny', 'spec.provider.auth.kubernetes.role', 'vaultdynamicsecret.access-renew'],
    ]);
  });
  void test('a PUT generator needs update with its parameters; a ClusterGenerator is checked under its own field', () => {
    const put = { path: 'database/creds/app', capabilities: ['update'] };
    const spec = ours({ method: 'PUT', parameters: { ttl: '1h' } }).spec as Record<string, unknown>;
    const cluster: KubeObject = {
      apiVersion: API,
      kind: 'ClusterGenerator',
      metadata: { name: 'pg' },
      spec: { kind: 'VaultDynamicSecret', generator: { vaultDynamicSecretSpec: spec } },
    };
    assert.deepEqual(review(cluster, withRole([read, revoke])), [
      ['deny', 'spec.generator.vaultDynamicSecretSpec.path', 'vaultdynamicsecret.access-issue'],
    ]);
    assert.deepEqual(review(cluster, withRole([put, revoke])), []);
  });
  void test('tokens living no longer than the 2 min a replacement is minted before their end: denied (token-lifetime)', () => {
    assert.deepEqual(review(ours(), withRole([read, revoke], { tokenMaxTTL: '90s' })), [
      ['deny', 'spec.provider.auth.kubernetes.role', 'vaultdynamicsecret.token-lifetime'],
    ]);
  });
  void test('a VaultPolicy not known yet: the same gap only warns', () => {
    assert.deepEqual(review(ours(), withRole([read], { policies: ['creds', 'later'] })), [
      ['warn', 'spec.provider.auth.kubernetes.role', 'vaultdynamicsecret.access-revoke'],
    ]);
  });
  void test("a role vaultgate does not write (ESO's example): one warning on spec.provider.auth listing the needs", () => {
    assert.deepEqual(review(vds, withRole([])), [
      ['warn', 'spec.provider.auth', 'vaultdynamicsecret.access-unchecked'],
    ]);
    assert.match(
      messages(vds, withRole([]))[0] ?? '',
      /the generator's provider logs in as kubernetes-auth role "app", which is not a VaultRoleBinding's role.*read on database\/creds\/app.*sys\/leases\/revoke/,
    );
  });
  void test('LIST (no lease) and no role-binding lookups (the controller re-check): nothing said', () => {
    assert.deepEqual(review(ours({ method: 'LIST' }), withRole([])), []);
    assert.deepEqual(review(ours(), ctx), []);
  });
});
