// Sprig's buildCustomCert (ESO's fork v3.3.0, crypto.go buildCustomCertificate): base64-decodes a
// certificate and a key, checks that the first PEM block of the certificate is an X.509 certificate and
// that the key is a private key as Sprig's parsePrivateKeyPEM reads it (PKCS#8 for "PRIVATE KEY";
// PKCS#1 for "RSA PRIVATE KEY"; SEC 1 for "EC PRIVATE KEY"; six DER INTEGERs for "DSA PRIVATE KEY"),
// and returns them unchanged as Sprig's certificate struct (.Cert, .Key). Parsing is Node's (OpenSSL)
// and @peculiar/x509's, narrowed to the key types Go's crypto/x509 accepts. Errors never quote the input.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import 'reflect-metadata';
import { X509Certificate } from '@peculiar/x509';
import { fail } from '../func.ts';
import { pemDecode } from '../pem.ts';
import { goBase64 } from '../base64.ts';
import { GoStruct } from '../values.ts';

/** Go's crypto/x509 curves: P-224, P-256, P-384, P-521. */
const GO_CURVES = new Set(['secp224r1', 'prime256v1', 'secp384r1', 'secp521r1', 'P-224', 'P-256', 'P-384', 'P-521']);

function nodeKey(der: Buffer, type: 'pkcs8' | 'pkcs1' | 'sec1'): KeyObject | undefined {
  try {
    return createPrivateKey({ key: der, format: 'der', type });
  } catch {
    return undefined;
  }
}

const goCurve = (k: KeyObject): boolean => GO_CURVES.has(String(k.asymmetricKeyDetails?.namedCurve ?? ''));

/** encoding/asn1's DER tag and length (definite, minimal), or undefined. */
function tlv(b: Buffer, off: number): { tag: number; start: number; end: number } | undefined {
  if (off + 2 > b.length) return undefined;
  const tag = b[off]!;
  if ((tag & 0x1f) === 0x1f) return undefined;
  let len = b[off + 1]!;
  let start = off + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || start + n > b.length || b[start] === 0) return undefined;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[start + i]!;
    if (len < 0x80) return undefined;
    start += n;
  }
  if (start + len > b.length) return undefined;
  return { tag, start, end: start + len };
}

/** asn1.Unmarshal into DSAKeyFormat{Version int; P, Q, G, Y, X *big.Int}: a SEQUENCE of six INTEGERs first. */
function dsaKeyFormat(b: Buffer): boolean {
  const seq = tlv(b, 0);
  if (!seq || seq.tag !== 0x30) return false;
  let off = seq.start;
  for (let i = 0; i < 6; i++) {
    const f = tlv(b, off);
    if (!f || f.tag !== 0x02 || f.end > seq.end) return false;
    const n = f.end - f.start;
    if (n === 0) return false;
    if (
      n > 1 &&
      ((b[f.start] === 0 && (b[f.start + 1]! & 0x80) === 0) ||
        (b[f.start] === 0xff && (b[f.start + 1]! & 0x80) === 0x80))
    )
      return false;
    if (i === 0 && n > 8) return false;
    off = f.end;
  }
  return true;
}

/** Sprig's parsePrivateKeyPEM: undefined if Go reads a private key, else why not (no key material quoted). */
function privateKeyError(pemText: string): string | undefined {
  const { block } = pemDecode(pemText);
  if (!block) return 'no PEM data in input';
  if (block.type === 'PRIVATE KEY') {
    const k = nodeKey(block.bytes, 'pkcs8');
    const t = k?.asymmetricKeyType;
    if (!k || !(t === 'rsa' || t === 'ed25519' || t === 'x25519' || (t === 'ec' && goCurve(k))))
      return "decoding PEM as PKCS#8: the key is not one Go's crypto/x509 reads";
    return undefined;
  }
  if (!block.type.endsWith(' PRIVATE KEY')) return 'no private key data in PEM block of that type';
  switch (block.type.slice(0, -12)) {
    case 'RSA':
      return nodeKey(block.bytes, 'pkcs1')?.asymmetricKeyType === 'rsa'
        ? undefined
        : 'parsing RSA private key from PEM failed';
    case 'EC': {
      const k = nodeKey(block.bytes, 'sec1');
      return k?.asymmetricKeyType === 'ec' && goCurve(k) ? undefined : 'parsing EC private key from PEM failed';
    }
    case 'DSA':
      return dsaKeyFormat(block.bytes) ? undefined : 'parsing DSA private key from PEM failed';
    default:
      return 'invalid private key type';
  }
}

/** Sprig's certificate struct. */
export function certificateValue(cert: string, key: string): GoStruct {
  return new GoStruct(
    'sprig.certificate',
    new Map([
      ['Cert', cert],
      ['Key', key],
    ]),
    new Map(),
    { key: JSON.stringify([cert, key]) },
  );
}

/** buildCustomCert(b64cert, b64key string) (certificate, error). */
export function buildCustomCert(b64cert: string, b64key: string): GoStruct {
  const cert = goBase64(b64cert);
  if (typeof cert === 'string') fail('unable to decode base64 certificate');
  const key = goBase64(b64key);
  if (typeof key === 'string') fail('unable to decode base64 private key');
  const certText = (cert as Buffer).toString('latin1');
  const keyText = (key as Buffer).toString('latin1');
  const { block } = pemDecode(certText);
  if (!block) fail('unable to decode certificate');
  try {
    new X509Certificate(block!.bytes);
  } catch {
    fail('error parsing certificate: x509: malformed certificate');
  }
  const why = privateKeyError(keyText);
  if (why !== undefined) fail(`error parsing private key: ${why}`);
  return certificateValue(certText, keyText);
}
