// The one rule for tenant-controlled Vault paths (issue #21.1): dot and empty segments, and anything that
// makes a URL name another path, are refused; ordinary keys are not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { vaultPathProblems } from '../../vault/paths.ts';
import { createKvApi, type VaultError } from '../../vault/index.ts';
import { startHarness } from './helpers.ts';

const codes = (p: string, glob = false): string[] =>
  vaultPathProblems(p, { allowTrailingGlob: glob }).map((x) => x.code);

test('traversal and URL tricks are refused, each with its code', () => {
  for (const p of ['team-a/../team-b/db', '..', '../x', 'a/..', 'a/./b', './a', 'secret/data/orders/../payments/db'])
    assert.deepEqual(codes(p), ['dot-segment'], p);
  for (const p of ['a//b', 'a/b//', '/a//b']) assert.deepEqual(codes(p), ['empty-segment'], p);
  for (const p of ['team-a/%2e%2e/team-b', 'team-a/%2E%2e/x', 'a\\..\\b', 'a/b?x=', 'a/b#c', 'a/\u0000b', 'a/%2fb'])
    assert.deepEqual(codes(p), ['url-character'], p);
  assert.deepEqual(codes('secret/data/../*', true), ['dot-segment']);
});

test('ordinary keys, listing prefixes and policy globs pass', () => {
  for (const p of [
    'team-a/db',
    '/team-a/db',
    'team-a/',
    'a/.hidden',
    'a/..b',
    'a/b..',
    'a/b.c',
    'x',
    'secret/data/team-a/app config',
    'team+a/db',
    '50%off',
  ])
    assert.deepEqual(codes(p), [], p);
  for (const p of ['secret/data/app/*', 'secret/data/app*', 'secret/data/+/x', 'secret/data/'])
    assert.deepEqual(codes(p, true), [], p);
});

test('the fast path never hides a problem the segments have', () => {
  const char = fc.constantFrom(...'a.-_/%2e\\?#+'.split(''));
  fc.assert(
    fc.property(fc.string({ unit: char, maxLength: 14 }), (p) => {
      const segs = p.replace(/^\/+/, '').replace(/\/$/, '').split('/');
      const bad =
        segs.some((s) => s === '.' || s === '..') ||
        (p.replace(/^\/+/, '').replace(/\/$/, '') !== '' && segs.includes('')) ||
        /[\\?#]|%[0-9a-fA-F]{2}/.test(p);
      assert.equal(vaultPathProblems(p).length > 0, bad, p);
    }),
    { numRuns: 3000 },
  );
});

test('the adapter refuses to send a traversal path: the other secret keeps its value and its versions', async () => {
  const h = await startHarness();
  try {
    const kv = createKvApi(h.root, { mount: 'secret', version: 2 });
    await kv.write('team-b/db', { password: 'team-b-own' });
    for (const key of ['team-a/../team-b/db', 'team-a/%2e%2e/team-b/db', 'team-a//../team-b/db']) {
      await assert.rejects(
        kv.write(key, { password: 'attacker-chosen' }),
        (e: unknown) => (e as VaultError).kind === 'invalid' && /refused to send/.test((e as Error).message),
        key,
      );
      await assert.rejects(kv.deleteAll(key), (e: unknown) => (e as VaultError).kind === 'invalid', key);
    }
    assert.deepEqual((await kv.read('team-b/db'))?.data, { password: 'team-b-own' });
    assert.equal((await kv.readMetadata('team-b/db'))?.currentVersion, 1);
  } finally {
    await h.close();
  }
});
