// Sprig's conversions (atoi, int64, float64, toString, toStrings): spf13/cast's answers, 0 when unparsable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { castFloat, castInt, strslice, strval } from '../../../golang/sprig/cast.ts';
import { GoNum } from '../../../golang/values.ts';
import { sprig } from './sprig.ts';

test('numbers from strings and numbers; unparsable text is 0, not an error', () => {
  assert.equal(castInt('12'), 12);
  assert.equal(castInt('abc'), 0);
  assert.equal(castInt('0x_1F'), 31, "Go's ParseInt takes an underscore after the base prefix");
  assert.equal(castInt('9223372036854775808'), 0, 'beyond int64: unparsable');
  assert.equal(castInt(new GoNum('float64', 3.9)), 3, 'truncated');
  assert.equal(castFloat('1.5'), 1.5);
  assert.equal(sprig('{{ atoi "abc" }} {{ int64 "12" }} {{ float64 "1.5" }}'), '0 12 1.5');
});

test('toString prints as fmt does, bytes as text; toStrings drops nils', () => {
  assert.equal(strval(42), '42');
  assert.equal(strval(new Uint8Array([104, 105])), 'hi');
  assert.deepEqual(strslice([1, 'a', null]), ['1', 'a'], 'nil elements are dropped');
});
