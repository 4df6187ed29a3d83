// ESO's VaultDynamicSecret generator request and answer: method → request, resultType → keys (ESO's
// GetByteValue), the lease kept apart, ESO's empty-answer error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatedFrom, requestVaultGenerator } from '../../../eso/generators/vault.ts';
import type { VaultRequest } from '../../../vault/types.ts';

const answer = {
  request_id: 'r',
  lease_id: 'database/creds/app/L1',
  lease_duration: 60,
  renewable: true,
  data: { username: 'u', password: 'p', n: 3, ok: true, list: ['a'] },
  auth: null,
};
const text = (m: Map<string, Buffer>): Record<string, string> =>
  Object.fromEntries([...m].map(([k, v]) => [k, v.toString('utf8')]));

test('GET (default) reads, LIST lists, another method writes the parameters with PUT; the leading slash is dropped', async () => {
  const sent: VaultRequest[] = [];
  const vault = { request: (r: VaultRequest) => (sent.push(r), Promise.resolve(undefined)) } as never;
  await requestVaultGenerator(vault, { path: '/database/creds/app' });
  await requestVaultGenerator(vault, { path: 'kv/metadata', method: 'LIST' });
  await requestVaultGenerator(vault, { path: 'auth/token/create', method: 'POST', parameters: { ttl: '1h' } });
  assert.deepEqual(
    sent.map((r) => [r.method, r.path, r.body]),
    [
      ['GET', 'database/creds/app', undefined],
      ['LIST', 'kv/metadata', undefined],
      ['PUT', 'auth/token/create', { ttl: '1h' }],
    ],
  );
  await assert.rejects(requestVaultGenerator(vault, { path: 'x', method: 'DELETE' }), /DELETE is refused/);
});

test('resultType Data, Auth, Raw as ESO; the lease apart; values as GetByteValue', () => {
  const data = generatedFrom({ path: 'p' }, answer);
  assert.deepEqual(text(data.data), { username: 'u', password: 'p', n: '3', ok: 'true', list: '["a"]' });
  assert.deepEqual(data.lease, { id: 'database/creds/app/L1', durationSeconds: 60, renewable: true });
  const auth = generatedFrom({ path: 'p', resultType: 'Auth' }, { auth: { client_token: 't', lease_duration: 5 } });
  assert.deepEqual(text(auth.data), { client_token: 't', lease_duration: '5' });
  assert.equal(auth.lease, undefined);
  const raw = generatedFrom({ path: 'p', resultType: 'Raw' }, answer);
  assert.equal(raw.data.get('lease_id')?.toString(), 'database/creds/app/L1');
  assert.throws(() => generatedFrom({ path: 'p' }, undefined), /empty response from Vault/);
  assert.equal(generatedFrom({ path: 'p', allowEmptyResponse: true }, undefined).data.size, 0);
});
