// PEM text into the facts the keeper plans with: who issued a certificate, whether a key belongs to it,
// how far through its life it is.
import { test, before } from 'node:test';
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { generateCA, issueServingCert, type CertKeyPair } from '../../certs/generate.ts';
import {
  bundleFacts,
  certFacts,
  isIssuedBy,
  isValidAt,
  joinPemBundle,
  keyMatchesCert,
  lifetimeElapsed,
  splitPemBundle,
  tryCertFacts,
} from '../../certs/pem.ts';

let ca: CertKeyPair;
let other: CertKeyPair;
let leaf: CertKeyPair;
before(async () => {
  ca = await generateCA({ commonName: 'vaultgate-ca' });
  other = await generateCA({ commonName: 'other-ca' });
  leaf = await issueServingCert({ ca, dnsNames: ['webhook.vaultgate.svc'], ipAddresses: ['127.0.0.1'] });
});

test('a certificate reads as subject, SANs, CA flag and validity', () => {
  const f = certFacts(leaf.cert);
  assert.match(f.subject, /CN=webhook\.vaultgate\.svc/);
  assert.deepEqual(f.dnsNames, ['webhook.vaultgate.svc']);
  assert.deepEqual(f.ipAddresses, ['127.0.0.1']);
  assert.equal(f.isCA, false);
  assert.equal(certFacts(ca.cert).isCA, true);
  assert.match(f.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  assert.ok(isValidAt(f, Date.now()));
  assert.ok(!isValidAt(f, f.notAfter));
});

test('bundles split and join; a block that is not a certificate is dropped, not fatal', () => {
  const bundle = joinPemBundle([ca.cert, other.cert]);
  assert.equal(splitPemBundle(bundle).length, 2);
  const broken = `${bundle}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`;
  assert.deepEqual(
    bundleFacts(broken).map((f) => f.subject),
    [certFacts(ca.cert).subject, certFacts(other.cert).subject],
  );
  assert.equal(tryCertFacts('not a pem'), undefined);
  assert.equal(tryCertFacts(undefined), undefined);
  assert.deepEqual(bundleFacts(undefined), []);
});

test('issuer and key checks: only the real issuer and the matching key pass', () => {
  const l = certFacts(leaf.cert);
  assert.ok(isIssuedBy(l, certFacts(ca.cert)));
  assert.ok(!isIssuedBy(l, certFacts(other.cert)));
  assert.ok(keyMatchesCert(leaf.key, l));
  assert.ok(!keyMatchesCert(ca.key, l));
  assert.ok(!keyMatchesCert('garbage', l));
  assert.ok(!keyMatchesCert(undefined, l));
});

test('lifetime elapsed runs from 0 at notBefore to 1 at notAfter', () => {
  const c = { notBefore: 1000, notAfter: 3000 };
  assert.equal(lifetimeElapsed(c, 1000), 0);
  assert.equal(lifetimeElapsed(c, 2500), 0.75);
  assert.equal(lifetimeElapsed(c, 3000), 1);
  assert.equal(lifetimeElapsed({ notBefore: 5, notAfter: 5 }, 0), 1, 'an empty window is used up');
});
