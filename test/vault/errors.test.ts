import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CONDITION_REASON, VAULT_ERROR_KINDS, kindForStatus, toVaultError } from '../../vault/errors.ts';

void describe('error normalisation', () => {
  void test('status codes map to kinds as Vault uses them', () => {
    assert.equal(kindForStatus(404), 'not_found');
    assert.equal(kindForStatus(403), 'forbidden');
    assert.equal(kindForStatus(503, ['Vault is sealed']), 'sealed');
    assert.equal(kindForStatus(503, ['standby']), 'unavailable');
    assert.equal(kindForStatus(500), 'unavailable');
    assert.equal(kindForStatus(502), 'unavailable');
    assert.equal(kindForStatus(429), 'rate_limited');
    assert.equal(kindForStatus(400), 'invalid');
    assert.equal(kindForStatus(405), 'invalid');
  });

  void test('node-vault ApiResponseError and axios network errors (duck-typed)', () => {
    const api = toVaultError(
      {
        message: 'x',
        response: { statusCode: 403, body: { errors: ['1 error occurred:\n\t* permission denied\n\n'] } },
      },
      'kv.read',
    );
    assert.equal(api.kind, 'forbidden');
    assert.equal(api.message, 'kv.read: permission denied');
    assert.equal(
      toVaultError({ message: 'Status 404', response: { statusCode: 404, body: { errors: [] } } }, 'kv.read').message,
      'kv.read: not found (404)',
    );
    assert.equal(
      toVaultError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:8200' }, 'kv.read').kind,
      'unavailable',
    );
    assert.equal(
      toVaultError({ code: 'ECONNABORTED', message: 'timeout of 5ms exceeded' }, 'kv.read').kind,
      'unavailable',
    );
    assert.equal(toVaultError({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }, 'kv.read').kind, 'invalid');
    assert.equal(toVaultError(new Error('boom\nsecond line'), 'kv.read').message, 'kv.read: boom');
  });

  void test('messages never keep the request body or token, even if an error object carries them', () => {
    const err = toVaultError(
      {
        message: 'Status 400',
        config: { data: '{"password":"p@ss"}', headers: { 'X-Vault-Token': 'hvs.abc' } },
        response: { statusCode: 400, body: { errors: ['bad hvs.abc-token value p@ss-word'] } },
      },
      'kv.write',
      ['hvs.abc-token', 'p@ss-word'],
    );
    assert.equal(err.message, 'kv.write: bad [REDACTED] value [REDACTED]');
    assert.ok(!JSON.stringify(err).includes('p@ss'));
  });

  void test('every kind has a condition reason', () => {
    for (const k of VAULT_ERROR_KINDS) assert.match(CONDITION_REASON[k], /^Vault[A-Z]/);
  });
});
