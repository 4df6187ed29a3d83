// PushSecret reconciler on the Vault simulator and the in-memory Kubernetes: pushes with the store's own
// identity, ESO's markers and refusals, updatePolicy, KV v2 check-and-set, deletionPolicy Delete (its
// finalizer; only what this PushSecret pushed is deleted), the namespace's guardrails on the paths, KV v1,
// dataTo, and no secret value in any status or Event. Real servers: test/real/eso-kinds.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FakeKube } from './harness.ts';
import { stopVault, type Vault } from './eso-world.ts';
import {
  KV1_STORE,
  KV2_STORE,
  LEGACY_KV_GUARDRAIL,
  pushReady,
  pushSecret,
  pushWorld,
  type PushWorld,
  rootOf,
  startPushVault,
} from './push-world.ts';
import { createKvApi } from '../../../vault/kv.ts';
import { SECRETS } from '../../../kube/resources.ts';
import { PUSH_SECRETS, VAULT_GUARDRAILS } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { pushStoreIndex, pushStoreKeys } from '../../../controller/reconcilers/pushsecret.ts';
import { PUSH_FINALIZER } from '../../../eso/push.ts';

let v: Vault;
void before(async () => {
  v = await startPushVault([KV2_STORE, KV1_STORE]);
});
void after(() => stopVault(v));

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const kv2 = () => createKvApi(rootOf(v), { mount: 'secret', version: 2 });
const world = (storeExtra: Record<string, unknown> = {}): PushWorld =>
  pushWorld(
    v,
    [KV2_STORE, KV1_STORE],
    { user: 'app', password: 'pw-PUSHED-1', db_U002e_host: 'db.internal' },
    storeExtra,
  );
const ps = (name: string, spec: Record<string, unknown>): KubeObject => pushSecret(name, spec);
const ready = pushReady;
const statusOf = (kube: FakeKube, name: string) =>
  kube.getObj(PUSH_SECRETS, `team-a/${name}`)?.status as
    { syncedPushSecrets?: Record<string, Record<string, unknown>> } | undefined;

