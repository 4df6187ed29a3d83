// Sprig's encodings and checksums (b64dec, b32enc/b32dec, adler32sum) and decryptAES.
import { createDecipheriv } from 'node:crypto';
import { goBase64 } from '../base64.ts';
import { fail } from '../func.ts';

export function base64Decode(s: string): string {
  const r = goBase64(s);
  return typeof r === 'string' ? r : r.toString('latin1');
}

/** Sprig's decryptAES: AES-256-CBC, the key the password's bytes zero-padded to 32, the IV first. */
export function decryptAES(password: string, crypt64: string): string {
  if (crypt64 === '') return '';
  const key = Buffer.alloc(32);
  Buffer.from(password, 'latin1').copy(key, 0, 0, 32);
  const crypt = goBase64(crypt64);
  if (typeof crypt === 'string') return fail(crypt.replace(/ at input byte \d+$/, ''));
  if (crypt.length < 16) fail('runtime error: slice bounds out of range');
  const body = crypt.subarray(16);
  if (body.length % 16 !== 0) fail('crypto/cipher: input not full blocks');
  const d = createDecipheriv('aes-256-cbc', key, crypt.subarray(0, 16));
  d.setAutoPadding(false);
  const out = Buffer.concat([d.update(body), d.final()]);
  // Go strips as many bytes as the last one says, unchecked: more than there are is a panic.
  const pad = out.length > 0 ? out[out.length - 1]! : fail('runtime error: index out of range [-1]');
  if (pad > out.length) fail('runtime error: slice bounds out of range');
  return out.subarray(0, out.length - pad).toString('latin1');
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
export function base32Encode(s: string): string {
  const b = Buffer.from(s, 'latin1');
  let out = '';
  for (let i = 0; i < b.length; i += 5) {
    const chunk = [...b.subarray(i, i + 5)];
    const n = chunk.length;
    while (chunk.length < 5) chunk.push(0);
    let bits = 0n;
    for (const x of chunk) bits = (bits << 8n) | BigInt(x);
    let group = '';
    for (let k = 7; k >= 0; k--) group += B32[Number((bits >> BigInt(k * 5)) & 31n)];
    const keep = [0, 2, 4, 5, 7, 8][n]!;
    out += group.slice(0, keep) + '='.repeat(8 - keep);
  }
  return out;
}
export function base32Decode(s: string): string {
  const clean = s.replace(/[\r\n]/g, '');
  if (clean.length % 8 !== 0 || !/^[A-Z2-7]*=*$/.test(clean)) {
    const bad = clean.search(/[^A-Z2-7=]/);
    return `illegal base32 data at input byte ${bad >= 0 ? bad : Math.floor(clean.length / 8) * 8}`;
  }
  const out: number[] = [];
  for (let i = 0; i < clean.length; i += 8) {
    const group = clean.slice(i, i + 8);
    const data = group.replace(/=+$/, '');
    if (![8, 7, 5, 4, 2].includes(data.length) || (data.length < 8 && i + 8 < clean.length))
      return `illegal base32 data at input byte ${i + data.length}`;
    let bits = 0n;
    for (const c of data.padEnd(8, 'A')) bits = (bits << 5n) | BigInt(B32.indexOf(c));
    const n = { 8: 5, 7: 4, 5: 3, 4: 2, 2: 1 }[data.length as 8 | 7 | 5 | 4 | 2];
    for (let k = 0; k < n; k++) out.push(Number((bits >> BigInt((4 - k) * 8)) & 255n));
  }
  return Buffer.from(out).toString('latin1');
}

export function adler32(s: string): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < s.length; i++) {
    a = (a + s.charCodeAt(i)) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}
