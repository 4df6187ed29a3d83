// Certificates from a PKI mount: issue (`<mount>/issue/<role>` or `<mount>/issuer/<ref>/issue/<role>`),
// revoke by serial (`<mount>/revoke`), and the facts of a stored certificate (serial, validity) read from
// its PEM, so a restarted controller knows when a certificate ends without asking Vault or re-issuing.
// What OpenBao 2.7.2 answers (test/real/dynamic-secret-pki.test.ts): issue returns no lease
// (the role's generate_lease is false by default) and `expiration` in Unix seconds; revoking answers 200
// with data.revocation_time, and the same again for a revoked certificate; revoking an expired one answers
// 200 too, with no data and a warning ("already expired; refusing to add to CRL"); an unknown serial is a
// 400 ("certificate with serial ... not found.").
// The private key is returned to the caller only; it never enters an error.
import { X509Certificate } from 'node:crypto';
import { isKind, VaultError } from './errors.ts';
import type { VaultMethod, VaultRequester } from './types.ts';

export interface IssuedCertificate {
  /** Serial as Vault writes it: lowercase hex pairs joined by colons. */
  serial: string;
  notBefore: number;
  notAfter: number;
  /** PEM of the leaf certificate. */
  certificate: string;
  /** PEM of the private key. Never log it. */
  privateKey: string;
  /** PEM of the issuing CA. */
  issuingCa: string;
  /**
   * The intermediates between the leaf and its root, issuer first, from the answer's `ca_chain` (self-signed
   * roots left out): what a server sends after its leaf so clients that trust only the root can verify it.
   */
  intermediates: string[];
  /** PEM of the trust anchor: the self-signed root at the end of `ca_chain`, else the issuing CA. */
  caCertificate: string;
}

export interface CertificateFacts {
  serial: string;
  notBefore: number;
  notAfter: number;
}

const ISSUE_PATH = /^(.+?)\/(?:issuer\/[^/]+\/)?issue\/[^/]+$/;

/** The PKI mount of an issue path (`pki/issue/web` → `pki`), or undefined when the path issues nothing. */
export function pkiMountOf(path: string): string | undefined {
  return ISSUE_PATH.exec(path)?.[1];
}

/** Vault's serial form from an X.509 serial in hex (Node gives it uppercase, without separators). */
export function vaultSerial(hex: string): string {
  const h = hex.toLowerCase().replace(/[^0-9a-f]/g, '');
  const even = h.length % 2 === 0 ? h : `0${h}`;
  return even.match(/../g)!.join(':');
}

/** Serial and validity of the first certificate of a PEM, or undefined when it is not one. */
export function certificateFacts(pem: string): CertificateFacts | undefined {
  try {
    const c = new X509Certificate(pem);
    return { serial: vaultSerial(c.serialNumber), notBefore: Date.parse(c.validFrom), notAfter: Date.parse(c.validTo) };
  } catch {
    return undefined;
  }
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Issues a certificate from a PKI role (a write with the parameters: common_name, ttl, alt_names, ...). */
export async function issueCertificate(
  vault: VaultRequester,
  req: { path: string; method: 'GET' | 'PUT' | 'POST'; parameters?: Record<string, string> },
): Promise<IssuedCertificate> {
  const method: VaultMethod = req.method === 'GET' ? 'PUT' : req.method;
  const res = await vault.request<{ data?: Record<string, unknown> }>({
    operation: 'pki.issue',
    method,
    path: req.path,
    body: { ...(req.parameters ?? {}) },
  });
  const d = res?.data ?? {};
  const certificate = text(d.certificate);
  const facts = certificateFacts(certificate);
  if (!facts || !text(d.private_key))
    throw new VaultError(
      'invalid',
      'pki.issue: the path answered without a certificate and private key (not a PKI issue path?)',
      undefined,
      'pki.issue',
    );
  const chain = caChain(d.ca_chain);
  const issuingCa = text(d.issuing_ca);
  const root = chain.find(isSelfSigned);
  return {
    serial: text(d.serial_number) || facts.serial,
    notBefore: facts.notBefore,
    notAfter: facts.notAfter,
    certificate,
    privateKey: text(d.private_key),
    issuingCa,
    intermediates: chain.filter((pem) => !isSelfSigned(pem)),
    caCertificate: root ?? issuingCa,
  };
}

/** The leaf followed by its intermediates: what `tls.crt` holds, as cert-manager writes it. */
export function certificateChainPem(cert: Pick<IssuedCertificate, 'certificate' | 'intermediates'>): string {
  return [cert.certificate, ...cert.intermediates].map((pem) => (pem.endsWith('\n') ? pem : `${pem}\n`)).join('');
}

/** `ca_chain` as OpenBao answers it: PEM strings, issuing CA first (a root mount: the root alone). */
const caChain = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.includes('BEGIN CERTIFICATE')) : [];

function isSelfSigned(pem: string): boolean {
  try {
    const c = new X509Certificate(pem);
    return c.checkIssued(c) && c.verify(c.publicKey);
  } catch {
    return false;
  }
}

/**
 * `<mount>/revoke` by serial: true when the certificate is revoked (Vault answered its revocation time),
 * false when it was not because it is expired or unknown to the mount and so cannot be used any more: done
 * either way, so a replaced certificate that outlived its wait is not retried forever.
 */
export async function revokeCertificate(vault: VaultRequester, mount: string, serial: string): Promise<boolean> {
  try {
    const res = await vault.request<{ data?: { revocation_time?: unknown } | null }>({
      operation: 'pki.revoke',
      method: 'PUT',
      path: `${mount}/revoke`,
      body: { serial_number: serial },
    });
    // An expired certificate: 200 without a revocation time (only a warning says why).
    return typeof res?.data?.revocation_time === 'number' && res.data.revocation_time > 0;
  } catch (err) {
    if (isKind(err, 'invalid') && /expired|not found|no certificate/i.test((err as Error).message)) return false;
    throw err;
  }
}
