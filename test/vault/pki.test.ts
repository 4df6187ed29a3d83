// vault/pki.ts: the PKI mount of an issue path (where a certificate is revoked), Vault's serial form, and the
// facts of a stored certificate (what a restarted controller reads instead of re-issuing).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VaultError } from '../../vault/errors.ts';
import { connect, createServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import {
  certificateChainPem,
  certificateFacts,
  issueCertificate,
  pkiMountOf,
  revokeCertificate,
  vaultSerial,
} from '../../vault/pki.ts';
import type { VaultRequester } from '../../vault/types.ts';
import { selfSignedPem } from '../harness/pki.ts';

/** A Vault that answers every request with `answer` (a body, or a thrown error), as OpenBao 2.7.2 answers pki/revoke. */
const answering = (answer: unknown): VaultRequester => ({
  request: <T>() => (answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as T)),
});

void describe('vault/pki', () => {
  void test('the mount of an issue path, with or without an issuer; nothing for other paths', () => {
    assert.equal(pkiMountOf('pki/issue/web'), 'pki');
    assert.equal(pkiMountOf('team/pki-int/issuer/default/issue/web'), 'team/pki-int');
    assert.equal(pkiMountOf('pki/sign/web'), undefined);
    assert.equal(pkiMountOf('database/creds/app'), undefined);
  });

  void test("serials in Vault's form: lowercase hex pairs joined by colons", () => {
    assert.equal(vaultSerial('3A5B7C'), '3a:5b:7c');
    assert.equal(vaultSerial('A5B7C'), '0a:5b:7c');
  });

  void test("a stored certificate's serial and validity are read from its PEM; garbage is no certificate", () => {
    const pem = selfSignedPem({ subject: '/CN=a.example', days: 2, serialHex: '3a5b7c' });
    const f = certificateFacts(pem);
    assert.ok(f);
    assert.equal(f.serial, '3a:5b:7c');
    const days = (f.notAfter - f.notBefore) / 86_400_000;
    assert.ok(days > 1.9 && days < 2.1, String(days));
    assert.equal(certificateFacts('not a certificate'), undefined);
  });

  // What OpenBao 2.7.2 answers (measured against its dev server): a revoked certificate's revocation time;
  // for an expired one 200 with no data and only a warning, which is not a revocation.
  void test('revoke by serial: true only when Vault says when it revoked; expired or unknown is done, not revoked', async () => {
    const revoked = { data: { revocation_time: 1796304088, state: 'revoked' }, warnings: null };
    assert.equal(await revokeCertificate(answering(revoked), 'pki', '6c:6f'), true);
    const expired = {
      data: null,
      warnings: [
        "certificate with serial 6c:6f already expired; refusing to add to CRL. Enable 'AllowExpiredCertRevocation' to allow revoking expired certificates.",
      ],
    };
    assert.equal(await revokeCertificate(answering(expired), 'pki', '6c:6f'), false);
    const unknown = new VaultError(
      'invalid',
      'pki.revoke: certificate with serial 01:02:03 not found.',
      400,
      'pki.revoke',
    );
    assert.equal(await revokeCertificate(answering(unknown), 'pki', '01:02:03'), false);
    const denied = new VaultError('forbidden', 'pki.revoke: permission denied', 403, 'pki.revoke');
    await assert.rejects(revokeCertificate(answering(denied), 'pki', '6c:6f'), /permission denied/);
  });

  // Most production PKI issues from an intermediate: OpenBao answers issuing_ca = the intermediate and
  // ca_chain = [intermediate, root]. A client that trusts only ca.crt must verify the server's tls.crt.
  void test('an intermediate-issued certificate: tls.crt carries the intermediate, ca.crt is the root; a client trusting ca.crt connects', async () => {
    const pki = intermediatePki();
    const answer = {
      data: {
        certificate: pki.leaf,
        private_key: pki.leafKey,
        issuing_ca: pki.intermediate,
        ca_chain: [pki.intermediate, pki.root],
        serial_number: '01',
      },
    };
    const cert = await issueCertificate(answering(answer), { path: 'pki-int/issue/web', method: 'PUT' });
    assert.deepEqual(cert.intermediates, [pki.intermediate]);
    assert.equal(cert.caCertificate, pki.root);
    const tlsCrt = certificateChainPem(cert);
    assert.equal(certificateFacts(tlsCrt)?.notAfter, certificateFacts(pki.leaf)?.notAfter, 'the leaf comes first');
    assert.equal(await handshake(tlsCrt, pki.leafKey, cert.caCertificate), 'ok');
    // What tls.crt held before: the leaf alone, which a client trusting the root cannot verify.
    assert.match(await handshake(pki.leaf, pki.leafKey, pki.root), /UNABLE_TO_VERIFY_LEAF_SIGNATURE/);
    // A root mount: ca_chain is the root alone, so tls.crt is the leaf and ca.crt the root.
    const fromRoot = await issueCertificate(
      answering({ data: { ...answer.data, issuing_ca: pki.root, ca_chain: [pki.root] } }),
      { path: 'pki/issue/web', method: 'PUT' },
    );
    assert.deepEqual(fromRoot.intermediates, []);
    assert.equal(fromRoot.caCertificate, pki.root);
  });
});

/** root → intermediate (CA) → leaf for localhost, made with openssl. */
function intermediatePki(): { root: string; intermediate: string; leaf: string; leafKey: string } {
  const dir = mkdtempSync(join(tmpdir(), 'pki-chain-'));
  const f = (n: string) => join(dir, n);
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const key = (n: string) => run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', f(n));
  key('root.key');
  key('int.key');
  key('leaf.key');
  run('req', '-x509', '-key', f('root.key'), '-subj', '/CN=root', '-days', '2', '-out', f('root.pem'));
  writeFileSync(f('ca.ext'), 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n');
  writeFileSync(f('leaf.ext'), 'basicConstraints=CA:false\nsubjectAltName=DNS:localhost\n');
  const sign = (name: string, caPem: string, caKey: string, subj: string, ext: string) => {
    run('req', '-new', '-key', f(`${name}.key`), '-subj', subj, '-out', f(`${name}.csr`));
    run(
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f(caPem),
      '-CAkey',
      f(caKey),
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      f(ext),
      '-out',
      f(`${name}.pem`),
    );
  };
  sign('int', 'root.pem', 'root.key', '/CN=intermediate', 'ca.ext');
  sign('leaf', 'int.pem', 'int.key', '/CN=localhost', 'leaf.ext');
  const read = (n: string) => readFileSync(f(n), 'utf8');
  return { root: read('root.pem'), intermediate: read('int.pem'), leaf: read('leaf.pem'), leafKey: read('leaf.key') };
}

/** A TLS handshake to a server presenting `cert`, from a client trusting `ca` alone: 'ok' or the error code. */
async function handshake(cert: string, key: string, ca: string): Promise<string> {
  const server = createServer({ cert, key }, (s) => s.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca }, () => {
        socket.end();
        resolve('ok');
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
  } finally {
    server.close();
  }
}
