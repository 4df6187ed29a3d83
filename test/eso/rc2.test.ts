// RC2 (RFC 2268) as PKCS#12's legacy PBE-SHA1-RC2 needs it: the RFC's own test vectors, decrypted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rc2CbcDecrypt } from '../../eso/rc2.ts';

const hex = (s: string): Buffer => Buffer.from(s.replace(/ /g, ''), 'hex');
const zeroIv = Buffer.alloc(8);

test('RFC 2268 section 5 vectors: each ciphertext decrypts to its plaintext', () => {
  // [key, effective key bits, plaintext, ciphertext]
  const vectors: Array<[string, number, string, string]> = [
    ['00 00 00 00 00 00 00 00', 63, '00 00 00 00 00 00 00 00', 'eb b7 73 f9 93 27 8e ff'],
    ['ff ff ff ff ff ff ff ff', 64, 'ff ff ff ff ff ff ff ff', '27 8b 27 e4 2e 2f 0d 49'],
    ['30 00 00 00 00 00 00 00', 64, '10 00 00 00 00 00 00 01', '30 64 9e df 9b e7 d2 c2'],
    ['88', 64, '00 00 00 00 00 00 00 00', '61 a8 a2 44 ad ac cc f0'],
    ['88 bc a9 0e 90 87 5a', 64, '00 00 00 00 00 00 00 00', '6c cf 43 08 97 4c 26 7f'],
    ['88 bc a9 0e 90 87 5a 7f 0f 79 c3 84 62 7b af b2', 128, '00 00 00 00 00 00 00 00', '22 69 55 2a b0 f8 5c a6'],
  ];
  for (const [key, bits, plain, cipher] of vectors)
    assert.equal(rc2CbcDecrypt(hex(key), bits, zeroIv, hex(cipher)).toString('hex'), hex(plain).toString('hex'), key);
});

test('CBC: each block is XORed with the previous ciphertext block (the IV for the first)', () => {
  const key = hex('ff ff ff ff ff ff ff ff');
  const c1 = hex('27 8b 27 e4 2e 2f 0d 49');
  const iv = hex('01 02 03 04 05 06 07 08');
  const out = rc2CbcDecrypt(key, 64, iv, Buffer.concat([c1, c1]));
  assert.equal(out.subarray(0, 8).toString('hex'), 'fefdfcfbfaf9f8f7', 'ff… XOR the IV');
  assert.equal(out.subarray(8).toString('hex'), Buffer.from(c1.map((b) => b ^ 0xff)).toString('hex'));
});
