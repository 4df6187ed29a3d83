// Coalesced KV reads: one request per identity and path within a window (in flight, or answered no
// longer ago than the caller accepts), never an answer fetched with another identity, never a cached
// failure, force-sync requests sharing what was fetched after them, and a bounded cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoalescingKvReader, FORCE_SYNC_SHARE_MS } from '../../../controller/reconcilers/kv-reader.ts';
import type { StoreConnection } from '../../../controller/reconcilers/store-connector.ts';
import type { VaultRequest } from '../../../vault/types.ts';

/** A store connection on a KV v2 mount `secret` whose reads answer `value-<n>` (n = the request count). */
function connection(identity: string, calls: string[], fail = { next: false }): StoreConnection {
  return {
    kv: { storePath: 'secret', version: 2 },
    session: {
      key: identity,
      token: () => Promise.resolve('unused'),
      policies: () => [],
      ownToken: () => Promise.reject(new Error('a KV read never asks for its token')),
      request: <T>(req: VaultRequest): Promise<T> => {
        calls.push(`${identity} ${req.method} ${req.path}`);
        if (fail.next) {
          fail.next = false;
          return Promise.reject(new Error('vault down'));
        }
        const n = calls.length;
        return new Promise((resolve) =>
          setImmediate(() => resolve({ data: { data: { v: `value-${n}` }, metadata: { version: 1 } } } as T)),
        );
      },
    },
  };
}

test('concurrent reads of one path by one identity: one request, the same answer', async () => {
  const calls: string[] = [];
  const src = new CoalescingKvReader().source(connection('id-a', calls), 0);
  const [a, b, c] = await Promise.all([src.read('team-a/db'), src.read('team-a/db'), src.read('/team-a/db')]);
  assert.deepEqual(calls, ['id-a GET secret/data/team-a/db']);
  assert.deepEqual([a, b, c], [{ v: 'value-1' }, { v: 'value-1' }, { v: 'value-1' }]);
});

test('a finished answer serves callers accepting its age, and no one else', async () => {
  let now = 0;
  const calls: string[] = [];
  const reader = new CoalescingKvReader({ now: () => now });
  const conn = connection('id-a', calls);
  await reader.source(conn, 30_000).read('team-a/db');
  now = 20_000;
  assert.deepEqual(await reader.source(conn, 30_000).read('team-a/db'), { v: 'value-1' }, 'within 30 s: shared');
  assert.deepEqual(await reader.source(conn, 10_000).read('team-a/db'), { v: 'value-2' }, 'too old for this caller');
  assert.equal(reader.stats.requests, 2);
  assert.equal(reader.stats.coalesced, 1);
});

test("another identity never gets an answer fetched with this one's permissions", async () => {
  const calls: string[] = [];
  const reader = new CoalescingKvReader();
  const [a, b] = await Promise.all([
    reader.source(connection('id-a', calls), 60_000).read('team-a/db'),
    reader.source(connection('id-b', calls), 60_000).read('team-a/db'),
  ]);
  assert.equal(calls.length, 2);
  assert.notDeepEqual(a, b);
});

test('a failure is not cached: the next read asks Vault again', async () => {
  const calls: string[] = [];
  const fail = { next: true };
  const reader = new CoalescingKvReader();
  const conn = connection('id-a', calls, fail);
  await assert.rejects(reader.source(conn, 60_000).read('team-a/db'), /vault down/);
  assert.deepEqual(await reader.source(conn, 60_000).read('team-a/db'), { v: 'value-2' });
  assert.equal(calls.length, 2);
});

test('one force-sync request shares its reads for a minute, even with maxAge 0; a new request reads again', async () => {
  let now = 0;
  const calls: string[] = [];
  const reader = new CoalescingKvReader({ now: () => now });
  const conn = connection('id-a', calls);
  await reader.source(conn, 0, 'sync-1').read('team-a/db');
  now = FORCE_SYNC_SHARE_MS - 1;
  await reader.source(conn, 0, 'sync-1').read('team-a/db');
  assert.equal(calls.length, 1);
  await reader.source(conn, 0, 'sync-2').read('team-a/db');
  assert.equal(calls.length, 2);
});

test('the cache is bounded (least recently used dropped) and clear() forgets every value', async () => {
  const calls: string[] = [];
  const reader = new CoalescingKvReader({ maxEntries: 2 });
  const src = reader.source(connection('id-a', calls), 60_000);
  await src.read('team-a/one');
  await src.read('team-a/two');
  await src.read('team-a/one'); // most recently used now
  await src.read('team-a/three'); // drops two
  assert.equal(reader.size, 2);
  await src.read('team-a/one');
  assert.equal(calls.length, 3, 'one was kept');
  await src.read('team-a/two');
  assert.equal(calls.length, 4, 'two was dropped');
  reader.clear();
  assert.equal(reader.size, 0);
});
