// Reading PEM certificates and keys into plain facts (subject, SANs, validity, CA flag, fingerprint),
// with node:crypto only: synchronous, no I/O, usable from the pure planner and the CLI alike.
import { X509Certificate, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every CERTIFICATE block of a PEM bundle, normalised to end with a newline. */
export function splitPemBundle(pem: string): string[] {
  return (pem.match(CERT_BLOCK) ?? []).map((block) => `${block.trim()}\n`);
}

/** Concatenate certificates into one bundle (what `caBundle` and `ca.crt` hold). */
export function joinPemBundle(certs: string[]): string {
  return certs.map((c) => `${c.trim()}\n`).join('');
}

export interface CertFacts {
  pem: string;
  /** SHA-256 of the DER, upper-case hex with colons (as node prints it). */
  fingerprint: string;
  subject: string;
  issuer: string;
  dnsNames: string[];
  ipAddresses: string[];
  notBefore: number;
  notAfter: number;
  isCA: boolean;
  serialNumber: string;
  /** The parsed certificate, for chain checks. */
  x509: X509Certificate;
}

/** `DNS:a, DNS:b, IP Address:1.2.3.4` → names (node formats subjectAltName this way). */
function parseSans(text: string | undefined): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const part of (text ?? '').split(/,\s*/)) {
    if (part.startsWith('DNS:')) dnsNames.push(part.slice(4));
    else if (part.startsWith('IP Address:')) ipAddresses.push(part.slice(11).toLowerCase());
  }
  return { dnsNames, ipAddresses };
}

export function certFacts(pem: string): CertFacts {
  const cert = new X509Certificate(pem);
  const { dnsNames, ipAddresses } = parseSans(cert.subjectAltName);
  return {
    pem: `${pem.trim()}\n`,
    fingerprint: cert.fingerprint256,
    subject: cert.subject.replace(/\n/g, ', '),
    issuer: cert.issuer.replace(/\n/g, ', '),
    dnsNames,
    ipAddresses,
    notBefore: Date.parse(cert.validFrom),
    notAfter: Date.parse(cert.validTo),
    isCA: cert.ca,
    serialNumber: cert.serialNumber,
    x509: cert,
  };
}

/** Parse, or undefined when the text is not one valid certificate. */
export function tryCertFacts(pem: string | undefined): CertFacts | undefined {
  if (!pem) return undefined;
  try {
    return certFacts(pem);
  } catch {
    return undefined;
  }
}

/** Every parseable certificate of a bundle (unparseable blocks are dropped). */
export function bundleFacts(pem: string | undefined): CertFacts[] {
  return splitPemBundle(pem ?? '').flatMap((block) => tryCertFacts(block) ?? []);
}

function spki(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'der' }).toString('base64');
}

/** True when `keyPem` is the private key of `cert` (a leaf whose key does not match can't serve). */
export function keyMatchesCert(keyPem: string | undefined, cert: CertFacts): boolean {
  if (!keyPem) return false;
  try {
    return spki(createPublicKey(createPrivateKey(keyPem))) === spki(cert.x509.publicKey);
  } catch {
    return false;
  }
}

/** `child` names `parent` as issuer and `parent`'s key verifies `child`'s signature. */
export function isIssuedBy(child: CertFacts, parent: CertFacts): boolean {
  try {
    return child.x509.checkIssued(parent.x509) && child.x509.verify(parent.x509.publicKey);
  } catch {
    return false;
  }
}

/** Fraction of the validity window elapsed at `now` (0 at notBefore, 1 at notAfter). */
export function lifetimeElapsed(cert: Pick<CertFacts, 'notBefore' | 'notAfter'>, now: number): number {
  const span = cert.notAfter - cert.notBefore;
  return span <= 0 ? 1 : (now - cert.notBefore) / span;
}

export function isValidAt(cert: Pick<CertFacts, 'notBefore' | 'notAfter'>, now: number): boolean {
  return now >= cert.notBefore && now < cert.notAfter;
}
