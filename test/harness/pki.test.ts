// owner: B
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer, request } from 'node:https';
import { createCA } from './pki.ts';

void describe('test PKI', () => {
  void test('a server certificate chains to its CA and serves TLS for 127.0.0.1 to a client trusting only that CA', async () => {
    const ca = await createCA('test-ca');
    const leaf = await ca.issue({
      commonName: 'api',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
      usage: 'server',
    });
    const caCert = new X509Certificate(ca.certPem);
    const cert = new X509Certificate(leaf.certPem);
    assert.ok(cert.checkIssued(caCert) && cert.verify(caCert.publicKey), 'leaf is signed by the CA');
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(cert.checkHost('localhost'), 'localhost');
    assert.equal(caCert.ca, true);
    assert.equal(cert.ca, false);

    const server = createServer({ cert: leaf.certPem, key: leaf.keyPem }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const body = await new Promise<string>((resolve, reject) => {
        request({ host: '127.0.0.1', port, ca: ca.certPem, agent: false }, (res) => {
          let b = '';
          res.on('data', (c: Buffer) => (b += c.toString()));
          res.on('end', () => resolve(b));
        })
          .on('error', reject)
          .end();
      });
      assert.equal(body, 'ok');
    } finally {
      server.close();
    }
  });

  void test('a client certificate carries the organizations Kubernetes reads as groups', async () => {
    const ca = await createCA('test-ca');
    const admin = await ca.issue({
      commonName: 'vaultgate-test-admin',
      organizations: ['system:masters'],
      usage: 'client',
    });
    const cert = new X509Certificate(admin.certPem);
    assert.match(cert.subject, /^CN=vaultgate-test-admin$/m);
    assert.match(cert.subject, /^O=system:masters$/m);
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2'], 'clientAuth only');
  });
});
