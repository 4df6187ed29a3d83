// Sprig's buildCustomCert: a certificate value from base64 PEM, refused with Sprig's messages (never the
// input's text) when either half does not decode or parse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateCA } from '../../../certs/generate.ts';
import { buildCustomCert } from '../../../golang/sprig/cert.ts';
import { sprig } from './sprig.ts';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

test('a valid pair gives a certificate whose .Cert and .Key are the PEM texts', async () => {
  const ca = await generateCA({ commonName: 'test' });
  const c = buildCustomCert(b64(ca.cert), b64(ca.key));
  assert.equal(c.fields.get('Cert'), ca.cert);
  assert.equal(c.fields.get('Key'), ca.key);
  assert.equal(sprig(`{{ (buildCustomCert "${b64(ca.cert)}" "${b64(ca.key)}").Cert }}`), ca.cert);
});

test("each broken half is refused with Sprig's message", async () => {
  const ca = await generateCA({ commonName: 'test' });
  assert.throws(() => buildCustomCert('%%%', b64(ca.key)), /unable to decode base64 certificate/);
  assert.throws(() => buildCustomCert(b64(ca.cert), '%%%'), /unable to decode base64 private key/);
  assert.throws(() => buildCustomCert(b64('not pem'), b64(ca.key)), /unable to decode certificate/);
  const garbage = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
  assert.throws(() => buildCustomCert(b64(garbage), b64(ca.key)), /error parsing certificate/);
  const secretKey = '-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n';
  assert.throws(
    () => buildCustomCert(b64(ca.cert), b64(secretKey)),
    (e: Error) => /error parsing private key/.test(e.message) && !e.message.includes('c2VjcmV0'),
  );
});
