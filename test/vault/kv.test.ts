import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createKvApi, resolveKvPath, type VaultError } from '../../vault/index.ts';
import { encodePath } from '../../vault/client.ts';
import { startHarness } from './helpers.ts';

void describe('resolveKvPath (ESO buildPath semantics)', () => {
  void test('store path is the mount; the key may repeat the mount and, for v2, data/', () => {
    assert.deepEqual(resolveKvPath('secret', 2, 'team/db'), { ref: { mount: 'secret', version: 2 }, key: 'team/db' });
    assert.deepEqual(resolveKvPath('secret', 2, 'secret/team/db'), {
      ref: { mount: 'secret', version: 2 },
      key: 'team/db',
    });
    assert.deepEqual(resolveKvPath('secret', 2, 'secret/data/team/db'), {
      ref: { mount: 'secret', version: 2 },
      key: 'team/db',
    });
    assert.deepEqual(resolveKvPath('/secret/', 2, '/team/db'), {
      ref: { mount: 'secret', version: 2 },
      key: 'team/db',
    });
    // v1 keeps a literal data/ segment: it is part of the key there.
    assert.deepEqual(resolveKvPath('kv', 1, 'kv/data/x'), { ref: { mount: 'kv', version: 1 }, key: 'data/x' });
  });

  void test('without a store path the first segment is the mount', () => {
    assert.deepEqual(resolveKvPath(undefined, 2, 'secret/data/team/db'), {
      ref: { mount: 'secret', version: 2 },
      key: 'team/db',
    });
    assert.deepEqual(resolveKvPath(undefined, 2, 'secret/team/db'), {
      ref: { mount: 'secret', version: 2 },
      key: 'team/db',
    });
    assert.deepEqual(resolveKvPath(undefined, 1, 'kv/team/db'), { ref: { mount: 'kv', version: 1 }, key: 'team/db' });
    assert.throws(
      () => resolveKvPath(undefined, 2, 'lonely'),
      (e: unknown) => (e as VaultError).kind === 'invalid',
    );
  });

  void test('without a store path a v2 key containing /data/ is the API path as written (ESO buildPath)', () => {
    // The mount is everything before the first /data/, so a nested mount works as in ESO...
    assert.deepEqual(resolveKvPath(undefined, 2, 'team/kv/data/app/db'), {
      ref: { mount: 'team/kv', version: 2 },
      key: 'app/db',
    });
    // ...and the read goes to exactly the path written, even where that is not the secret one meant
    // (ESO reads `kv/team/data/x` as it is too: external-secrets/external-secrets#3116).
    for (const key of ['team/kv/data/app/db', 'kv/team/data/x', 'secret/data/a/data/b']) {
      const { ref, key: k } = resolveKvPath(undefined, 2, key);
      assert.equal(`${ref.mount}/data/${k}`, key, key);
    }
    // v1 has no data/ segment: the first segment stays the mount.
    assert.deepEqual(resolveKvPath(undefined, 1, 'kv/team/data/x'), {
      ref: { mount: 'kv', version: 1 },
      key: 'team/data/x',
    });
  });

  void test('path segments are percent-encoded, separators kept', () => {
    assert.equal(encodePath('secret/data/a b/c#d'), 'secret/data/a%20b/c%23d');
    assert.equal(encodePath('/sys/policies/acl/x'), 'sys/policies/acl/x');
  });
});

void describe('KvApi against the simulator', () => {
  void test('v2 on a nested mount: inserts data/ and metadata/, keeps odd characters in keys', async () => {
    const h = await startHarness();
    try {
      await h.root.request({ operation: 't', method: 'POST', path: 'sys/mounts/team/kv', body: { type: 'kv-v2' } });
      const kv = createKvApi(h.root, { mount: 'team/kv/', version: 2 });
      assert.deepEqual(await kv.write('app/db password', { pw: 'x' }), { version: 1 });
      assert.equal(h.sim.count('write', 'team/kv/data/app/db password'), 1);
      assert.deepEqual((await kv.read('app/db password'))?.data, { pw: 'x' });
      assert.deepEqual(await kv.list('app/'), ['db password']);
      assert.deepEqual(await kv.list(''), ['app/']);
      await kv.deleteAll('app/db password');
      assert.equal(await kv.readMetadata('app/db password'), undefined);
    } finally {
      await h.close();
    }
  });

  void test('a store without a path reads a nested mount named by a key with /data/ in it', async () => {
    const h = await startHarness();
    try {
      await h.root.request({ operation: 't', method: 'POST', path: 'sys/mounts/team/kv', body: { type: 'kv-v2' } });
      await createKvApi(h.root, { mount: 'team/kv', version: 2 }).write('app/db', { pw: 'nested' });
      const { ref, key } = resolveKvPath(undefined, 2, 'team/kv/data/app/db');
      assert.deepEqual((await createKvApi(h.root, ref).read(key))?.data, { pw: 'nested' });
    } finally {
      await h.close();
    }
  });

  void test('v2 metadata: custom_metadata without a version, then versions and soft delete', async () => {
    const h = await startHarness();
    try {
      const kv = createKvApi(h.root, { mount: 'secret', version: 2 });
      await kv.writeMetadata('tagged', { customMetadata: { 'managed-by': 'vaultgate' }, maxVersions: 2 });
      const empty = await kv.readMetadata('tagged');
      assert.equal(empty?.currentVersion, 0);
      assert.deepEqual(empty?.customMetadata, { 'managed-by': 'vaultgate' });
      assert.equal(await kv.read('tagged'), undefined, 'metadata alone is no secret');
      for (const v of ['1', '2', '3']) await kv.write('tagged', { v });
      const m = await kv.readMetadata('tagged');
      assert.equal(m?.currentVersion, 3);
      assert.deepEqual(Object.keys(m?.versions ?? {}), ['2', '3'], 'max_versions prunes the oldest');
      assert.equal((await kv.read('tagged'))?.metadata?.customMetadata['managed-by'], 'vaultgate');
      await kv.delete('tagged');
      assert.equal(await kv.read('tagged'), undefined);
      assert.equal((await kv.read('tagged', { version: 2 }))?.data.v, '2');
    } finally {
      await h.close();
    }
  });

  void test('v1: CAS is refused before any request; metadata calls are invalid', async () => {
    const h = await startHarness();
    try {
      await h.root.request({
        operation: 't',
        method: 'POST',
        path: 'sys/mounts/kv',
        body: { type: 'kv', options: { version: '1' } },
      });
      const kv = createKvApi(h.root, { mount: 'kv', version: 1 });
      const before = h.sim.requestCount;
      await assert.rejects(
        kv.write('a', { x: '1' }, { cas: 0 }),
        (e: unknown) =>
          (e as VaultError).kind === 'invalid' && /not supported with Vault KV version v1/.test((e as Error).message),
      );
      assert.equal(h.sim.requestCount, before);
      await kv.write('a/b', { x: '1' });
      assert.deepEqual(await kv.list(''), ['a/']);
      await assert.rejects(
        kv.writeMetadata('a/b', { customMetadata: {} }),
        (e: unknown) => (e as VaultError).kind === 'invalid',
      );
      await kv.deleteAll('a/b');
      assert.equal(await kv.read('a/b'), undefined);
    } finally {
      await h.close();
    }
  });
});
