// Reading untyped admission JSON safely, and the findings the ESO rules build from it: every field's type
// is checked before use, paths read as kubectl prints them, and messages are one clause.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  child,
  deny,
  has,
  isObj,
  isOurClass,
  list,
  namespaceOf,
  obj,
  str,
  warn,
} from '../../../../webhook/rules/eso/access.ts';
import type { AdmissionRequest } from '../../../../webhook/admission/types.ts';

test('typed readers: anything of another type reads as absent, never throws', () => {
  for (const v of [null, undefined, 1, 'x', [], [1]]) {
    assert.equal(isObj(v), false);
    assert.equal(obj(v), undefined);
  }
  assert.deepEqual(obj({ a: 1 }), { a: 1 });
  assert.deepEqual(list({ 0: 'a', length: 1 }), [], 'an array-like object is not a list');
  assert.deepEqual(list(['a']), ['a']);
  assert.equal(str(5), undefined);
  assert.equal(str(''), '');
});

test("has: a key given with any value but null (ESO's Go pointers), even an empty one", () => {
  assert.equal(has({ a: '' }, 'a'), true);
  assert.equal(has({ a: {} }, 'a'), true);
  assert.equal(has({ a: null }, 'a'), false);
  assert.equal(has({}, 'a'), false);
  assert.equal(has(undefined, 'a'), false);
});

test("controller class: an empty one is every controller's, otherwise equal only", () => {
  assert.equal(isOurClass(undefined, 'vaultgate'), true);
  assert.equal(isOurClass('', 'vaultgate'), true);
  assert.equal(isOurClass('vaultgate', 'vaultgate'), true);
  assert.equal(isOurClass('eso', 'vaultgate'), false);
  assert.equal(isOurClass('eso', ''), false);
});

test("namespace: the manifest's, else the request's, else none", () => {
  const req = (namespace?: string) => ({ namespace }) as AdmissionRequest;
  assert.equal(namespaceOf({ metadata: { namespace: 'a' } }, req('b')), 'a');
  assert.equal(namespaceOf({ metadata: {} }, req('b')), 'b');
  const odd: unknown = { metadata: { namespace: 7 } };
  assert.equal(namespaceOf(odd as Parameters<typeof namespaceOf>[0], req('')), undefined);
});

test('field paths as kubectl prints them: names dotted, indexes and other keys bracketed', () => {
  assert.equal(child(child(child('spec', 'data'), 0), 'secretKey'), 'spec.data[0].secretKey');
  assert.equal(child('data', '.dockerconfigjson'), 'data[.dockerconfigjson]');
  assert.equal(child('', 'spec'), 'spec');
});

test('findings: severity, field and rule kept; a final period dropped (the core adds "(rule …)")', () => {
  assert.deepEqual(deny('spec.x', 'eso.r', 'must be set.'), {
    field: 'spec.x',
    rule: 'eso.r',
    message: 'must be set',
    severity: 'deny',
  });
  assert.equal(warn('spec.y', 'eso.w', 'v1.2 is old').message, 'v1.2 is old');
  assert.equal(warn('spec.y', 'eso.w', 'x').severity, 'warn');
});
