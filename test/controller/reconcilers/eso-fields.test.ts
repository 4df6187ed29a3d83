// The ExternalSecret fields vaultgate used to refuse (issue #13), through the reconciler on the Vault
// simulator: creationPolicy CreateOrMerge, template.metadata.finalizers, syncWindows, a per-entry
// sourceRef.storeRef, remoteRef.version and metadataPolicy Fetch, each as ESO does it (v0.16.2 where
// it has the field, v2.9 for the later ones). The real tier runs the same on real servers
// (test/real/eso-kinds.test.ts, and the ESO side-by-side corpus).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readyOf } from './harness.ts';
import {
  EXTERNAL_SECRETS,
  SECRETS,
  externalSecret,
  secretData,
  startVault,
  stopVault,
  world,
  type Vault,
} from './eso-world.ts';
import { SECRET_STORES } from '../../../schemas/resources.ts';

let v: Vault;
void before(async () => {
  v = await startVault();
  await v.kv.write('team-a/db', { user: 'app', password: 'pw-1' });
  await v.kv.write('team-a/db', { user: 'app', password: 'pw-2' });
  await v.kv.write('team-a/tagged', { k: 'v' });
  await v.kv.writeMetadata('team-a/tagged', { customMetadata: { owner: 'team-a', tier: 'gold' } });
  await v.kv.write('team-a/untagged', { k: 'v' });
});
void after(() => stopVault(v));

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const data = [{ secretKey: 'password', remoteRef: { key: 'team-a/db', property: 'password' } }];

void describe('creationPolicy CreateOrMerge', () => {
  void test('no Secret yet: it is created without an owner (as Orphan), managed', async () => {
    const w = await world(v);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('com', { data, target: { name: 'com', creationPolicy: 'CreateOrMerge' } }),
    );
    await w.kube.reconcile(w.es, 'team-a/com');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/com'))?.reason, 'SecretSynced');
    const s = w.kube.getObj(SECRETS, 'team-a/com')!;
    assert.deepEqual(s.metadata.ownerReferences ?? [], []);
    assert.equal(s.metadata.labels?.['reconcile.external-secrets.io/managed'], 'true');
    assert.deepEqual(secretData(w, 'team-a/com'), { password: 'pw-2' });
  });

  void test('a Secret someone else made: its keys are kept and ours added (as Merge), no SecretNotOwned', async () => {
    const w = await world(v);
    w.kube.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'legacy', namespace: 'team-a' },
      data: { existing: b64('keep-me') },
    });
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('com', { data, target: { name: 'legacy', creationPolicy: 'CreateOrMerge' } }),
    );
    await w.kube.reconcile(w.es, 'team-a/com');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/com'))?.reason, 'SecretSynced');
    assert.deepEqual(secretData(w, 'team-a/legacy'), { existing: 'keep-me', password: 'pw-2' });
    assert.deepEqual(w.kube.getObj(SECRETS, 'team-a/legacy')!.metadata.ownerReferences ?? [], []);
  });
});

void describe('template.metadata.finalizers', () => {
  void test('added to the Secret, kept when the template drops them, never added while it is being deleted', async () => {
    const w = await world(v);
    const spec = (finalizers: string[]) => ({ data, target: { name: 'fin', template: { metadata: { finalizers } } } });
    w.kube.put(EXTERNAL_SECRETS, externalSecret('fin', spec(['example.com/keep'])));
    await w.kube.reconcile(w.es, 'team-a/fin');
    assert.deepEqual(w.kube.getObj(SECRETS, 'team-a/fin')!.metadata.finalizers, ['example.com/keep']);
    // Someone adds their own; a second finalizer in the template is added beside both.
    const s = w.kube.getObj(SECRETS, 'team-a/fin')!;
    w.kube.put(SECRETS, { ...s, metadata: { ...s.metadata, finalizers: ['example.com/keep', 'other.io/theirs'] } });
    w.kube.put(EXTERNAL_SECRETS, externalSecret('fin', spec(['example.com/keep', 'example.com/second'])));
    await w.kube.reconcile(w.es, 'team-a/fin');
    assert.deepEqual(w.kube.getObj(SECRETS, 'team-a/fin')!.metadata.finalizers, [
      'example.com/keep',
      'other.io/theirs',
      'example.com/second',
    ]);
    // Dropped from the template: still there (ESO never removes one).
    w.kube.put(EXTERNAL_SECRETS, externalSecret('fin', spec([])));
    await w.kube.reconcile(w.es, 'team-a/fin');
    assert.deepEqual(w.kube.getObj(SECRETS, 'team-a/fin')!.metadata.finalizers, [
      'example.com/keep',
      'other.io/theirs',
      'example.com/second',
    ]);
    // Being deleted: nothing added.
    w.kube.remove(SECRETS, 'team-a/fin');
    w.kube.put(EXTERNAL_SECRETS, externalSecret('fin', spec(['example.com/keep', 'example.com/third'])));
    await w.kube.reconcile(w.es, 'team-a/fin');
    assert.ok(!(w.kube.getObj(SECRETS, 'team-a/fin')?.metadata.finalizers ?? []).includes('example.com/third'));
  });
});

