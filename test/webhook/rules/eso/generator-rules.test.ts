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
