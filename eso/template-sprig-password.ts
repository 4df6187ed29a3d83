// Sprig's derivePassword (ESO's fork v3.3.0, crypto.go): the Master Password algorithm. scrypt(password,
// "com.lyndir.masterpassword" + len(user) + user, N=32768, r=8, p=2, 64 bytes) keys an HMAC-SHA256 of
// the seed + len(site) + site + counter (big-endian uint32s); its first byte picks the template of the
// password type, the next ones its characters. Deterministic: the same inputs give the same password.
import { createHash, createHmac, scryptSync } from 'node:crypto';
import { fail } from './template-func.ts';

const SEED = 'com.lyndir.masterpassword';

const TEMPLATES: ReadonlyMap<string, readonly string[]> = new Map([
  ['maximum', ['anoxxxxxxxxxxxxxxxxx', 'axxxxxxxxxxxxxxxxxno']],
  ['long', ['CvcvnoCvcvCvcv', 'CvcvCvcvnoCvcv', 'CvcvCvcvCvcvno', 'CvccnoCvcvCvcv', 'CvccCvcvnoCvcv', 'CvccCvcvCvcvno', 'CvcvnoCvccCvcv', 'CvcvCvccnoCvcv', 'CvcvCvccCvcvno',
    'CvcvnoCvcvCvcc', 'CvcvCvcvnoCvcc', 'CvcvCvcvCvccno', 'CvccnoCvccCvcv', 'CvccCvccnoCvcv', 'CvccCvccCvcvno', 'CvcvnoCvccCvcc', 'CvcvCvccnoCvcc', 'CvcvCvccCvccno', 'CvccnoCvcvCvcc',
    'CvccCvcvnoCvcc', 'CvccCvcvCvccno']],
  ['medium', ['CvcnoCvc', 'CvcCvcno']],
  ['short', ['Cvcn']],
  ['basic', ['aaanaaan', 'aannaaan', 'aaannaaa']],
  ['pin', ['nnnn']],
]);

const CHARACTERS: Readonly<Record<string, string>> = {
  V: 'AEIOU', C: 'BCDFGHJKLMNPQRSTVWXYZ', v: 'aeiou', c: 'bcdfghjklmnpqrstvwxyz', A: 'AEIOUBCDFGHJKLMNPQRSTVWXYZ',
  a: 'AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz', n: '0123456789', o: '@&%?,=[]_:-+*$#!\'^~;()/.',
  x: 'AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()',
};

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

// scrypt with these parameters costs ~32 MiB and ~0.1 s of the controller's one event loop: the last keys
// are kept (by a hash of their inputs), so a template that derives many site passwords for one user
// scrypts once, and new keys are budgeted per process (a tenant's template looping over users must not
// stall every other reconcile): beyond the budget the render fails and is retried with backoff.
const keys = new Map<string, Buffer>();
const KEEP = 256;
export const NEW_KEYS_PER_MINUTE = 32;
const minted: number[] = [];

function masterKey(password: Buffer, salt: Buffer, now = Date.now()): Buffer {
  const id = createHash('sha256').update(u32(password.length)).update(password).update(salt).digest('hex');
  let key = keys.get(id);
  if (key === undefined) {
    while (minted.length > 0 && minted[0]! <= now - 60_000) minted.shift();
    if (minted.length >= NEW_KEYS_PER_MINUTE) {
      fail(`derivePassword: more than ${NEW_KEYS_PER_MINUTE} new (password, user) pairs in a minute in this controller (each costs ~0.1 s of CPU): retried later`);
    }
    minted.push(now);
    key = scryptSync(password, salt, 64, { N: 32768, r: 8, p: 2, maxmem: 256 * 1024 * 1024 });
    if (keys.size >= KEEP) keys.delete(keys.keys().next().value!);
  } else keys.delete(id);
  keys.set(id, key);
  return key;
}

/** derivePassword(counter uint32, passwordType, password, user, site string) string, over Go byte strings. */
export function derivePassword(counter: number, passwordType: string, password: string, user: string, site: string): string {
  const templates = TEMPLATES.get(passwordType);
  if (templates === undefined) return `cannot find password template ${passwordType}`;
  const userBytes = Buffer.from(user, 'latin1');
  const siteBytes = Buffer.from(site, 'latin1');
  const seed = Buffer.from(SEED, 'latin1');
  const key = masterKey(Buffer.from(password, 'latin1'), Buffer.concat([seed, u32(userBytes.length), userBytes]));
  const mac = createHmac('sha256', key).update(Buffer.concat([seed, u32(siteBytes.length), siteBytes, u32(counter)])).digest();
  const temp = templates[mac[0]! % templates.length]!;
  let out = '';
  for (let i = 0; i < temp.length; i++) {
    const chars = CHARACTERS[temp[i]!]!;
    out += chars[mac[i + 1]! % chars.length];
  }
  return out;
}