void describe('PushSecret → Vault', () => {
  void test('a key into a property and the whole Secret into one remote secret, marked as ESO marks them and naming this PushSecret', async () => {
    const w = world();
    w.kube.put(
      PUSH_SECRETS,
      ps('app', {
        data: [
          { match: { secretKey: 'password', remoteRef: { remoteKey: 'team-a/app/db', property: 'password' } } },
          { match: { remoteRef: { remoteKey: 'team-a/app/all' } } },
        ],
      }),
    );
    await w.run('app');
    assert.equal(ready(w.kube, 'app')?.reason, 'Synced', JSON.stringify(ready(w.kube, 'app')));
    assert.deepEqual((await kv2().read('team-a/app/db'))?.data, { password: 'pw-PUSHED-1' });
    assert.deepEqual((await kv2().read('team-a/app/all'))?.data, {
      db_U002e_host: 'db.internal',
      password: 'pw-PUSHED-1',
      user: 'app',
    });
    assert.deepEqual((await kv2().readMetadata('team-a/app/db'))?.customMetadata, {
      'managed-by': 'external-secrets',
      'vaultgate.io/pushed-by': 'team-a/app',
    });
    assert.deepEqual(Object.keys(statusOf(w.kube, 'app')?.syncedPushSecrets?.['SecretStore/vault'] ?? {}).sort(), [
      'team-a/app/all',
      'team-a/app/db/password',
    ]);
    assert.doesNotMatch(
      JSON.stringify(w.kube.getObj(PUSH_SECRETS, 'team-a/app')) + JSON.stringify(w.kube.events),
      /pw-PUSHED-1|db\.internal/,
    );
    // Not due again (refreshInterval 1h): nothing written.
    const version = (await kv2().readMetadata('team-a/app/db'))?.currentVersion;
    await w.run('app');
    assert.equal((await kv2().readMetadata('team-a/app/db'))?.currentVersion, version);
  });

  void test('a remote secret nobody pushed is never overwritten (ESO: "secret not managed by external-secrets")', async () => {
    await kv2().write('team-a/app/theirs', { password: 'hands-off' });
    const w = world();
    w.kube.put(
      PUSH_SECRETS,
      ps('intruder', {
        data: [
          { match: { secretKey: 'password', remoteRef: { remoteKey: 'team-a/app/theirs', property: 'password' } } },
        ],
      }),
    );
    await w.run('intruder');
    assert.equal(ready(w.kube, 'intruder')?.reason, 'Errored');
    assert.match(ready(w.kube, 'intruder')?.message ?? '', /secret not managed by external-secrets/);
    assert.deepEqual((await kv2().read('team-a/app/theirs'))?.data, { password: 'hands-off' });
  });

  void test('updatePolicy IfNotExists leaves an existing value; Replace overwrites one it manages', async () => {
    const w = world();
    w.kube.put(
      PUSH_SECRETS,
      ps('once', {
        updatePolicy: 'IfNotExists',
        data: [{ match: { secretKey: 'user', remoteRef: { remoteKey: 'team-a/app/once', property: 'user' } } }],
      }),
    );
    await w.run('once');
    w.kube.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'src', namespace: 'team-a' },
      data: { user: b64('changed'), password: b64('pw-PUSHED-1') },
    });
    w.kube.put(PUSH_SECRETS, {
      ...ps('once', {
        updatePolicy: 'IfNotExists',
        data: [{ match: { secretKey: 'user', remoteRef: { remoteKey: 'team-a/app/once', property: 'user' } } }],
      }),
      metadata: { name: 'once', namespace: 'team-a', labels: { bump: '1' } },
    });
    await w.run('once');
    assert.deepEqual((await kv2().read('team-a/app/once'))?.data, { user: 'app' });
    assert.match(ready(w.kube, 'once')?.message ?? '', /Existing secrets in providers unchanged/);
  });

  void test("the namespace's guardrails decide where it may write: outside team-a's subtree is refused before Vault is asked", async () => {
    const w = world();
    w.kube.put(
      PUSH_SECRETS,
      ps('escape', {
        data: [{ match: { secretKey: 'password', remoteRef: { remoteKey: 'team-b/stolen', property: 'p' } } }],
      }),
    );
    await w.run('escape');
    assert.equal(ready(w.kube, 'escape')?.reason, 'Errored');
    assert.match(
      ready(w.kube, 'escape')?.message ?? '',
      /pushing to secret\/data\/team-b\/stolen is not allowed in namespace team-a: .*rule guardrail\.allowed-path/,
    );
    assert.equal(await kv2().read('team-b/stolen'), undefined);
  });

  void test('KV v2 check-and-set when the store requires it: a key that demands CAS is written', async () => {
    await kv2().write('team-a/app/cas', { k: 'v' });
    await kv2().writeMetadata('team-a/app/cas', {
      casRequired: true,
      customMetadata: { 'managed-by': 'external-secrets' },
    });
    const plain = world();
    plain.kube.put(
      PUSH_SECRETS,
      ps('cas', {
        data: [{ match: { secretKey: 'user', remoteRef: { remoteKey: 'team-a/app/cas', property: 'user' } } }],
      }),
    );
    await plain.run('cas');
    assert.equal(ready(plain.kube, 'cas')?.reason, 'Errored', 'without check-and-set Vault refuses the write');
    const w = world({ checkAndSet: { required: true } });
    w.kube.put(
      PUSH_SECRETS,
      ps('cas', {
        data: [{ match: { secretKey: 'user', remoteRef: { remoteKey: 'team-a/app/cas', property: 'user' } } }],
      }),
    );
    await w.run('cas');
    assert.equal(ready(w.kube, 'cas')?.reason, 'Synced', JSON.stringify(ready(w.kube, 'cas')));
    assert.deepEqual((await kv2().read('team-a/app/cas'))?.data, { k: 'v', user: 'app' });
  });

  void test('deletionPolicy Delete: a finalizer; what it stops pushing and, when it goes, what it pushed is deleted, but never what another PushSecret pushed', async () => {
    const w = world();
    const spec = (keys: string[]) => ({
      deletionPolicy: 'Delete',
      data: keys.map((k) => ({ match: { secretKey: 'user', remoteRef: { remoteKey: `team-a/del/${k}` } } })),
    });
    w.kube.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'src', namespace: 'team-a' },
      data: { user: b64('{"u":"x"}') },
    });
    w.kube.put(PUSH_SECRETS, ps('del', spec(['a', 'b', 'c'])));
    await w.run('del');
    await w.run('del');
    assert.ok((w.kube.getObj(PUSH_SECRETS, 'team-a/del')?.metadata.finalizers ?? []).includes(PUSH_FINALIZER));
    assert.equal(ready(w.kube, 'del')?.reason, 'Synced', JSON.stringify(ready(w.kube, 'del')));
    // c is taken over by another PushSecret (it pushed last).
    await kv2().writeMetadata('team-a/del/c', {
      customMetadata: { 'managed-by': 'external-secrets', 'vaultgate.io/pushed-by': 'team-a/other' },
    });
    w.kube.put(PUSH_SECRETS, {
      ...ps('del', spec(['a'])),
      metadata: { ...w.kube.getObj(PUSH_SECRETS, 'team-a/del')!.metadata },
    });
    await w.run('del');
    assert.notEqual(await kv2().read('team-a/del/a'), undefined);
    assert.equal(await kv2().readMetadata('team-a/del/b'), undefined, 'b deleted, every version');
    assert.notEqual(await kv2().read('team-a/del/c'), undefined, 'c was last pushed by another PushSecret: kept');
    w.kube.remove(PUSH_SECRETS, 'team-a/del');
    await w.run('del');
    assert.equal(await kv2().readMetadata('team-a/del/a'), undefined);
    assert.equal(w.kube.getObj(PUSH_SECRETS, 'team-a/del'), undefined, 'finalizer removed, object gone');
  });

  void test("KV v1 (where a guardrail allows it) keeps the markers in the data (ESO's layout); dataTo per key and as one bundle", async () => {
    const w = world();
    w.kube.put(VAULT_GUARDRAILS, LEGACY_KV_GUARDRAIL);
    w.kube.put(
      PUSH_SECRETS,
      ps('to', {
        secretStoreRefs: [{ name: 'vault' }, { name: 'legacy' }],
        dataTo: [
          {
            storeRef: { name: 'vault' },
            match: { regexp: '^(user|db)' },
            conversionStrategy: 'ReverseUnicode',
            rewrite: [{ regexp: { source: '^(.*)$', target: 'team-a/keys/$1' } }],
          },
          { storeRef: { labelSelector: { matchLabels: { tier: 'legacy' } } }, remoteKey: 'team-a/bundle' },
        ],
      }),
    );
    await w.run('to');
    assert.equal(
      ready(w.kube, 'to')?.reason,
      'Errored',
      'a per-key push needs a JSON object value (the Vault provider) ',
    );
    // With a JSON bundle only: the legacy store.
    w.kube.put(
      PUSH_SECRETS,
      ps('to', {
        secretStoreRefs: [{ name: 'legacy' }],
        dataTo: [
          {
            storeRef: { labelSelector: { matchLabels: { tier: 'legacy' } } },
            remoteKey: 'team-a/bundle',
            match: { regexp: '^(user|password)$' },
          },
        ],
      }),
    );
    await w.run('to');
    assert.equal(ready(w.kube, 'to')?.reason, 'Synced', JSON.stringify(ready(w.kube, 'to')));
    const kv1 = createKvApi(rootOf(v), { mount: 'kv1', version: 1 });
    assert.deepEqual((await kv1.read('team-a/bundle'))?.data, {
      password: 'pw-PUSHED-1',
      user: 'app',
      custom_metadata: { 'managed-by': 'external-secrets', 'vaultgate.io/pushed-by': 'team-a/to' },
    });
  });
});

