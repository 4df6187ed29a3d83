// go-pkcs12's DecodeChain as ESO's pkcs12key/pkcs12cert use it, over files OpenSSL 3 wrote
// (test/eso/fixtures/pkcs12: `openssl pkcs12 -export`, modern AES-256/PBKDF2 and -legacy RC2/3DES,
// password "s3cret", of cert.pem and key.pem).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { decodeChain } from '../../eso/pkcs12.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`fixtures/pkcs12/${name}`, import.meta.url));
const certDer = new X509Certificate(fixture('cert.pem')).raw;
const keyDer = createPrivateKey(fixture('key.pem')).export({ type: 'pkcs8', format: 'der' });

for (const file of ['modern.p12', 'legacy.p12'])
  test(`${file}: the certificate and the key come out as they went in`, () => {
    const chain = decodeChain(fixture(file), 's3cret');
    assert.deepEqual(chain.cert, certDer);
    assert.deepEqual(
      createPrivateKey({ key: chain.key, format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'der' }),
      keyDer,
    );
    assert.deepEqual(chain.caCerts, []);
  });

test("a wrong password is refused with go-pkcs12's message, which does not quote it", () => {
  for (const file of ['modern.p12', 'legacy.p12'])
    assert.throws(
      () => decodeChain(fixture(file), 'wrong-guess'),
      (e: Error) => /password incorrect/.test(e.message) && !e.message.includes('wrong-guess'),
      file,
    );
});

test('bytes that are not a PFX are refused, not crashed on', () => {
  assert.throws(() => decodeChain(Buffer.from('not a pfx'), ''), /pkcs12|asn1|expected/i);
  assert.throws(() => decodeChain(fixture('modern.p12').subarray(0, 200), 's3cret'), /pkcs12|asn1|expected/i);
});
