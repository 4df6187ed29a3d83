// The signing key is created once in a Secret (replicas racing agree on one key) and its public half is
// published as a JWKS that keeps old keys.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
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

const SECRET_VALUE = 'hunter2-very-secret';

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