void test('a store event wakes the PushSecrets naming it or selecting its kind, in its namespace only', () => {
  const ps = (ns: string, refs: unknown[]): KubeObject => ({
    metadata: { name: 'p', namespace: ns },
    spec: { secretStoreRefs: refs },
  });
  const store = (ns: string | undefined, name: string): KubeObject => ({
    metadata: { name, ...(ns ? { namespace: ns } : {}) },
  });
  const wakes = (p: KubeObject, s: KubeObject): boolean => pushStoreIndex(p).some((k) => pushStoreKeys(s).includes(k));
  const named = ps('team-a', [
    { name: 'vault', kind: 'SecretStore' },
    { name: 'shared', kind: 'ClusterSecretStore' },
  ]);
  const selecting = ps('team-a', [{ labelSelector: { matchLabels: { tier: 'x' } } }]);
  assert.deepEqual(
    [
      wakes(named, store('team-a', 'vault')),
      wakes(named, store(undefined, 'shared')),
      wakes(named, store('team-a', 'other')),
      wakes(named, store('team-b', 'vault')),
      wakes(selecting, store('team-a', 'any')),
      wakes(selecting, store('team-b', 'any')),
      wakes(selecting, store(undefined, 'any')),
    ],
    [true, true, false, false, true, false, false],
  );
});
