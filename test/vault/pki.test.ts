// vault/pki.ts: the PKI mount of an issue path (where a certificate is revoked), Vault's serial form, and the
// facts of a stored certificate (what a restarted controller reads instead of re-issuing).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VaultError } from '../../vault/errors.ts';
import { certificateFacts, pkiMountOf, revokeCertificate, vaultSerial } from '../../vault/pki.ts';
import type { VaultRequester } from '../../vault/types.ts';

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
    const dir = mkdtempSync(join(tmpdir(), 'pki-test-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=a.example',
        '-set_serial',
        '0x3a5b7c',
        '-keyout',
        join(dir, 'k.pem'),
        '-out',
        join(dir, 'c.pem'),
      ],
      { stdio: 'ignore' },
    );
    const f = certificateFacts(readFileSync(join(dir, 'c.pem'), 'utf8'));
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
});