void describe('syncWindows', () => {
  // A window that opened an hour ago and stays open two more hours, whatever the clock says now.
  const openNow = (): { schedule: string; duration: string } => {
    const d = new Date(Date.now() - 3_600_000);
    return { schedule: `${d.getUTCMinutes()} ${d.getUTCHours()} * * *`, duration: '3h' };
  };
  const dueLater = async (
    kind: 'allow' | 'deny',
  ): Promise<{ reads: number; refreshed: boolean; requeueMs: number | undefined }> => {
    const w = await world(v);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('win', { data, refreshInterval: '1h', syncWindows: { kind, windows: [openNow()] } }),
    );
    await w.kube.reconcile(w.es, 'team-a/win');
    assert.equal(
      readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/win'))?.reason,
      'SecretSynced',
      'a new spec syncs whatever the windows',
    );
    // The last refresh was two hours ago: a periodic refresh is due.
    const es = w.kube.getObj(EXTERNAL_SECRETS, 'team-a/win')!;
    const longAgo = new Date(Date.now() - 7_200_000).toISOString();
    w.kube.put(EXTERNAL_SECRETS, { ...es, status: { ...(es.status as object), refreshTime: longAgo } });
    v.sim.resetCounts();
    const result = await w.kube.reconcile(w.es, 'team-a/win');
    const refreshTime = (w.kube.getObj(EXTERNAL_SECRETS, 'team-a/win')!.status as { refreshTime?: string }).refreshTime;
    return { reads: v.sim.count('read'), refreshed: refreshTime !== longAgo, requeueMs: result.requeueAfterMs };
  };

  void test('deny: a due periodic refresh waits while a window is open, and is requeued for when it closes', async () => {
    const r = await dueLater('deny');
    assert.equal(r.reads, 0, 'Vault not read');
    assert.equal(r.refreshed, false, 'no refresh recorded');
    assert.ok(
      r.requeueMs !== undefined && r.requeueMs > 1.9 * 3_600_000 && r.requeueMs <= 2 * 3_600_000 + 1000,
      `requeue in ${r.requeueMs} ms`,
    );
  });

  void test('allow: the same due refresh runs while the window is open', async () => {
    const r = await dueLater('allow');
    assert.equal(r.refreshed, true, 'refreshed (the read itself may be shared within the jitter window)');
    assert.ok(r.requeueMs !== undefined && r.requeueMs > 0.8 * 3_600_000, `next refresh in ${r.requeueMs} ms`);
  });
});

void describe('per-entry sourceRef.storeRef', () => {
  const storeOf = (name: string, controller?: string) => ({
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: { name, namespace: 'team-a' },
    spec: {
      ...(controller ? { controller } : {}),
      provider: {
        vault: {
          server: v.sim.addr,
          path: 'secret',
          version: 'v2',
          auth: { kubernetes: { mountPath: 'kubernetes', role: 'app', serviceAccountRef: { name: 'vault-reader' } } },
        },
      },
    },
  });

  void test('an entry reads through its own store; no secretStoreRef needed when every entry names one', async () => {
    const w = await world(v);
    w.kube.put(SECRET_STORES, storeOf('second'));
    const own = { storeRef: { name: 'second', kind: 'SecretStore' } };
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('per-entry', {
        secretStoreRef: undefined,
        data: [{ ...data[0], sourceRef: own }],
        dataFrom: [{ extract: { key: 'team-a/tagged' }, sourceRef: own }],
      }),
    );
    await w.kube.reconcile(w.es, 'team-a/per-entry');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/per-entry'))?.reason, 'SecretSynced');
    assert.deepEqual(secretData(w, 'team-a/per-entry'), { password: 'pw-2', k: 'v' });
  });

  void test("an entry whose store is another controller's makes the ExternalSecret not ours (ESO: any store of another class)", async () => {
    const w = await world(v);
    w.kube.put(SECRET_STORES, storeOf('eso-store', 'eso'));
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('theirs', { data: [{ ...data[0], sourceRef: { storeRef: { name: 'eso-store' } } }] }),
    );
    await w.kube.reconcile(w.es, 'team-a/theirs');
    assert.equal(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/theirs')!.status, undefined, 'no status written');
    assert.equal(w.kube.getObj(SECRETS, 'team-a/theirs'), undefined);
  });
});

