import { test, describe } from 'node:test';
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import tls from 'node:tls';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as x509 from '@peculiar/x509';
import {
  generateCA,
  generateWebhookPki,
  issueServingCert,
  serviceDnsNames,
  splitSans,
  BACKDATE_MS,
} from '../../certs/generate.ts';
import { certFacts, isIssuedBy, keyMatchesCert, splitPemBundle, joinPemBundle } from '../../certs/pem.ts';

const DAY = 86_400_000;

void describe('certs/generate', () => {
  void test('the leaf carries every Service DNS form plus extra SANs and IPs', async () => {
    const { leaf } = await generateWebhookPki({
      service: 'vaultgate-webhook',
      namespace: 'vaultgate',
      extraSans: ['localhost', '127.0.0.1', '::1'],
    });
    const f = certFacts(leaf.cert);
    assert.deepEqual(f.dnsNames, [
      'vaultgate-webhook',
      'vaultgate-webhook.vaultgate',
      'vaultgate-webhook.vaultgate.svc',
      'vaultgate-webhook.vaultgate.svc.cluster.local',
      'localhost',
    ]);
    assert.deepEqual(f.ipAddresses, ['127.0.0.1', '0:0:0:0:0:0:0:1']);
    const cert = new X509Certificate(leaf.cert);
    assert.equal(cert.checkHost('vaultgate-webhook.vaultgate.svc'), 'vaultgate-webhook.vaultgate.svc');
    assert.equal(cert.checkHost('other.vaultgate.svc'), undefined);
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
  });

  void test('CA: ECDSA P-256, SHA-256, CA critical with pathLen 0, keyCertSign|cRLSign, 10 years', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const ca = await generateCA({ now });
    const c = new x509.X509Certificate(ca.cert);
    assert.equal((c.signatureAlgorithm as { name?: string }).name, 'ECDSA');
    assert.equal((c.signatureAlgorithm as { hash?: { name: string } }).hash?.name, 'SHA-256');
    assert.equal((c.publicKey.algorithm as EcKeyAlgorithmLike).namedCurve, 'P-256');
    const bc = c.getExtension(x509.BasicConstraintsExtension)!;
    assert.equal(bc.ca, true);
    assert.equal(bc.pathLength, 0);
    assert.equal(bc.critical, true);
    const ku = c.getExtension(x509.KeyUsagesExtension)!;
    assert.equal(ku.usages, x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    assert.equal(c.notAfter.getTime() - now.getTime(), 3650 * DAY);
    assert.equal(now.getTime() - c.notBefore.getTime(), BACKDATE_MS);
    assert.ok(new X509Certificate(ca.cert).ca);
  });

  void test('leaf: digitalSignature, EKU serverAuth only, not a CA, 1 year by default, configurable, never past the CA', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const ca = await generateCA({ now, validityDays: 100 });
    const leaf = await issueServingCert({ ca, dnsNames: ['a.b.svc'], now });
    const c = new x509.X509Certificate(leaf.cert);
    assert.equal(c.getExtension(x509.KeyUsagesExtension)!.usages, x509.KeyUsageFlags.digitalSignature);
    assert.deepEqual([...c.getExtension(x509.ExtendedKeyUsageExtension)!.usages], [x509.ExtendedKeyUsage.serverAuth]);
    assert.equal(c.getExtension(x509.BasicConstraintsExtension)!.ca, false);
    assert.equal(new X509Certificate(leaf.cert).ca, false);
    assert.equal(
      c.notAfter.getTime(),
      new x509.X509Certificate(ca.cert).notAfter.getTime(),
      'capped at the CA notAfter',
    );
    const ca2 = await generateCA({ now });
    const year = await issueServingCert({ ca: ca2, dnsNames: ['a.b.svc'], now });
    assert.equal(new x509.X509Certificate(year.cert).notAfter.getTime() - now.getTime(), 365 * DAY);
    const short = await issueServingCert({ ca: ca2, dnsNames: ['a.b.svc'], now, validityDays: 7 });
    assert.equal(new x509.X509Certificate(short.cert).notAfter.getTime() - now.getTime(), 7 * DAY);
  });

  void test('the chain verifies with node:crypto and keys match their certificates', async () => {
    const { ca, leaf } = await generateWebhookPki({ service: 's', namespace: 'n' });
    const caCert = new X509Certificate(ca.cert);
    const leafCert = new X509Certificate(leaf.cert);
    assert.ok(leafCert.checkIssued(caCert));
    assert.ok(leafCert.verify(caCert.publicKey));
    assert.ok(caCert.verify(caCert.publicKey), 'the CA is self-signed');
    assert.ok(leafCert.checkPrivateKey(createPrivateKey(leaf.key)));
    assert.ok(keyMatchesCert(ca.key, certFacts(ca.cert)));
    assert.ok(!keyMatchesCert(ca.key, certFacts(leaf.cert)));
    const other = await generateCA();
    assert.ok(!isIssuedBy(certFacts(leaf.cert), certFacts(other.cert)));
    assert.ok(isIssuedBy(certFacts(leaf.cert), certFacts(ca.cert)));
  });

  void test('a TLS client trusting only the CA completes a handshake for the Service name', async () => {
    const { ca, leaf } = await generateWebhookPki({ service: 'svc', namespace: 'ns', extraSans: ['127.0.0.1'] });
    const server = https.createServer({ cert: leaf.cert, key: leaf.key, minVersion: 'TLSv1.2' }, (_req, res) =>
      res.end('ok'),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const body = await new Promise<string>((resolve, reject) => {
        https
          .get({ host: '127.0.0.1', port, servername: 'svc.ns.svc', ca: ca.cert, agent: false, path: '/' }, (res) => {
            let s = '';
            res.on('data', (d: Buffer) => {
              s += d.toString();
            });
            res.on('end', () => resolve(s));
          })
          .on('error', reject);
      });
      assert.equal(body, 'ok');
      const wrongCa = await generateCA();
      await assert.rejects(
        new Promise((resolve, reject) => {
          const s = tls.connect({ host: '127.0.0.1', port, servername: 'svc.ns.svc', ca: wrongCa.cert }, () => {
            s.end();
            resolve(undefined);
          });
          s.on('error', reject);
        }),
        /unable to verify|self.signed|UNABLE_TO_VERIFY/i,
      );
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });

  void test('two CAs get different subjects and serials; bundles split and join', async () => {
    const [a, b] = await Promise.all([
      generateCA({ now: new Date(1_000_000_000_000) }),
      generateCA({ now: new Date(1_000_000_500_000) }),
    ]);
    assert.notEqual(certFacts(a.cert).subject, certFacts(b.cert).subject);
    assert.notEqual(certFacts(a.cert).serialNumber, certFacts(b.cert).serialNumber);
    const bundle = joinPemBundle([a.cert, b.cert]);
    assert.deepEqual(
      splitPemBundle(bundle).map((p) => certFacts(p).fingerprint),
      [certFacts(a.cert).fingerprint, certFacts(b.cert).fingerprint],
    );
  });

  void test('helpers: Service names honour the cluster domain; SANs split into DNS and IP', () => {
    assert.deepEqual(
      serviceDnsNames({ service: 'w', namespace: 'n', clusterDomain: 'corp.example' }).at(-1),
      'w.n.svc.corp.example',
    );
    assert.deepEqual(splitSans(['a', '10.0.0.1', 'a', '::1']), { dnsNames: ['a'], ipAddresses: ['10.0.0.1', '::1'] });
  });

  void test('rejects a leaf with no names and a non-positive validity', async () => {
    const ca = await generateCA();
    await assert.rejects(issueServingCert({ ca, dnsNames: [] }), /at least one DNS name/);
    await assert.rejects(generateCA({ validityDays: 0 }), /positive/);
  });
});

interface EcKeyAlgorithmLike {
  namedCurve?: string;
}
