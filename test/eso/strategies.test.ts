import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decodeValue, convertKey } from '../../eso/strategies.ts';

void describe('decoding and conversion strategies', () => {
  void test('strict Base64 like Go, Auto falls back to the raw value', () => {
    assert.equal(decodeValue('Base64', Buffer.from('aGVsbG8=')).toString(), 'hello');
    assert.throws(() => decodeValue('Base64', Buffer.from('aGVsbG8')), /illegal base64/);
    assert.equal(decodeValue('Base64URL', Buffer.from('-_8=')).toString('hex'), 'fbff');
    assert.equal(decodeValue('Auto', Buffer.from('-_8=')).toString('hex'), 'fbff');
    assert.equal(decodeValue('Auto', Buffer.from('not base64!')).toString(), 'not base64!');
    assert.equal(decodeValue('None', Buffer.from('aGVsbG8=')).toString(), 'aGVsbG8=');
  });
  void test('key conversion Default and Unicode', () => {
    assert.equal(convertKey('Default', 'app/db password'), 'app_db_password');
    assert.equal(convertKey('Unicode', 'a/b'), 'a_U002f_b');
    assert.equal(convertKey('Default', 'ok-key_1.x'), 'ok-key_1.x');
  });
});
