// Go values as templates hold them: strings are bytes, JSON numbers are float64, and type names, truth
// and DeepEqual follow Go's reflect and text/template.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  deepEqual,
  fromJsValue,
  GoMap,
  GoNum,
  goString,
  goStringBytes,
  goType,
  isTrue,
  nilSlice,
  stringSlice,
  utf8Text,
} from '../../golang/values.ts';

test('a Go string is its UTF-8 bytes, one char each, and reads back as the same text', () => {
  const s = goString('héllo');
  assert.equal(s.length, 6, 'é is two bytes');
  assert.deepEqual(goStringBytes(s), Buffer.from('héllo'));
  assert.equal(utf8Text(s), 'héllo');
});

test('JSON data arrives as Go decodes it into interface{}: float64 numbers, map[string]interface {}', () => {
  const v = fromJsValue({ n: 3, list: ['a'], nested: { ok: true } }) as GoMap;
  assert.equal(goType(v), 'map[string]interface {}');
  assert.equal(goType(v.get('n')), 'float64');
  assert.equal(goType(v.get('list')), '[]interface {}');
  assert.equal(goType(stringSlice(['a'])), '[]string');
  assert.equal(goType(1), 'int');
  assert.equal(goType(null), '<nil>');
});

test('template truth: empty string, zero, empty map/slice and nil are false; structs true', () => {
  for (const v of ['', 0, new GoNum('float64', 0), [], new GoMap(), null, false]) assert.equal(isTrue(v), false);
  for (const v of ['0', 1, ['x'], new GoMap([['k', 'v']]), true]) assert.equal(isTrue(v), true);
});

test('DeepEqual tells types apart and a nil slice from an empty one', () => {
  assert.equal(deepEqual(new GoNum('float64', 1), new GoNum('float64', 1)), true);
  assert.equal(deepEqual(1, new GoNum('float64', 1)), false);
  assert.equal(deepEqual(new GoMap([['a', [1]]]), new GoMap([['a', [1]]])), true);
  assert.equal(deepEqual(nilSlice(), []), false);
});
