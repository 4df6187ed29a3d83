// The admission warning on a VaultPolicy update (and `vaultgate plan`): what the new rules allow that the
// old ones did not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summariseRuleWidening } from '../../policy/widening.ts';

const rule = (path: string, ...capabilities: string[]) => ({ path, capabilities });

test('a new capability, a new path outside the old ones, or a removed deny widens access', () => {
  assert.equal(
    summariseRuleWidening([rule('secret/data/a/*', 'read')], [rule('secret/data/a/*', 'read', 'update')]),
    'widens access: +update on secret/data/a/*',
  );
  assert.equal(
    summariseRuleWidening(
      [rule('secret/data/a/*', 'read')],
      [rule('secret/data/a/*', 'read'), rule('secret/data/b/*', 'read')],
    ),
    'widens access: +read on secret/data/b/*',
  );
  assert.equal(
    summariseRuleWidening(
      [rule('secret/data/a/*', 'read'), rule('secret/data/a/admin', 'deny')],
      [rule('secret/data/a/*', 'read')],
    ),
    'widens access: -deny on secret/data/a/admin',
  );
});

test('narrowing, a path inside an old grant, or no change is not a widening', () => {
  assert.equal(
    summariseRuleWidening([rule('secret/data/a/*', 'read', 'list')], [rule('secret/data/a/*', 'read')]),
    undefined,
  );
  assert.equal(summariseRuleWidening([rule('secret/data/a/*', 'read')], [rule('secret/data/a/x', 'read')]), undefined);
  assert.equal(summariseRuleWidening([rule('secret/data/a/*', 'READ')], [rule('secret/data/a/*', 'read')]), undefined);
});
