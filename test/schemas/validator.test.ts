import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateObject } from '../../schemas/validator.ts';

const vp = (spec: unknown) => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name: 'p', namespace: 'ns' },
  spec,
});

void test('a clean VaultPolicy has no problems', () => {
  assert.deepEqual(validateObject(vp({ rules: [{ path: 'secret/data/ns/*', capabilities: ['read'] }] })), []);
});

void test('errors name the field path in kubectl form and say what is expected', () => {
  const problems = validateObject(
    vp({ rules: [{ path: 'a', capabilities: ['read', 'reed'], maxWrappingTTL: '5 minutes' }, { capabilities: [] }] }),
  );
  const byField = new Map(problems.map((p) => [p.field, p]));
  assert.match(byField.get('spec.rules[0].capabilities[1]')?.message ?? '', /"reed" is not one of/);
  assert.match(byField.get('spec.rules[0].maxWrappingTTL')?.message ?? '', /Go duration/);
  assert.equal(byField.get('spec.rules[1].path')?.message, 'is required');
  assert.equal(byField.get('spec.rules[1].capabilities')?.message, 'must list at least one item');
  assert.ok(problems.every((p) => p.severity === 'deny' && p.rule.startsWith('schema.')));
});

void test('reports every error, not just the first', () => {
  const problems = validateObject({
    apiVersion: 'vaultgate.io/v1alpha1',
    kind: 'VaultRoleBinding',
    metadata: { name: 'b' },
    spec: { serviceAccounts: [], policies: [], tokenTTL: 5 },
  });
  assert.deepEqual(problems.map((p) => p.field).sort(), ['spec.policies', 'spec.serviceAccounts', 'spec.tokenTTL']);
});

void test('unknown fields are warnings with a suggestion', () => {
  const problems = validateObject(vp({ rule: [], policy: 'path "a" { capabilities = ["read"] }' }));
  assert.deepEqual(
    problems.map((p) => [p.field, p.severity, p.rule]),
    [['spec.rule', 'warn', 'schema.unknown-field']],
  );
  assert.match(problems[0]?.message ?? '', /did you mean "rules"/);
});

void test('map keys with odd characters are quoted in field paths', () => {
  const problems = validateObject(
    vp({ rules: [{ path: 'a', capabilities: ['update'], allowedParameters: { 'a/b': 'x' } }] }),
  );
  assert.equal(problems[0]?.field, 'spec.rules[0].allowedParameters["a/b"]');
});

void test('kinds vaultgate does not serve are not judged', () => {
  assert.deepEqual(validateObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }), []);
});
