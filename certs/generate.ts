// vaultgate's own webhook PKI: one CA, one serving leaf, both ECDSA P-256 / SHA-256, built with
// @peculiar/x509 on Node's WebCrypto. No cert-manager needed (VCO's requirement, #7/#185) and nothing
// baked at build time (Pepr's one-year trap, pepr#3019): the keeper calls these at runtime.
import 'reflect-metadata'; // @peculiar/x509's DI container (tsyringe) needs the Reflect polyfill
import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const DAY_MS = 86_400_000;
const EC_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;

/** notBefore is set this far in the past so an apiserver whose clock lags still accepts a fresh cert. */
export const BACKDATE_MS = 5 * 60_000;
export const DEFAULT_CA_VALIDITY_DAYS = 3650;
export const DEFAULT_LEAF_VALIDITY_DAYS = 365;

/** A certificate and its private key, both PEM (the key is PKCS#8). The key is secret: never log it. */
export interface CertKeyPair {
  cert: string;
  key: string;
}

export interface CaOptions {
  commonName?: string;
  validityDays?: number;
  now?: Date;
}

export interface LeafOptions {
  ca: CertKeyPair;
  /** DNS SANs; the first is also the subject CN. */
  dnsNames: string[];
  ipAddresses?: string[];
  validityDays?: number;
  now?: Date;
}

export interface ServiceNameOptions {
  service: string;
  namespace: string;
  clusterDomain?: string;
}

/**
 * The names the apiserver may use to reach a webhook Service: it dials `svc.ns.svc` (and verifies that
 * name); the shorter and longer forms cover in-cluster clients and custom resolvers (ESO #1078, #2544).
 */
export function serviceDnsNames({ service, namespace, clusterDomain = 'cluster.local' }: ServiceNameOptions): string[] {
  return [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.${clusterDomain}`,
  ];
}

/** Split SAN inputs into DNS names and IP addresses, de-duplicated, order kept. */
export function splitSans(names: string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const n of names) {
    const list = isIP(n) ? ipAddresses : dnsNames;
    if (!list.includes(n)) list.push(n);
  }
  return { dnsNames, ipAddresses };
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive INTEGER (RFC 5280 §4.1.2.2)
  return bytes.toString('hex');
}

async function newKeyPair(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify']);
}

async function exportKey(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

async function importSigningKey(pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decodeFirst(pem);
  return webcrypto.subtle.importKey('pkcs8', der, EC_KEY, false, ['sign']);
}

function validity(now: Date, days: number, cap?: Date): { notBefore: Date; notAfter: Date } {
  if (!(days > 0)) throw new Error(`certificate validity must be a positive number of days, got ${days}`);
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  let notAfter = new Date(now.getTime() + days * DAY_MS);
  if (cap && notAfter > cap) notAfter = cap; // a leaf never outlives its CA
  return { notBefore, notAfter };
}

/** A self-signed CA: BasicConstraints CA critical with pathLen 0 (it signs leaves only), keyCertSign|cRLSign. */
export async function generateCA(opts: CaOptions = {}): Promise<CertKeyPair> {
  const now = opts.now ?? new Date();
  const keys = await newKeyPair();
  // A timestamp in the CN tells CAs apart in a bundle during rotation (`vaultgate certs inspect`).
  const cn = `${opts.commonName ?? 'vaultgate-webhook-ca'}@${Math.floor(now.getTime() / 1000)}`;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [cn] }],
    ...validity(now, opts.validityDays ?? DEFAULT_CA_VALIDITY_DAYS),
    keys,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

/** A serving certificate signed by `ca`: digitalSignature, EKU serverAuth, the given SANs. */
export async function issueServingCert(opts: LeafOptions): Promise<CertKeyPair> {
  if (opts.dnsNames.length === 0 && !opts.ipAddresses?.length)
    throw new Error('a serving certificate needs at least one DNS name or IP address');
  const now = opts.now ?? new Date();
  const caCert = new x509.X509Certificate(opts.ca.cert);
  const signingKey = await importSigningKey(opts.ca.key);
  const keys = await newKeyPair();
  const sans: x509.JsonGeneralName[] = [
    ...opts.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...(opts.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const cn = opts.dnsNames[0] ?? opts.ipAddresses?.[0] ?? 'vaultgate-webhook';
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [cn] }],
    issuer: caCert.subjectName,
    ...validity(now, opts.validityDays ?? DEFAULT_LEAF_VALIDITY_DAYS, caCert.notAfter),
    publicKey: keys.publicKey,
    signingKey,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      // SANs are critical when the subject is empty; ours has a CN, so non-critical as usual.
      new x509.SubjectAlternativeNameExtension(sans, false),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
    ],
  });
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

export interface WebhookPki {
  ca: CertKeyPair;
  leaf: CertKeyPair;
}

/** CA + leaf for a webhook Service (plus extra SANs/IPs for local development). */
export async function generateWebhookPki(
  opts: ServiceNameOptions & {
    extraSans?: string[];
    caValidityDays?: number;
    leafValidityDays?: number;
    now?: Date;
  },
): Promise<WebhookPki> {
  const { dnsNames, ipAddresses } = splitSans([...serviceDnsNames(opts), ...(opts.extraSans ?? [])]);
  const ca = await generateCA({ validityDays: opts.caValidityDays, now: opts.now });
  const leaf = await issueServingCert({
    ca,
    dnsNames,
    ipAddresses,
    validityDays: opts.leafValidityDays,
    now: opts.now,
  });
  return { ca, leaf };
}
