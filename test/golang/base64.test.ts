// encoding/base64's StdEncoding.DecodeString, whose error text Sprig's b64dec returns as its result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goBase64 } from '../../golang/base64.ts';

test('decodes padded standard base64, ignoring line breaks', () => {
  assert.deepEqual(goBase64('aGVs\r\nbG8='), Buffer.from('hello'));
});

test("bad input gives Go's error text with the byte offset in the original input", () => {
  assert.equal(goBase64('aGV$bG8='), 'illegal base64 data at input byte 3');
  assert.equal(goBase64('aGVsbG8'), 'illegal base64 data at input byte 4', 'missing padding');
  assert.equal(goBase64('aGVs\nbG8-'), 'illegal base64 data at input byte 8', 'URL alphabet is not standard');
});
