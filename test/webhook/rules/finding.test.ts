import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  deny,
  objectName,
  objectNamespace,
  ratchet,
  recordAt,
  sentence,
  stringAt,
  stringsAt,
  warn,
  withoutShadowedSchemaFindings,
} from '../../../webhook/rules/finding.ts';

test('a finding reads as one sentence naming the field and the rule', () => {
  assert.equal(
    sentence(deny('spec.rules[0].path', 'vaultpolicy.path-syntax', 'bad path')),
    'spec.rules[0].path: bad path (rule vaultpolicy.path-syntax)',
  );
  assert.equal(sentence(warn('', 'x.y', 'note')), 'note (rule x.y)');
});

test('loose readers take only the type asked for', () => {
  const o = { a: 'x', b: 3, c: ['p', 1, 'q'], d: { e: 1 }, f: [1] };
  assert.equal(stringAt(o, 'a'), 'x');
  assert.equal(stringAt(o, 'b'), undefined);
  assert.deepEqual(stringsAt(o, 'c'), ['p', 'q']);
  assert.equal(stringsAt(o, 'a'), undefined);
  assert.deepEqual(recordAt(o, 'd'), { e: 1 });
  assert.equal(recordAt(o, 'f'), undefined, 'an array is not a record');
  assert.equal(stringAt(null, 'a'), undefined);
  assert.equal(objectName({ metadata: { name: 'n' } }), 'n');
  assert.equal(objectName({}), '');
  assert.equal(objectNamespace({ metadata: {} }, 'from-request'), 'from-request');
});

test('a schema finding on a field a semantic rule explains is dropped, so each problem is told once', () => {
  const schema = [deny('spec.a', 'schema', 'does not match'), deny('spec.b', 'schema', 'required')];
  const semantic = [deny('spec.a', 'x.a', 'why a is wrong')];
  assert.deepEqual(
    withoutShadowedSchemaFindings(schema, semantic).map((f) => f.rule),
    ['schema', 'x.a'],
  );
});

test('ratchet: denials become warnings on an UPDATE that leaves spec alone or on a deleting object, never otherwise', () => {
  const findings = [deny('spec.a', 'r', 'bad'), warn('spec.b', 'w', 'meh')];
  const old = { spec: { a: 1 } };
  assert.equal(ratchet(findings, { spec: { a: 1 } }, undefined), findings, 'CREATE: unchanged');
  assert.equal(ratchet(findings, { spec: { a: 2 } }, old), findings, 'spec changed: still denied');
  const same = ratchet(findings, { spec: { a: 1 } }, old);
  assert.deepEqual(
    same.map((f) => [f.severity, f.message]),
    [
      ['warn', 'bad (tolerated: this update leaves spec unchanged)'],
      ['warn', 'meh'],
    ],
  );
  const deleting = ratchet(findings, { metadata: { deletionTimestamp: 'now' }, spec: { a: 2 } }, old);
  assert.equal(deleting[0]?.severity, 'warn');
  assert.match(deleting[0]?.message ?? '', /being deleted/);
});
