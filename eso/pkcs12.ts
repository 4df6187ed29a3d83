// ESO's pkcs12key / pkcs12keyPass / pkcs12cert / pkcs12certPass (pkg/template/v2/pkcs12.go), with
// PKCS#12 decoding ported from the library ESO uses (software.sslmate.com/src/go-pkcs12 v0.5.0
// DecodeChain): a v3 PFX, password-integrity MAC (SHA-1/256/512, the PKCS#12 KDF), one or two safes
// (plain or encrypted), key bags and shrouded key bags, certificate bags; PBES2 (PBKDF2 + AES-CBC),
// PBE-SHA1-3DES and PBE-SHA1-RC2 (40 and 128 bits, rc2.ts). Errors name the step, never a byte
// of the input.
import {
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  hash as digest,
  pbkdf2Sync,
  timingSafeEqual,
} from 'node:crypto';
import { fail } from '../golang/index.ts';
import { rc2CbcDecrypt } from './rc2.ts';

interface Tlv {
  tag: number;
  value: Buffer;
  raw: Buffer;
}

/** One DER TLV at `at` (definite lengths only, as Go's encoding/asn1 reads DER). */
function tlv(buf: Buffer, at = 0): Tlv & { end: number } {
  if (at + 2 > buf.length) fail('pkcs12: error reading P12 data: asn1: syntax error: data truncated');
  const tag = buf[at]!;
  let len = buf[at + 1]!;
  let off = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || off + n > buf.length)
      fail('pkcs12: error reading P12 data: asn1: syntax error: invalid length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[off + i]!;
    off += n;
  }
  if (off + len > buf.length) fail('pkcs12: error reading P12 data: asn1: syntax error: data truncated');
  return { tag, value: buf.subarray(off, off + len), raw: buf.subarray(at, off + len), end: off + len };
}

function children(t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = 0; at < t.value.length;) {
    const c = tlv(t.value, at);
    out.push(c);
    at = c.end;
  }
  return out;
}

function expect(t: Tlv | undefined, tag: number, what: string): Tlv {
  if (!t || t.tag !== tag) fail(`pkcs12: error reading P12 data: asn1: structure error: ${what}`);
  return t!;
}

function oid(t: Tlv | undefined): string {
  const v = expect(t, 0x06, 'expected an object identifier').value;
  const parts: number[] = [Math.floor(v[0]! / 40), v[0]! % 40];
  let n = 0;
  for (const b of v.subarray(1)) {
    n = n * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(n);
      n = 0;
    }
  }
  return parts.join('.');
}

function int(t: Tlv | undefined): number {
  const v = expect(t, 0x02, 'expected an integer').value;
  let n = 0;
  for (const b of v) n = n * 256 + b;
  return n;
}

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  keyBag: '1.2.840.113549.1.12.10.1.1',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Cert: '1.2.840.113549.1.9.22.1',
  pbeSha13Des: '1.2.840.113549.1.12.1.3',
  pbeSha1Rc2128: '1.2.840.113549.1.12.1.5',
  pbeSha1Rc240: '1.2.840.113549.1.12.1.6',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  hmacSha1: '1.2.840.113549.2.7',
  hmacSha256: '1.2.840.113549.2.9',
  hmacSha512: '1.2.840.113549.2.11',
  aes128: '2.16.840.1.101.3.4.1.2',
  aes192: '2.16.840.1.101.3.4.1.22',
  aes256: '2.16.840.1.101.3.4.1.42',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha512: '2.16.840.1.101.3.4.2.3',
};

/** The algorithms go-pkcs12 supports, by OID: PBES2's HMAC PRFs, its AES key lengths, the MAC digests. */
const PBES2_PRF = new Map([
  [OID.hmacSha1, 'sha1'],
  [OID.hmacSha256, 'sha256'],
  [OID.hmacSha512, 'sha512'],
]);
const PBES2_AES_KEY_BYTES = new Map([
  [OID.aes128, 16],
  [OID.aes192, 24],
  [OID.aes256, 32],
]);
const MAC_DIGEST = new Map([
  [OID.sha1, { hash: 'sha1', bytes: 20 }],
  [OID.sha256, { hash: 'sha256', bytes: 32 }],
  [OID.sha512, { hash: 'sha512', bytes: 64 }],
] as const);

