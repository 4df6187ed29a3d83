// Admission/Vault-write events carry no secret values; the signing key is created once in a Secret
// (replicas racing agree on one key) and its public half is published as a JWKS that keeps old keys.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { auditAdmission, auditVaultWrite } from '../../trail/events.ts';
import {
  JWKS_CONFIGMAP_FIELD,
  KEY_SECRET_FIELD,
  generateAuditKey,
  loadOrCreateAuditKey,
  parseJwks,
  publishJwks,
  type AuditKeyStore,
  type KubeObjectBody,
} from '../../trail/keys.ts';
import type { AdmissionDecision, AdmissionRequest } from '../../webhook/admission/types.ts';

const SECRET_VALUE = 'hunter2-very-secret';

function request(over: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'u-1',
    kind: { group: 'external-secrets.io', version: 'v1', kind: 'ExternalSecret' },
    resource: { group: 'external-secrets.io', version: 'v1', resource: 'externalsecrets' },
    namespace: 'payments',
    name: 'db',
    operation: 'CREATE',
    userInfo: { username: 'alice', uid: 'x', groups: ['devs'], extra: { token: [SECRET_VALUE] } },
    object: { metadata: { name: 'db' }, spec: { target: { template: { data: { password: SECRET_VALUE } } } } },
    ...over,
  };
}

void describe('auditAdmission', () => {
  void test('denied: outcome, rules, message; no object content and no userInfo.extra', () => {
    const decision: AdmissionDecision = {
      response: {
        uid: 'u-1',
        allowed: false,
        status: { code: 403, message: 'spec.provider: only vault is supported' },
        warnings: ['w1'],
      },
      rules: ['eso.provider', 'eso.provider'],
      patchOps: [],
    };
    const e = auditAdmission(decision, request(), { webhook: 'validating' });
    assert.deepEqual(e, {
      type: 'admission',
      webhook: 'validating',
      uid: 'u-1',
      kind: 'external-secrets.io/v1/ExternalSecret',
      namespace: 'payments',
      name: 'db',
      operation: 'CREATE',
      user: { username: 'alice', groups: ['devs'] },
      outcome: 'denied',
      rules: ['eso.provider'],
      warnings: ['w1'],
      message: 'spec.provider: only vault is supported',
      patch: [],
    });
    assert.doesNotMatch(JSON.stringify(e), new RegExp(SECRET_VALUE));
  });

  void test('mutated: patch ops keep op and path, never the value', () => {
    const decision: AdmissionDecision = {
      response: { uid: 'u-1', allowed: true },
      rules: [],
      patchOps: [{ op: 'add', path: '/spec/target/template/data/password', value: SECRET_VALUE }],
    };
    const e = auditAdmission(
      decision,
      request({ kind: { group: '', version: 'v1', kind: 'Secret' }, name: undefined }),
    );
    assert.equal(e.outcome, 'mutated');
    assert.equal(e.kind, 'v1/Secret');
    assert.equal(e.name, 'db', 'the name comes from metadata.name when the request has none');
    assert.deepEqual(e.patch, [{ op: 'add', path: '/spec/target/template/data/password' }]);
    assert.doesNotMatch(JSON.stringify(e), new RegExp(SECRET_VALUE));
  });

  void test('allowed without changes', () => {
    assert.equal(
      auditAdmission({ response: { uid: 'u', allowed: true }, rules: [], patchOps: [] }, request()).outcome,
      'allowed',
    );
  });
});

void test('auditVaultWrite hashes content instead of keeping it; equal role bodies hash equally regardless of key order', () => {
  const a = auditVaultWrite({
    action: 'repair',
    object: 'role',
    vaultName: 'vaultgate.p.r',
    mount: 'kubernetes',
    reason: 'drift',
    content: { b: 1, a: [SECRET_VALUE] },
  });
  const b = auditVaultWrite({
    action: 'repair',
    object: 'role',
    vaultName: 'vaultgate.p.r',
    mount: 'kubernetes',
    reason: 'drift',
    content: { a: [SECRET_VALUE], b: 1 },
  });
  assert.equal(a.contentSha256, b.contentSha256);
  assert.match(a.contentSha256 ?? '', /^[0-9a-f]{64}$/);
  assert.doesNotMatch(JSON.stringify(a), new RegExp(SECRET_VALUE));
});

