// Go's strconv.ParseInt(s, 0, 64) syntax (golang/strconv.ts): the answers are Go 1.24's, one row each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitsInt64, parseGoInt } from '../../golang/strconv.ts';

test("parseGoInt accepts and refuses what Go's strconv.ParseInt(s, 0, 64) does", () => {
  const rows: Array<[string, bigint | undefined]> = [
    ['0x_1F', 31n], // an underscore right after a base prefix
    ['0X_a', 10n],
    ['0o_7', 7n],
    ['0b_1', 1n],
    ['0_7', 7n],
    ['07', 7n],
    ['1_0', 10n],
    ['0x1_F', 31n],
    ['-0x_1', -1n],
    ['+12', 12n],
    ['0', 0n],
    ['0x', undefined],
    ['0_', undefined],
    ['1__0', undefined],
    ['08', undefined],
    ['_1', undefined],
    ['0x1F_', undefined],
    ['1.0', undefined],
  ];
  for (const [text, want] of rows) assert.equal(parseGoInt(text), want, text);
});

test('fitsInt64: the int64 range, both ends', () => {
  assert.equal(fitsInt64(2n ** 63n - 1n), true);
  assert.equal(fitsInt64(2n ** 63n), false);
  assert.equal(fitsInt64(-(2n ** 63n)), true);
  assert.equal(fitsInt64(-(2n ** 63n) - 1n), false);
});