/** The table's entry for an algorithm, or go-pkcs12's refusal. */
function supported<T>(table: ReadonlyMap<string, T>, algorithm: string | undefined, refusal: string): T {
  const found = algorithm === undefined ? undefined : table.get(algorithm);
  return found === undefined ? fail(refusal) : found;
}

/** bmpStringZeroTerminated: UTF-16BE plus two zero bytes (no characters outside the BMP). */
function bmpPassword(password: string): Buffer {
  const cps = [...password].map((c) => c.codePointAt(0)!);
  if (cps.some((c) => c > 0xffff)) fail('pkcs12: string contains characters that cannot be encoded in UCS-2');
  const out = Buffer.alloc(cps.length * 2 + 2);
  cps.forEach((c, i) => out.writeUInt16BE(c, i * 2));
  return out;
}

/**
 * The most key-derivation iterations a PFX may ask for. Real files use far fewer: OpenSSL (PKCS12_DEFAULT_ITER)
 * and go-pkcs12 write 2048, Java's keytool 10000 (JDK 12+), Windows 2000. A file is tenant input, and each
 * iteration is a hash on the renderer's thread (a 131-byte PFX declaring 4,000,000 MAC iterations took
 * 25.7 s): 100,000 is ten times the largest default, and a file using it everywhere (MAC, key, IV, two
 * bags) still decodes in about a second. Go has no limit; vaultgate refuses such a file with this message.
 */
export const MAX_PKCS12_ITERATIONS = 100_000;

function iterations(n: number): number {
  if (n > MAX_PKCS12_ITERATIONS)
    fail(
      `pkcs12: the file asks for more than ${MAX_PKCS12_ITERATIONS} key-derivation iterations (OpenSSL and Go write 2048, Java 10000): refused`,
    );
  return n;
}

/** RFC 7292 appendix B.2 (go-pkcs12's pbkdf): `id` 1 key, 2 IV, 3 MAC key. */
function pkcs12Kdf(
  hash: 'sha1' | 'sha256' | 'sha512',
  salt: Buffer,
  password: Buffer,
  iter: number,
  id: number,
  size: number,
): Buffer {
  const rounds = iterations(iter);
  const u = hash === 'sha1' ? 20 : hash === 'sha256' ? 32 : 64;
  const v = hash === 'sha512' ? 128 : 64;
  const fill = (b: Buffer): Buffer => {
    if (b.length === 0) return Buffer.alloc(0);
    const out = Buffer.alloc(v * Math.ceil(b.length / v));
    for (let i = 0; i < out.length; i++) out[i] = b[i % b.length]!;
    return out;
  };
  const D = Buffer.alloc(v, id);
  const I = Buffer.concat([fill(salt), fill(password)]);
  const out: Buffer[] = [];
  for (let got = 0; got < size;) {
    let A = createHash(hash).update(D).update(I).digest();
    for (let r = 1; r < rounds; r++) A = digest(hash, A, 'buffer');
    out.push(A);
    got += u;
    if (got >= size) break;
    const B = Buffer.alloc(v);
    for (let k = 0; k < v; k++) B[k] = A[k % u]!;
    for (let j = 0; j < I.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const s = I[j + k]! + B[k]! + carry;
        I[j + k] = s & 0xff;
        carry = s >> 8;
      }
    }
  }
  return Buffer.concat(out).subarray(0, size);
}

