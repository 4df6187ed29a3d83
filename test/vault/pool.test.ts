import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VaultClientPool } from '../../vault/pool.ts';

test('one client per connection config: the same config (trailing slash aside) gets the same client', () => {
  const pool = new VaultClientPool();
  const a = pool.get({ address: 'https://vault:8200', timeoutMs: 1000 });
  assert.equal(pool.get({ address: 'https://vault:8200/', timeoutMs: 1000 }), a);
  assert.notEqual(pool.get({ address: 'https://vault:8200', timeoutMs: 1000, namespace: 'team-a' }), a);
  assert.notEqual(pool.get({ address: 'https://vault:8200', timeoutMs: 1000, tls: { ca: 'other CA' } }), a);
  assert.notEqual(pool.get({ address: 'https://other:8200', timeoutMs: 1000 }), a);
  assert.equal(pool.size, 4);
  pool.close();
  assert.equal(pool.size, 0);
  assert.notEqual(pool.get({ address: 'https://vault:8200', timeoutMs: 1000 }), a, 'a closed client is not handed out');
  pool.close();
});