void describe('remoteRef.version and metadataPolicy Fetch', () => {
  void test('version reads that KV v2 version; "" or none the current one', async () => {
    const w = await world(v);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('ver', {
        data: [
          { secretKey: 'first', remoteRef: { key: 'team-a/db', property: 'password', version: '1' } },
          { secretKey: 'empty', remoteRef: { key: 'team-a/db', property: 'password', version: '' } },
          { secretKey: 'latest', remoteRef: { key: 'team-a/db', property: 'password' } },
        ],
      }),
    );
    await w.kube.reconcile(w.es, 'team-a/ver');
    assert.deepEqual(secretData(w, 'team-a/ver'), { first: 'pw-1', empty: 'pw-2', latest: 'pw-2' });
  });

  void test('Fetch reads custom_metadata only (ESO v0.16.2): a property, the whole map, an empty key when there is none', async () => {
    const w = await world(v);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('meta', {
        data: [
          { secretKey: 'tier', remoteRef: { key: 'team-a/tagged', property: 'tier', metadataPolicy: 'Fetch' } },
          { secretKey: 'none', remoteRef: { key: 'team-a/untagged', metadataPolicy: 'Fetch' } },
        ],
        dataFrom: [{ extract: { key: 'team-a/tagged', metadataPolicy: 'Fetch' } }],
      }),
    );
    await w.kube.reconcile(w.es, 'team-a/meta');
    assert.deepEqual(secretData(w, 'team-a/meta'), { tier: 'gold', owner: 'team-a', none: '' });
  });

  void test('Fetch of a path that does not exist fails the sync even with deletionPolicy Delete (ESO: "secret not found", not a missing secret)', async () => {
    const w = await world(v);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('gone', {
        data: [{ secretKey: 'x', remoteRef: { key: 'team-a/nothing-here', metadataPolicy: 'Fetch' } }],
        target: { deletionPolicy: 'Delete' },
      }),
    );
    await w.kube.reconcile(w.es, 'team-a/gone');
    const ready = readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/gone'));
    assert.equal(ready?.reason, 'SecretSyncedError');
    assert.match(ready?.message ?? '', /secret not found/);
  });

  void test('extract with Fetch of a secret without custom metadata fails as ESO does', async () => {
    const w = await world(v);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('nometa', { dataFrom: [{ extract: { key: 'team-a/untagged', metadataPolicy: 'Fetch' } }] }),
    );
    await w.kube.reconcile(w.es, 'team-a/nometa');
    assert.match(
      readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/nometa'))?.message ?? '',
      /unexpected end of JSON input/,
    );
  });
});

void describe('nullBytePolicy Fail', () => {
  void test('a decoded value with a NUL byte fails the sync naming the key, never the value; Ignore keeps it', async () => {
    await v.kv.write('team-a/binary', { blob: Buffer.from('ab\0cd-VALUE').toString('base64') });
    const w = await world(v);
    const spec = (policy: string) => ({
      data: [
        {
          secretKey: 'blob',
          remoteRef: { key: 'team-a/binary', property: 'blob', decodingStrategy: 'Base64', nullBytePolicy: policy },
        },
      ],
    });
    w.kube.put(EXTERNAL_SECRETS, externalSecret('nul', spec('Fail')));
    await w.kube.reconcile(w.es, 'team-a/nul');
    const ready = readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/nul'));
    assert.equal(ready?.reason, 'SecretSyncedError');
    assert.match(ready?.message ?? '', /key "blob" contains null bytes/);
    assert.ok(!(ready?.message ?? '').includes('VALUE'));
    assert.equal(w.kube.getObj(SECRETS, 'team-a/nul'), undefined);
    w.kube.put(EXTERNAL_SECRETS, externalSecret('nul', spec('Ignore')));
    await w.kube.reconcile(w.es, 'team-a/nul');
    assert.equal(
      Buffer.from(
        (w.kube.getObj(SECRETS, 'team-a/nul') as unknown as { data: Record<string, string> }).data.blob!,
        'base64',
      ).toString('latin1'),
      'ab\0cd-VALUE',
    );
  });
});