/** pbDecrypt: the cipher the algorithm names, CBC, PKCS#7 padding checked as go-pkcs12 checks it. */
function pbDecrypt(alg: Tlv, data: Buffer, password: Buffer): Buffer {
  const parts = children(expect(alg, 0x30, 'expected an algorithm identifier'));
  const algOid = oid(parts[0]);
  let decipher;
  let blockSize: number;
  if (algOid === OID.pbeSha13Des) {
    const p = children(expect(parts[1], 0x30, 'expected PBE parameters'));
    const salt = expect(p[0], 0x04, 'expected a salt').value;
    const iter = iterations(int(p[1]));
    decipher = createDecipheriv(
      'des-ede3-cbc',
      pkcs12Kdf('sha1', salt, password, iter, 1, 24),
      pkcs12Kdf('sha1', salt, password, iter, 2, 8),
    );
    blockSize = 8;
  } else if (algOid === OID.pbes2) {
    const p = children(expect(parts[1], 0x30, 'expected PBES2 parameters'));
    const kdf = children(expect(p[0], 0x30, 'expected a KDF'));
    if (oid(kdf[0]) !== OID.pbkdf2) fail('pkcs12: pbes2 kdf algorithm is not supported');
    const kp = children(expect(kdf[1], 0x30, 'expected PBKDF2 parameters'));
    if (kp[0]?.tag !== 0x04) fail('pkcs12: only octet string salts are supported for pbes2/pbkdf2');
    const salt = kp[0]!.value;
    const iter = iterations(int(kp[1]));
    const prfTlv = kp.slice(2).find((t) => t.tag === 0x30);
    const prfOid = prfTlv ? oid(children(prfTlv)[0]) : OID.hmacSha1;
    const prf = supported(PBES2_PRF, prfOid, 'pkcs12: pbes2 prf is not supported');
    const enc = children(expect(p[1], 0x30, 'expected an encryption scheme'));
    const keyLen = supported(PBES2_AES_KEY_BYTES, oid(enc[0]), 'pkcs12: pbes2 algorithm is not supported');
    const iv = expect(enc[1], 0x04, 'expected an IV').value;
    // PBES2 takes the password as UTF-8 (go-pkcs12 decodes its BMP form back).
    const utf8 = Buffer.from(decodeBmp(password), 'utf8');
    if (iv.length !== 16) fail('pkcs12: invalid IV length');
    decipher = createDecipheriv(`aes-${keyLen * 8}-cbc`, pbkdf2Sync(utf8, salt, iter, keyLen, prf), iv);
    blockSize = 16;
  } else if (algOid === OID.pbeSha1Rc2128 || algOid === OID.pbeSha1Rc240) {
    const p = children(expect(parts[1], 0x30, 'expected PBE parameters'));
    const salt = expect(p[0], 0x04, 'expected a salt').value;
    const iter = iterations(int(p[1]));
    const keyLen = algOid === OID.pbeSha1Rc240 ? 5 : 16;
    if (data.length === 0) fail('pkcs12: empty encrypted data');
    if (data.length % 8 !== 0) fail('pkcs12: input is not a multiple of the block size');
    return unpad(
      rc2CbcDecrypt(
        pkcs12Kdf('sha1', salt, password, iter, 1, keyLen),
        keyLen * 8,
        pkcs12Kdf('sha1', salt, password, iter, 2, 8),
        data,
      ),
      8,
    );
  } else {
    return fail('pkcs12: pbe algorithm is not supported');
  }
  if (data.length === 0) fail('pkcs12: empty encrypted data');
  if (data.length % blockSize !== 0) fail('pkcs12: input is not a multiple of the block size');
  decipher.setAutoPadding(false);
  return unpad(Buffer.concat([decipher.update(data), decipher.final()]), blockSize);
}

/** go-pkcs12's padding check after CBC decryption. */
function unpad(out: Buffer, blockSize: number): Buffer {
  const ps = out[out.length - 1]!;
  if (ps === 0 || ps > blockSize || out.length < ps || !out.subarray(out.length - ps).every((b) => b === ps))
    fail('pkcs12: decryption error, incorrect padding');
  return out.subarray(0, out.length - ps);
}

function decodeBmp(b: Buffer): string {
  const end = b.length >= 2 && b[b.length - 1] === 0 && b[b.length - 2] === 0 ? b.length - 2 : b.length;
  let s = '';
  for (let i = 0; i + 1 < end; i += 2) s += String.fromCharCode(b.readUInt16BE(i));
  return s;
}

function verifyMac(mac: Tlv, message: Buffer, password: Buffer): boolean {
  const m = children(mac);
  const digestInfo = children(expect(m[0], 0x30, 'expected a digest info'));
  const alg = oid(children(expect(digestInfo[0], 0x30, 'expected a digest algorithm'))[0]);
  const digest = expect(digestInfo[1], 0x04, 'expected a digest').value;
  const salt = expect(m[1], 0x04, 'expected a MAC salt').value;
  const iter = iterations(m[2] ? int(m[2]) : 1);
  const { hash, bytes } = supported(MAC_DIGEST, alg, 'pkcs12: MAC digest algorithm not supported');
  const key = pkcs12Kdf(hash, salt, password, iter, 3, bytes);
  const expected = createHmac(hash, key).update(message).digest();
  return expected.length === digest.length && timingSafeEqual(expected, digest);
}

interface Chain {
  key: Buffer;
  cert: Buffer;
  caCerts: Buffer[];
}

