import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BodyReadError, jsonValuesAtLeast, parseStrictJson } from '../../webhook/json-body.ts';

test('strict JSON as body-parser reads it: an object or array; an empty body is {}', () => {
  assert.deepEqual(parseStrictJson(''), {});
  assert.deepEqual(parseStrictJson(' \n{"a":1}'), { a: 1 });
  assert.deepEqual(parseStrictJson('[1]'), [1]);
  for (const text of ['"str"', '42', 'null', ' true'])
    assert.throws(
      () => parseStrictJson(text),
      (e: unknown) => e instanceof BodyReadError && e.status === 400 && e.type === 'entity.parse.failed',
      text,
    );
  assert.throws(
    () => parseStrictJson('{"a":'),
    (e: unknown) => e instanceof BodyReadError && e.status === 400,
  );
});

test('the value count is an upper bound that is never below the real count, and commas in strings do not count', () => {
  const body = (o: unknown) => Buffer.from(JSON.stringify(o));
  const many = body(Array.from({ length: 1000 }, (_, i) => i));
  assert.ok(jsonValuesAtLeast(many, 10_000) >= 1001);
  assert.ok(jsonValuesAtLeast(many, 10) > 10, 'stops once past the limit, but past it');
  const hcl = body({ policy: 'path "a" { capabilities = ["read", "list"] },'.repeat(2000) });
  assert.ok(jsonValuesAtLeast(hcl, 100) <= 100, 'a long string full of commas and brackets is one value');
});
