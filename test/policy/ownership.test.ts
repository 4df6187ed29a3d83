import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { renderPolicy, type PolicyRule } from '../../policy/render.ts';
import { ownershipOf, policiesEquivalent, readOwnership } from '../../policy/ownership.ts';

const owner = { namespace: 'team-a', name: 'reader', uid: 'uid-1' };
const rules: PolicyRule[] = [
  { path: 'secret/data/team-a/*', capabilities: ['read', 'list'] },
  {
    path: 'secret/data/team-a/app',
    capabilities: ['create', 'update'],
    allowedParameters: { ttl: ['1h', 2, true], '*': [] },
    requiredParameters: ['ttl'],
    maxWrappingTTL: '1h',
  },
];

void describe('policy rendering and ownership', () => {
  void test('renders HCL Vault reads back, with the ownership header first', () => {
    const text = renderPolicy(rules, owner);
    assert.match(text, /^# managed-by: vaultgate\n# namespace: team-a\n# name: reader\n# uid: uid-1\n/);
    assert.match(text, /path "secret\/data\/team-a\/\*" \{\n {2}capabilities = \["read", "list"\]\n\}/);
    assert.match(text, /allowed_parameters = \{\n {4}"\*" = \[\]\n {4}"ttl" = \["1h", 2, true\]\n {2}\}/);
    assert.match(text, /required_parameters = \["ttl"\]/);
    assert.match(text, /max_wrapping_ttl = "1h"/);
    assert.deepEqual(readOwnership(text), {
      managedBy: 'vaultgate',
      namespace: 'team-a',
      name: 'reader',
      uid: 'uid-1',
    });
  });

  void test('strings cannot break out of their quotes', () => {
    const text = renderPolicy([{ path: 'a"}\npath "sys/*" {', capabilities: ['read'] }], owner);
    assert.equal(text.split('\n').filter((l) => l.startsWith('path ')).length, 1);
  });

  void test('ownership verdicts: this object, an earlier one with the same name, someone else', () => {
    const text = renderPolicy(rules, owner);
    assert.equal(ownershipOf(text, owner), 'owned');
    assert.equal(ownershipOf(text, { ...owner, uid: 'uid-2' }), 'owned-previous');
    assert.equal(ownershipOf(text, { ...owner, name: 'other' }), 'foreign');
    assert.equal(ownershipOf('path "secret/*" { capabilities = ["read"] }', owner), 'foreign');
    assert.equal(
      ownershipOf('# managed-by: someone-else\n# namespace: team-a\n# name: reader\npath "x" {}', owner),
      'foreign',
    );
  });

  void test('equivalence ignores layout and comments but not meaning', () => {
    const text = renderPolicy(rules, owner);
    const reformatted = text
      .replace(/\n {2}/g, '\n\t')
      .replace(/ = /g, '=')
      .replace(/\n\n/g, '\n# a comment\n');
    assert.equal(policiesEquivalent(text, reformatted), true);
    assert.equal(policiesEquivalent(text, text.replace('"list"', '"delete"')), false);
    assert.equal(policiesEquivalent(text, text.replace('team-a/*', 'team-a/+')), false);
    assert.equal(policiesEquivalent(text, `${text}\npath "sys/*" { capabilities = ["sudo"] }`), false);
    assert.equal(policiesEquivalent(text, renderPolicy(rules, { ...owner, uid: 'uid-2' })), false);
  });
});
