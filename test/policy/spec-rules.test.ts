// A VaultPolicy spec as ACL rules, whichever form it uses, with {{namespace}} expanded in both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { specRules } from '../../policy/spec-rules.ts';

test('structured rules and raw HCL give the same rules, {{namespace}} expanded in each', () => {
  const fromRules = specRules({ rules: [{ path: 'secret/data/{{namespace}}/*', capabilities: ['read'] }] }, 'team-a');
  const fromText = specRules(
    { policy: 'path "secret/data/{{namespace}}/*" {\n  capabilities = ["read"]\n}\n' },
    'team-a',
  );
  assert.deepEqual(
    fromRules.rules.map((r) => [r.path, r.capabilities]),
    [['secret/data/team-a/*', ['read']]],
  );
  assert.deepEqual(
    fromText.rules.map((r) => [r.path, r.capabilities]),
    [['secret/data/team-a/*', ['read']]],
  );
  assert.equal(fromRules.errors, undefined);
});

test('both forms, neither, or unparsable text: no rules, and an error naming the field', () => {
  assert.deepEqual(specRules({ rules: [], policy: '' }, 'ns').errors, [
    'spec.rules and spec.policy are both set; set exactly one',
  ]);
  assert.deepEqual(specRules({}, 'ns').errors, ['one of spec.rules or spec.policy is required']);
  assert.deepEqual(specRules(undefined, 'ns').rules, []);
  const broken = specRules({ policy: 'path "x" { capabilities = ' }, 'ns');
  assert.deepEqual(broken.rules, []);
  assert.match(broken.errors?.[0] ?? '', /^spec\.policy does not parse: \d+:\d+: /);
});