function fakeStore(
  opts: { raceWith?: string } = {},
): AuditKeyStore & { secrets: Map<string, KubeObjectBody>; cms: Map<string, KubeObjectBody> } {
  const secrets = new Map<string, KubeObjectBody>();
  const cms = new Map<string, KubeObjectBody>();
  let rv = 0;
  const conflict = () => Object.assign(new Error('AlreadyExists'), { code: 409 });
  return {
    secrets,
    cms,
    getSecret: (ns, n) => Promise.resolve(secrets.get(`${ns}/${n}`) as { data?: Record<string, string> } | undefined),
    createSecret: (ns, s) => {
      if (opts.raceWith && !secrets.has(`${ns}/${s.metadata.name}`)) {
        secrets.set(`${ns}/${s.metadata.name}`, {
          ...s,
          data: { [KEY_SECRET_FIELD]: Buffer.from(opts.raceWith).toString('base64') },
        });
        return Promise.reject(conflict());
      }
      if (secrets.has(`${ns}/${s.metadata.name}`)) return Promise.reject(conflict());
      secrets.set(`${ns}/${s.metadata.name}`, s);
      return Promise.resolve(s);
    },
    getConfigMap: (ns, n) => Promise.resolve(cms.get(`${ns}/${n}`)),
    createConfigMap: (ns, cm) => {
      cms.set(`${ns}/${cm.metadata.name}`, { ...cm, metadata: { ...cm.metadata, resourceVersion: String(++rv) } });
      return Promise.resolve(cm);
    },
    replaceConfigMap: (ns, cm) => {
      const cur = cms.get(`${ns}/${cm.metadata.name}`);
      if (cur?.metadata.resourceVersion !== cm.metadata.resourceVersion)
        return Promise.reject(Object.assign(new Error('Conflict'), { code: 409 }));
      cms.set(`${ns}/${cm.metadata.name}`, { ...cm, metadata: { ...cm.metadata, resourceVersion: String(++rv) } });
      return Promise.resolve(cm);
    },
  };
}

void describe('signing key in a Secret, JWKS in a ConfigMap', () => {
  void test('generated on first start, read back on the next; one key per cluster', async () => {
    const store = fakeStore();
    const first = await loadOrCreateAuditKey(store, { namespace: 'vaultgate' });
    assert.equal(first.created, true);
    const secret = store.secrets.get('vaultgate/vaultgate-audit-key');
    assert.equal(secret?.metadata.labels?.['app.kubernetes.io/managed-by'], 'vaultgate');
    const second = await loadOrCreateAuditKey(store, { namespace: 'vaultgate' });
    assert.equal(second.created, false);
    assert.equal(second.key.kid, first.key.kid);
  });

  void test("two replicas racing: the loser (409) uses the winner's key", async () => {
    const winner = await generateAuditKey();
    const pem = winner.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const { key, created } = await loadOrCreateAuditKey(fakeStore({ raceWith: pem }), { namespace: 'vaultgate' });
    assert.equal(created, false);
    assert.equal(key.kid, winner.kid);
  });

  void test('a corrupt Secret is refused without quoting its content', async () => {
    const store = fakeStore();
    store.secrets.set('vaultgate/vaultgate-audit-key', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'x', namespace: 'vaultgate' },
      data: { [KEY_SECRET_FIELD]: Buffer.from(`garbage ${SECRET_VALUE}`).toString('base64') },
    });
    await assert.rejects(
      loadOrCreateAuditKey(store, { namespace: 'vaultgate' }),
      (err: Error) => !err.message.includes(SECRET_VALUE) && /PKCS#8/.test(err.message),
    );
  });

  void test('the JWKS keeps earlier public keys so older records still verify', async () => {
    const store = fakeStore();
    const k1 = await generateAuditKey();
    const k2 = await generateAuditKey();
    await publishJwks(store, { namespace: 'vaultgate' }, k1);
    await publishJwks(store, { namespace: 'vaultgate' }, k2);
    await publishJwks(store, { namespace: 'vaultgate' }, k2);
    const text = store.cms.get('vaultgate/vaultgate-audit-jwks')?.data as Record<string, string>;
    const jwks = parseJwks(text[JWKS_CONFIGMAP_FIELD]!);
    assert.deepEqual(
      jwks.keys.map((k) => k.kid),
      [k1.kid, k2.kid],
    );
    assert.ok(
      jwks.keys.every((k) => k.d === undefined),
      'no private component published',
    );
  });
});
