// owner: B
// Test PKI for the control plane: a CA, leaf certificates and a service-account signing key, in the
// shape envtest's TinyCA produces (pkg/internal/testing/certs/tinyca.go): ECDSA P-256, short-lived.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

x509.cryptoProvider.set(webcrypto);

const KEY_ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN_ALG = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;

export interface CertAndKey {
  certPem: string;
  keyPem: string;
}

export interface LeafRequest {
  commonName: string;
  /** Become `O=` entries: Kubernetes reads them as the client's groups (e.g. system:masters). */
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  usage: 'server' | 'client' | 'server+client';
}

export interface CertificateAuthority extends CertAndKey {
  issue(req: LeafRequest): Promise<CertAndKey>;
}

async function keyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
}

function distinguishedName(cn: string, orgs: string[] = []): string {
  // RFC 4514 escaping for the characters that occur in Kubernetes identities.
  const esc = (s: string): string => s.replace(/([,+"\\<>;=])/g, '\\$1');
  return [`CN=${esc(cn)}`, ...orgs.map((o) => `O=${esc(o)}`)].join(', ');
}

export async function createCA(commonName: string): Promise<CertificateAuthority> {
  const keys = await webcrypto.subtle.generateKey(KEY_ALG, true, ['sign', 'verify']);
  const name = distinguishedName(commonName);
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    name,
    keys,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 7 * DAY_MS),
    signingAlgorithm: SIGN_ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const ca: CertificateAuthority = {
    certPem: caCert.toString('pem') + '\n',
    keyPem: await keyPem(keys.privateKey),
    async issue(req) {
      const leafKeys = await webcrypto.subtle.generateKey(KEY_ALG, true, ['sign', 'verify']);
      const eku: string[] = [];
      if (req.usage !== 'client') eku.push(x509.ExtendedKeyUsage.serverAuth);
      if (req.usage !== 'server') eku.push(x509.ExtendedKeyUsage.clientAuth);
      const sans = [
        ...(req.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
        ...(req.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
      ];
      const extensions: x509.Extension[] = [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension(eku),
        await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey),
      ];
      if (sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(sans));
      const cert = await x509.X509CertificateGenerator.create({
        subject: distinguishedName(req.commonName, req.organizations),
        issuer: caCert.subject,
        publicKey: leafKeys.publicKey,
        signingKey: keys.privateKey,
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 7 * DAY_MS),
        signingAlgorithm: SIGN_ALG,
        extensions,
      });
      return { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(leafKeys.privateKey) };
    },
  };
  return ca;
}

/** RSA key pair for --service-account-signing-key-file (RS256, what most clusters use). */
export function createServiceAccountSigningKey(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKeyPem: publicKey, privateKeyPem: privateKey };
}

/** A self-signed P-256 certificate made by openssl, valid for `days` from now (optionally with a given serial): its PEM. */
export function selfSignedPem(opts: { subject: string; days: number; serialHex?: string }): string {
  const dir = mkdtempSync(join(tmpdir(), 'self-signed-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
      .concat(['-days', String(opts.days), '-subj', opts.subject])
      .concat(opts.serialHex ? ['-set_serial', `0x${opts.serialHex}`] : [])
      .concat(['-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')]),
    { stdio: 'ignore' },
  );
  return readFileSync(join(dir, 'c.pem'), 'utf8');
}
