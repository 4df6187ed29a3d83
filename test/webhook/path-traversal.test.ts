// Issue #21.1: a Vault path a tenant writes must name itself. `team-a/../team-b/db` passed the guardrails'
// prefix check and the HTTP client then resolved `..`: team-b's secret was overwritten (and, with
// deletionPolicy Delete, deleted). Every kind that carries such a path is refused at admission, and the
// same handlers are what the controller re-runs (admissionDenials) before it reads or writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admissionDenials } from '../../controller/reconcilers/common.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import type { KubeObject } from '../../kube/objects.ts';

const ESO = 'external-secrets.io/v1';
const meta = { name: 'x', namespace: 'team-a', uid: 'u1' };
const TRICKS = [
  'team-a/../team-b/db',
  'team-a/./db',
  'team-a//db',
  'team-a/%2e%2e/team-b/db',
  'team-a\\..\\team-b',
  'team-a/db?x=',
  'team-a/db#x',
];

function denied(o: KubeObject): Array<{ field: string; rule: string; message: string }> {
  return admissionDenials(o, defaultContext()).map((f) => ({ field: f.field, rule: f.rule, message: f.message }));
}

const es = (spec: Record<string, unknown>): KubeObject => ({
  apiVersion: ESO,
  kind: 'ExternalSecret',
  metadata: meta,
  spec: { secretStoreRef: { name: 's' }, target: { name: 't' }, ...spec },
});

test('ExternalSecret: remoteRef.key, extract.key and find.path refuse dot, empty and URL-changing segments', () => {
  for (const key of TRICKS) {
    const cases: Array<[KubeObject, string]> = [
      [es({ data: [{ secretKey: 'a', remoteRef: { key } }] }), 'spec.data[0].remoteRef.key'],
      [es({ dataFrom: [{ extract: { key } }] }), 'spec.dataFrom[0].extract.key'],
      [es({ dataFrom: [{ find: { path: key, name: { regexp: '.*' } } }] }), 'spec.dataFrom[0].find.path'],
    ];
    for (const [o, field] of cases) {
      const d = denied(o).filter((f) => f.rule === 'eso.es.vault-path');
      assert.equal(d.length, 1, `${field} = ${key}: ${JSON.stringify(denied(o))}`);
      assert.equal(d[0]!.field, field);
    }
  }
  assert.deepEqual(
    denied(
      es({
        data: [{ secretKey: 'a', remoteRef: { key: 'team-a/db' } }],
        dataFrom: [{ find: { path: 'team-a/', name: { regexp: '.*' } } }],
      }),
    ),
    [],
  );
});

test('PushSecret: remoteKey in data and dataTo is refused the same way', () => {
  const ps = (spec: Record<string, unknown>): KubeObject => ({
    apiVersion: 'external-secrets.io/v1alpha1',
    kind: 'PushSecret',
    metadata: meta,
    spec: { secretStoreRefs: [{ name: 's', kind: 'SecretStore' }], selector: { secret: { name: 'src' } }, ...spec },
  });
  for (const key of TRICKS) {
    const a = denied(ps({ data: [{ match: { secretKey: 'password', remoteRef: { remoteKey: key } } }] }));
    assert.deepEqual(
      a.map((f) => [f.field, f.rule]),
      [['spec.data[0].match.remoteRef.remoteKey', 'eso.ps.vault-path']],
      key,
    );
    const b = denied(ps({ dataTo: [{ storeRef: { name: 's' }, remoteKey: key }] }));
    assert.deepEqual(
      b.map((f) => [f.field, f.rule]),
      [['spec.dataTo[0].remoteKey', 'eso.ps.vault-path']],
      key,
    );
  }
});

test('SecretStore: the mount path and auth mount paths are refused the same way', () => {
  const store = (vault: Record<string, unknown>): KubeObject => ({
    apiVersion: ESO,
    kind: 'SecretStore',
    metadata: meta,
    spec: {
      provider: {
        vault: {
          server: 'http://vault:8200',
          path: 'secret',
          version: 'v2',
          auth: { kubernetes: { role: 'r', serviceAccountRef: { name: 'sa' } } },
          ...vault,
        },
      },
    },
  });
  assert.deepEqual(
    denied(store({ path: 'secret/../sys' })).map((f) => [f.field, f.rule]),
    [['spec.provider.vault.path', 'eso.store.vault-path']],
  );
  assert.deepEqual(
    denied(
      store({
        auth: { kubernetes: { role: 'r', mountPath: 'kubernetes/../../sys', serviceAccountRef: { name: 'sa' } } },
      }),
    ).map((f) => [f.field, f.rule]),
    [['spec.provider.vault.auth.kubernetes.mountPath', 'eso.store.vault-path']],
  );
});

test('VaultPolicy: a dot segment in a rule path or in raw HCL is refused (not reported later as a grant elsewhere)', () => {
  const vp = (spec: Record<string, unknown>): KubeObject => ({
    apiVersion: 'vaultgate.io/v1alpha1',
    kind: 'VaultPolicy',
    metadata: { name: 'p', namespace: 'orders', uid: 'u2' },
    spec,
  });
  const rule = denied(vp({ rules: [{ path: 'secret/data/orders/../payments/db', capabilities: ['read'] }] }));
  assert.ok(
    rule.some(
      (f) => f.field === 'spec.rules[0].path' && f.rule === 'vaultpolicy.path-syntax' && /"\.\."/.test(f.message),
    ),
    JSON.stringify(rule),
  );
  const hcl = denied(vp({ policy: 'path "secret/data/orders/../payments/db" {\n  capabilities = ["read"]\n}\n' }));
  assert.ok(
    hcl.some((f) => f.rule === 'vaultpolicy.path-syntax' && /"\.\."/.test(f.message)),
    JSON.stringify(hcl),
  );
  assert.ok(
    denied(vp({ rules: [{ path: 'secret/data/orders/%2e%2e/payments/db', capabilities: ['read'] }] })).some(
      (f) => f.rule === 'vaultpolicy.path-syntax',
    ),
  );
  assert.deepEqual(denied(vp({ rules: [{ path: 'secret/data/orders/.config/*', capabilities: ['read'] }] })), []);
});