/** The OCTET STRING inside an [0] EXPLICIT tag (a content info's content, a cert bag's certificate). */
function explicitOctetString(t: Tlv | undefined, what: string): Buffer {
  return expect(children(expect(t, 0xa0, what))[0], 0x04, 'expected an octet string').value;
}

/** go-pkcs12 DecodeChain. */
export function decodeChain(pfxData: Buffer, passwordText: string): Chain {
  let password = bmpPassword(passwordText);
  const pfx = children(expect(tlv(pfxData), 0x30, 'expected a PFX'));
  if (int(pfx[0]) !== 3) fail("pkcs12: can only decode v3 PFX PDU's");
  const authSafe = children(expect(pfx[1], 0x30, 'expected a content info'));
  if (oid(authSafe[0]) !== OID.data) fail('pkcs12: only password-protected PFX is implemented');
  const content = explicitOctetString(authSafe[1], 'expected content');
  const mac = pfx[2];
  const emptyPassword = password.length === 2;
  if (!mac) {
    if (!emptyPassword) fail('pkcs12: no MAC in data');
  } else if (!verifyMac(mac, content, password)) {
    if (emptyPassword && verifyMac(mac, content, Buffer.alloc(0))) password = Buffer.alloc(0);
    else fail('pkcs12: decryption password incorrect');
  }
  const safes = children(expect(tlv(content), 0x30, 'expected an authenticated safe'));
  if (safes.length < 1 || safes.length > 2)
    fail(`pkcs12: expected between 1 and 2 items in the authenticated safe, but this file has ${safes.length}`);
  let key: Buffer | undefined;
  let cert: Buffer | undefined;
  const caCerts: Buffer[] = [];
  for (const ci of safes) {
    const parts = children(expect(ci, 0x30, 'expected a content info'));
    const type = oid(parts[0]);
    const inner = children(expect(parts[1], 0xa0, 'expected content'))[0];
    let data: Buffer;
    if (type === OID.data) data = expect(inner, 0x04, 'expected an octet string').value;
    else if (type === OID.encryptedData) {
      const ed = children(expect(inner, 0x30, 'expected encrypted data'));
      if (int(ed[0]) !== 0) fail('pkcs12: only version 0 of EncryptedData is supported');
      const eci = children(expect(ed[1], 0x30, 'expected encrypted content info'));
      const enc = eci[2];
      if (!enc || (enc.tag !== 0x80 && enc.tag !== 0xa0))
        fail('pkcs12: error reading P12 data: encrypted content missing');
      const encBytes = enc!.tag === 0x80 ? enc!.value : Buffer.concat(children(enc!).map((c) => c.value));
      data = pbDecrypt(eci[1]!, encBytes, password);
    } else return fail('pkcs12: only data and encryptedData content types are supported in authenticated safe');
    for (const bag of children(expect(tlv(data), 0x30, 'expected safe contents'))) {
      const b = children(expect(bag, 0x30, 'expected a safe bag'));
      const id = oid(b[0]);
      const value = children(expect(b[1], 0xa0, 'expected a bag value'))[0]!;
      if (id === OID.certBag) {
        const cb = children(expect(value, 0x30, 'expected a cert bag'));
        if (oid(cb[0]) !== OID.x509Cert) fail('pkcs12: only X509 certificates are supported in cert bags');
        const der = explicitOctetString(cb[1], 'expected a certificate');
        if (tlv(der).end !== der.length) fail('pkcs12: expected exactly one certificate in the certBag');
        if (!cert) cert = der;
        else caCerts.push(der);
      } else if (id === OID.keyBag || id === OID.shroudedKeyBag) {
        if (key) fail('pkcs12: expected exactly one key bag');
        if (id === OID.keyBag) key = value.raw;
        else {
          const epki = children(expect(value, 0x30, 'expected an encrypted private key info'));
          key = pbDecrypt(epki[0]!, expect(epki[1], 0x04, 'expected encrypted data').value, password);
        }
      }
    }
  }
  if (!cert) fail('pkcs12: certificate missing');
  if (!key) fail('pkcs12: private key missing');
  return { key: key!, cert: cert!, caCerts };
}

/** x509.MarshalPKCS8PrivateKey of the key: re-encoded, as Go re-encodes what it parsed. */
export function pkcs8Der(key: Buffer): Buffer {
  try {
    return createPrivateKey({ key, format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'der' });
  } catch {
    return fail('pkcs12: error parsing PKCS#8 private key');
  }
}
