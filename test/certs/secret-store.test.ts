// The webhook's PKI in a Secret: written and read back unchanged, with a rotation annotation that holds
// fingerprints and times only (never key material).
import { test, before } from 'node:test';
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { generateCA, issueServingCert, type CertKeyPair } from '../../certs/generate.ts';
import { joinPemBundle } from '../../certs/pem.ts';
import { ROTATION_ANNOTATION, describeRotation, readStoredPki, toSecret } from '../../certs/secret-store.ts';

let ca: CertKeyPair;
let next: CertKeyPair;
let leaf: CertKeyPair;
before(async () => {
  ca = await generateCA();
  next = await generateCA();
  leaf = await issueServingCert({ ca, dnsNames: ['webhook.vaultgate.svc'] });
});

test('a PKI written to a Secret reads back the same; labels of the base Secret are kept', () => {
  const stored = {
    caBundle: ca.cert,
    caKey: ca.key,
    cert: leaf.cert,
    key: leaf.key,
    published: { bundleId: 'b1', at: 1_700_000_000_000 },
  };
  const secret = toSecret(stored, {
    metadata: { name: 'vaultgate-webhook-tls', namespace: 'vaultgate', labels: { team: 'x' } },
  });
  assert.equal(secret.metadata.labels?.team, 'x');
  assert.equal(secret.metadata.labels?.['app.kubernetes.io/managed-by'], 'vaultgate');
  assert.deepEqual(readStoredPki(secret), { ...stored, rotateRequestedAt: undefined });
  const annotation = secret.metadata.annotations?.[ROTATION_ANNOTATION] ?? '';
  for (const material of [ca.key, leaf.key, ca.cert]) assert.ok(!annotation.includes(material.split('\n')[1] ?? '?'));
});

test('the rotation phase: steady with one CA, ca-staged while the leaf is from the old one, incomplete without a leaf', () => {
  assert.equal(describeRotation({ caBundle: ca.cert, caKey: ca.key, cert: leaf.cert }).phase, 'steady');
  const bundle = joinPemBundle([ca.cert, next.cert]);
  assert.equal(describeRotation({ caBundle: bundle, caKey: next.key, cert: leaf.cert }).phase, 'ca-staged');
  assert.equal(describeRotation({ caBundle: bundle, caKey: ca.key, cert: leaf.cert }).phase, 'retiring-old-ca');
  assert.equal(describeRotation({ caBundle: ca.cert, caKey: ca.key }).phase, 'incomplete');
});

test('a hand-edited annotation reads as "never published" instead of failing; no Secret is no PKI', () => {
  const secret = toSecret({ caBundle: ca.cert }, { metadata: { name: 's' } });
  secret.metadata.annotations = { [ROTATION_ANNOTATION]: '{not json' };
  assert.equal(readStoredPki(secret)?.published, undefined);
  assert.equal(readStoredPki(secret)?.caBundle, ca.cert);
  assert.equal(readStoredPki(undefined), undefined);
});
