import { test } from 'node:test';
import assert from 'node:assert/strict';
import { vaultName, parseVaultName, prefixProblem } from '../../schemas/vault-names.ts';

void test('<prefix>.<namespace>.<name>, reversible for our prefix only', () => {
  assert.equal(vaultName('vaultgate', 'team-a', 'app.v2'), 'vaultgate.team-a.app.v2');
  assert.deepEqual(parseVaultName('vaultgate', 'vaultgate.team-a.app.v2'), { namespace: 'team-a', name: 'app.v2' });
  assert.equal(parseVaultName('vaultgate', 'other.team-a.app'), undefined);
});

void test('prefixes with dots or capitals are refused', () => {
  assert.match(prefixProblem('my.gate') ?? '', /must not contain "."/);
  assert.ok(prefixProblem('Gate'));
  assert.equal(prefixProblem('vg-prod'), undefined);
  assert.throws(() => vaultName('a.b', 'ns', 'n'));
});
