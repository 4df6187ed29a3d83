// The probes test pods run against their credential (tls-probe.ts, token-probe.ts over probe-loop.ts),
// in-process against local servers: each check line says ok while the credential works, and fails with
// the reason a client would see once it does not (certificate expired or on the CA's CRL; token refused).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto, X509Certificate } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProbeLine } from './pg-probe.ts';
import { createCA } from './pki.ts';
import { runTlsProbe, vaultSerial } from './tls-probe.ts';
import { runTokenProbe } from './token-probe.ts';

x509.cryptoProvider.set(webcrypto);
const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const NAME = 'web.team.svc.test';
const MIN = 60_000;

const pem = (der: ArrayBuffer, label: string): string =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END ${label}-----\n`;
const listen = async (s: Server): Promise<number> => {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  return (s.address() as AddressInfo).port;
};
/** Runs a probe for ~1.5 s (two checks), returns its lines. */
async function linesOf(start: (write: (l: string) => void) => { stop: () => void }): Promise<ProbeLine[]> {
  const out: string[] = [];
  const probe = start((l) => out.push(l));
  await sleep(1500);
  probe.stop();
  return out.map((l) => JSON.parse(l) as ProbeLine);
}

void describe('tls-probe: a pod serving its certificate checks it against the CA at the current time and the CRL', () => {
  let caKeys: webcrypto.CryptoKeyPair;
  let caCert: x509.X509Certificate;
  let crlPem = '';
  let crlServer: Server;
  let crlUrl = '';
  const leaf = async (serial: string, notBefore: number, notAfter: number): Promise<{ crt: string; key: string }> => {
    const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial,
      subject: `CN=${NAME}`,
      issuer: caCert.subject,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      notBefore: new Date(notBefore),
      notAfter: new Date(notAfter),
      signingAlgorithm: SIGN,
      extensions: [
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: NAME }]),
      ],
    });
    return {
      crt: cert.toString('pem'),
      key: pem(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY'),
    };
  };
  const probe = (c: { crt: string; key: string }) =>
    linesOf((write) =>
      runTlsProbe(
        { TLS_CRT: c.crt, TLS_KEY: c.key, CA_CRT: caCert.toString('pem'), TLS_NAME: NAME, CRL_URL: crlUrl },
        write,
      ),
    );

  before(async () => {
    caKeys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
    caCert = await x509.X509CertificateGenerator.createSelfSigned({
      name: 'CN=probe test root',
      keys: caKeys,
      notBefore: new Date(Date.now() - MIN),
      notAfter: new Date(Date.now() + 60 * MIN),
      signingAlgorithm: SIGN,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      ],
    });
    const crl = await x509.X509CrlGenerator.create({
      issuer: caCert.subject,
      thisUpdate: new Date(Date.now() - MIN),
      nextUpdate: new Date(Date.now() + 60 * MIN),
      entries: [{ serialNumber: '0badc0de', revocationDate: new Date() }],
      signingKey: caKeys.privateKey,
      signingAlgorithm: SIGN,
    });
    crlPem = pem(crl.rawData, 'X509 CRL'); // OpenSSL's label (peculiar's toString says CRL)
    crlServer = createHttpServer((req, res) =>
      req.url === '/v1/pki/crl/pem' ? res.writeHead(200).end(crlPem) : res.writeHead(404).end('{"errors":[]}'),
    );
    crlUrl = `http://127.0.0.1:${await listen(crlServer)}/v1/pki/crl/pem`;
  });
  after(() => crlServer?.close());

  void test('a valid certificate: ok at every check, named by its serial in OpenBao form', async () => {
    const c = await leaf('01abcdef', Date.now() - MIN, Date.now() + 10 * MIN);
    assert.equal(vaultSerial(new X509Certificate(c.crt)), '01:ab:cd:ef');
    const lines = await probe(c);
    assert.ok(lines.length >= 2, JSON.stringify(lines));
    for (const l of lines)
      assert.deepEqual([l.ok, l.user, l.code], [true, '01:ab:cd:ef', undefined], JSON.stringify(l));
  });

  void test('a revoked certificate (its serial on the CRL) fails every check with CERT_REVOKED', async () => {
    const lines = await probe(await leaf('0badc0de', Date.now() - MIN, Date.now() + 10 * MIN));
    assert.ok(lines.length >= 2);
    for (const l of lines) assert.deepEqual([l.ok, l.code], [false, 'CERT_REVOKED']);
  });

  void test('an expired certificate fails with CERT_HAS_EXPIRED', async () => {
    const lines = await probe(await leaf('02', Date.now() - 10 * MIN, Date.now() - MIN));
    assert.ok(lines.length >= 2);
    for (const l of lines) assert.deepEqual([l.ok, l.code], [false, 'CERT_HAS_EXPIRED']);
  });

  void test('no CRL to be had fails the check: a probe that cannot tell is no proof', async () => {
    const c = await leaf('03', Date.now() - MIN, Date.now() + 10 * MIN);
    const lines = await linesOf((write) =>
      runTlsProbe(
        { TLS_CRT: c.crt, TLS_KEY: c.key, CA_CRT: caCert.toString('pem'), TLS_NAME: NAME, CRL_URL: `${crlUrl}x` },
        write,
      ),
    );
    assert.ok(lines.length >= 2);
    for (const l of lines) assert.deepEqual([l.ok, l.code], [false, 'CRL_HTTP_404']);
  });
});

void describe('token-probe: a pod calling the apiserver with its token', () => {
  let server: Server;
  let url = '';
  let caPem = '';
  before(async () => {
    const ca = await createCA('probe test apiserver CA');
    const serving = await ca.issue({ commonName: 'apiserver', ipAddresses: ['127.0.0.1'], usage: 'server' });
    caPem = ca.certPem;
    server = createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const good = req.headers.authorization === 'Bearer good-token' && req.url === '/api/v1/namespaces/t/configmaps';
      res
        .writeHead(good ? 200 : 401, { 'content-type': 'application/json' })
        .end(JSON.stringify(good ? { items: [] } : { kind: 'Status', message: 'Unauthorized' }));
    });
    url = `https://127.0.0.1:${await listen(server)}`;
  });
  after(() => server?.close());
  const probe = (token: string) =>
    linesOf((write) =>
      runTokenProbe(
        {
          KUBE_TOKEN: token,
          KUBE_USER: 'v-sa',
          KUBE_SERVER: url,
          KUBE_CA: caPem,
          KUBE_PATH: '/api/v1/namespaces/t/configmaps',
        },
        write,
      ),
    );

  void test('a working token: ok at every check, named by its ServiceAccount', async () => {
    const lines = await probe('good-token');
    assert.ok(lines.length >= 2);
    for (const l of lines) assert.deepEqual([l.ok, l.user], [true, 'v-sa']);
  });

  void test('a refused token fails with the HTTP status and the Status message, never the token', async () => {
    const lines = await probe('revoked-token');
    assert.ok(lines.length >= 2);
    for (const l of lines) assert.deepEqual([l.ok, l.code, l.error], [false, 'HTTP_401', 'Unauthorized']);
    assert.ok(!JSON.stringify(lines).includes('revoked-token'));
  });
});
