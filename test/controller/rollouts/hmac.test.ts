// The pod-template value: keyed, content-only, and it tells a reader of Deployments nothing about the data.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { HmacKeyring, KEY_FIELD, secretHmac, templateHmac } from '../../../controller/rollouts/hmac.ts';
import { SECRETS } from '../../../kube/resources.ts';
import { FakeKubeClient } from '../../sim/kube-fake-client.ts';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const key = randomBytes(32);
const db = { name: 'db', data: { username: b64('app'), password: b64('hunter2') } };
const tls = { name: 'tls', data: { 'tls.crt': b64('CERT') } };

// The coordinator's composition: one HMAC per Secret, the template value over them.
const secretsHmac = (k: Buffer, secrets: { name: string; data: Record<string, string> }[]): string =>
  templateHmac(k, Object.fromEntries(secrets.map((s) => [s.name, secretHmac(k, s)])));

void describe('controller/rollouts/hmac: secretHmac, templateHmac', () => {
  void test('the same data in any order gives the same value; any change of name, key or value another', () => {
    const v = secretsHmac(key, [db, tls]);
    assert.equal(
      secretsHmac(key, [tls, { name: 'db', data: { password: db.data.password, username: db.data.username } }]),
      v,
    );
    const others = [
      [{ ...db, data: { ...db.data, password: b64('hunter3') } }, tls],
      [{ ...db, name: 'db2' }, tls],
      [{ ...db, data: { user: db.data.username, password: db.data.password } }, tls],
      [db],
      // No encoding ambiguity between a key/value split and a Secret boundary.
      [{ name: 'db', data: { username: `${db.data.username}","password` } }, tls],
    ];
    for (const o of others) assert.notEqual(secretsHmac(key, o), v);
    assert.notEqual(secretHmac(key, db), secretHmac(key, { ...db, data: { ...db.data, password: b64('hunter3') } }));
  });

  void test('keyed: another key, another value; without the key no plain hash of the data matches', () => {
    for (const v of [secretsHmac(key, [db]), secretHmac(key, db)]) revealsNothing(v);
    assert.notEqual(secretsHmac(randomBytes(32), [db]), secretsHmac(key, [db]));
    assert.notEqual(secretHmac(randomBytes(32), db), secretHmac(key, db));
  });
});

/** Nothing in the value can be matched against a plain hash of guessed data, nor its size. */
function revealsNothing(v: string): void {
  const digest = v.replace(/^v1\./, '');
  const inputs = [
    JSON.stringify([
      'db',
      [
        ['password', db.data.password],
        ['username', db.data.username],
      ],
    ]),
    JSON.stringify([
      [
        'db',
        [
          ['password', db.data.password],
          ['username', db.data.username],
        ],
      ],
    ]),
    'hunter2',
    'app',
    b64('hunter2'),
    'password=hunter2',
    `password=${b64('hunter2')}\nusername=${b64('app')}`,
    'password=hunter2username=app',
  ];
  for (const alg of ['sha1', 'sha256', 'sha512', 'md5']) {
    for (const input of inputs) {
      const h = createHash(alg).update(input);
      const bytes = h.digest();
      for (const enc of ['hex', 'base64', 'base64url'] as const)
        assert.ok(!v.includes(bytes.toString(enc)) && !bytes.toString(enc).includes(digest), `${alg}/${enc}`);
    }
  }
  // The value is fixed-size whatever the data's size (no length oracle).
  assert.equal(secretsHmac(key, [{ name: 'db', data: { password: b64('x'.repeat(10_000)) } }]).length, v.length);
  assert.ok(!v.includes(db.data.password) && !v.includes('hunter2'));
}

void describe('controller/rollouts/hmac: HmacKeyring', () => {
  void test('creates the key Secret once; a restarted controller (new keyring) reads the same key', async () => {
    const kube = new FakeKubeClient({ namespaces: ['default', 'vaultgate-system'] });
    const first = await new HmacKeyring(kube, 'vaultgate-system').key();
    assert.equal(first.length, 32);
    const again = await new HmacKeyring(kube, 'vaultgate-system').key();
    assert.deepEqual(again, first);
    assert.equal(kube.calls.filter((c) => c.verb === 'create').length, 1);
  });

  void test("the chart's empty Secret is filled once (no right to create Secrets needed); racing replicas agree", async () => {
    const kube = new FakeKubeClient({ namespaces: ['vaultgate-system'] });
    await kube.create(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'vaultgate-rollout-key', namespace: 'vaultgate-system' },
      type: 'Opaque',
    });
    const [a, b] = await Promise.all([
      new HmacKeyring(kube, 'vaultgate-system').key(),
      new HmacKeyring(kube, 'vaultgate-system').key(),
    ]);
    assert.deepEqual(a, b);
    assert.equal(a.length, 32);
    assert.equal(
      kube.calls.filter((c) => c.verb === 'create' && c.resource === 'secrets').length,
      1,
      "only the test's own create",
    );
    assert.deepEqual(await new HmacKeyring(kube, 'vaultgate-system').key(), a);
  });

  void test("two replicas racing: one creates, the other reads the winner's key", async () => {
    const kube = new FakeKubeClient({ namespaces: ['vaultgate-system'] });
    const [a, b] = await Promise.all([
      new HmacKeyring(kube, 'vaultgate-system').key(),
      new HmacKeyring(kube, 'vaultgate-system').key(),
    ]);
    assert.deepEqual(a, b);
  });

  void test('a key edited by hand is refused with a message, never replaced', async () => {
    const kube = new FakeKubeClient({ namespaces: ['vaultgate-system'] });
    await kube.create(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'vaultgate-rollout-key', namespace: 'vaultgate-system' },
      data: { [KEY_FIELD]: b64('short') },
    });
    await assert.rejects(
      new HmacKeyring(kube, 'vaultgate-system').key(),
      /vaultgate-system\/vaultgate-rollout-key.*32-byte "hmac-key"/,
    );
    const kept = await kube.get<{ data: Record<string, string> } & { metadata: { name: string } }>(
      SECRETS,
      'vaultgate-rollout-key',
      'vaultgate-system',
    );
    assert.equal(kept?.data[KEY_FIELD], b64('short'));
  });
});
