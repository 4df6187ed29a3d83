// Sprig's encodings and checksums: base64 (its decoder's error as the result), base32, adler32, AES.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adler32 } from '../../../golang/sprig/encoding.ts';
import { sprig } from './sprig.ts';

test('base64 and base32 round trips; a bad base64 input renders the decoder error, as Sprig does', () => {
  assert.equal(sprig('{{ b64enc "hello" }} {{ "aGVsbG8=" | b64dec }}'), 'aGVsbG8= hello');
  assert.equal(sprig('{{ b32enc "hello" }} {{ b32dec "NBSWY3DP" }}'), 'NBSWY3DP hello');
  assert.equal(sprig('{{ b64dec "a$" }}'), 'illegal base64 data at input byte 1');
});

test("adler32 is zlib's checksum; decryptAES reads what Sprig's encryptAES wrote", () => {
  assert.equal(adler32('hello'), 103547413);
  assert.equal(sprig('{{ adler32sum "hello" }} {{ sha256sum "a" }}').split(' ')[1]?.slice(0, 8), 'ca978112');
  // Written by Sprig's encryptAES "secretkey" "plaintext" (random IV first, then AES-CBC).
  assert.equal(sprig('{{ decryptAES "secretkey" "01IiQQBGweOPiTvh3eLlboK6grAbmoxRxSfu/m0iqTQ=" }}'), 'plaintext');
  assert.equal(sprig('{{ decryptAES "k" "" }}'), '');
  assert.throws(() => sprig('{{ decryptAES "secretkey" "bad" }}'), /error calling decryptAES: illegal base64 data/);
});
