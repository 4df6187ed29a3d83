import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rulesXorPolicy } from '../../../webhook/rules/vaultpolicy.ts';

test('vaultpolicy.rules-xor-policy: exactly one of spec.rules and spec.policy', () => {
  assert.deepEqual(rulesXorPolicy({ rules: [] }), []);
  assert.deepEqual(rulesXorPolicy({ policy: 'path "a" {}' }), []);
  const [both] = rulesXorPolicy({ rules: [], policy: 'x' });
  assert.equal(both?.field, 'spec.policy');
  assert.equal(both?.message, 'set either spec.rules or spec.policy, not both');
  const [none] = rulesXorPolicy({});
  assert.equal(none?.field, 'spec');
  assert.equal(none?.rule, 'vaultpolicy.rules-xor-policy');
  assert.equal(none?.severity, 'deny');
});
