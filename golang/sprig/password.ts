// Sprig's derivePassword (ESO's fork v3.3.0, crypto.go): the Master Password algorithm. scrypt(password,
// "com.lyndir.masterpassword" + len(user) + user, N=32768, r=8, p=2, 64 bytes) keys an HMAC-SHA256 of
// the seed + len(site) + site + counter (big-endian uint32s); its first byte picks the template of the
// password type, the next ones its characters. Deterministic: the same inputs give the same password.
import { createHash, createHmac, scryptSync } from 'node:crypto';
import { fail } from '../func.ts';

const SEED = 'com.lyndir.masterpassword';

const TEMPLATES: ReadonlyMap<string, readonly string[]> = new Map([
  ['maximum', ['anoxxxxxxxxxxxxxxxxx', 'axxxxxxxxxxxxxxxxxno']],
  [
    'long',
    [
      'CvcvnoCvcvCvcv',
      'CvcvCvcvnoCvcv',
      'CvcvCvcvCvcvno',
      'CvccnoCvcvCvcv',
      'CvccCvcvnoCvcv',
      'CvccCvcvCvcvno',
      'CvcvnoCvccCvcv',
      'CvcvCvccnoCvcv',
      'CvcvCvccCvcvno',
      'CvcvnoCvcvCvcc',
      'CvcvCvcvnoCvcc',
      'CvcvCvcvCvccno',
      'CvccnoCvccCvcv',
      'CvccCvccnoCvcv',
      'CvccCvccCvcvno',
      'CvcvnoCvccCvcc',
      'CvcvCvccnoCvcc',
      'CvcvCvccCvccno',
      'CvccnoCvcvCvcc',
      'CvccCvcvnoCvcc',
      'CvccCvcvCvccno',
    ],
  ],
  ['medium', ['CvcnoCvc', 'CvcCvcno']],
  ['short', ['Cvcn']],
  ['basic', ['aaanaaan', 'aannaaan', 'aaannaaa']],
  ['pin', ['nnnn']],
]);

const CHARACTERS: Readonly<Record<string, string>> = {
  V: 'AEIOU',
  C: 'BCDFGHJKLMNPQRSTVWXYZ',
  v: 'aeiou',
  c: 'bcdfghjklmnpqrstvwxyz',
  A: 'AEIOUBCDFGHJKLMNPQRSTVWXYZ',
  a: 'AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz',
  n: '0123456789',
  o: "@&%?,=[]_:-+*$#!'^~;()/.",
  x: 'AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()',
};

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

// scrypt with these parameters costs ~32 MiB and ~0.1 s of CPU: the last keys are kept (by a hash of
// their inputs and the namespace that derived them), so a template that derives many site passwords for
// one user scrypts once, and new keys are budgeted per namespace (NEW_KEYS_PER_MINUTE): a tenant's
// template looping over users runs out of its own budget, never another namespace's. Beyond it the
// render fails and is retried with backoff. The controller renders in worker threads
// (controller/reconcilers/render-pool.ts), so the scrypt blocks a worker, not the event loop; the pool keeps the
// budgets (NamespaceKeyBudgets) and hands each render its namespace's allowance (withDeriveBudget).
const keys = new Map<string, Buffer>();
const KEEP = 256;
export const NEW_KEYS_PER_MINUTE = 32;
const WINDOW_MS = 60_000;

/** Who pays for the new keys of the render under way. */
export interface DeriveBudget {
  readonly namespace: string;
  /** New keys a minute (for the message). */
  readonly perMinute: number;
  /** Take one new key from the budget; false when there is none left. */
  take(now: number): boolean;
}

/** New-key budgets per namespace, over a sliding minute. */
export class NamespaceKeyBudgets {
  readonly #minted = new Map<string, number[]>();
  constructor(readonly perMinute = NEW_KEYS_PER_MINUTE) {}
  #window(namespace: string, now: number): number[] {
    const m = this.#minted.get(namespace) ?? [];
    while (m.length > 0 && m[0]! <= now - WINDOW_MS) m.shift();
    if (m.length === 0) this.#minted.delete(namespace);
    return m;
  }
  /** New keys `namespace` may still derive now. */
  remaining(namespace: string, now = Date.now()): number {
    return Math.max(0, this.perMinute - this.#window(namespace, now).length);
  }
  /** Record `n` new keys derived by `namespace`. */
  charge(namespace: string, n: number, now = Date.now()): void {
    if (n <= 0) return;
    const m = this.#window(namespace, now);
    for (let i = 0; i < n; i++) m.push(now);
    this.#minted.set(namespace, m);
  }
  forNamespace(namespace: string): DeriveBudget {
    return {
      namespace,
      perMinute: this.perMinute,
      take: (now) => (this.remaining(namespace, now) > 0 ? (this.charge(namespace, 1, now), true) : false),
    };
  }
}

/** A budget of `allowance` new keys for one render (a worker's share of its namespace's budget). */
export function allowanceBudget(
  namespace: string,
  allowance: number,
  perMinute = NEW_KEYS_PER_MINUTE,
): DeriveBudget & { readonly used: number } {
  let used = 0;
  return {
    namespace,
    perMinute,
    get used() {
      return used;
    },
    take: () => (used < allowance ? (used++, true) : false),
  };
}

const processBudgets = new NamespaceKeyBudgets();
let current: DeriveBudget = processBudgets.forNamespace('');

/** Run `fn` (a synchronous render) charging new derivePassword keys to `budget`. */
export function withDeriveBudget<T>(budget: DeriveBudget, fn: () => T): T {
  const previous = current;
  current = budget;
  try {
    return fn();
  } finally {
    current = previous;
  }
}

function masterKey(password: Buffer, salt: Buffer, now = Date.now()): Buffer {
  const budget = current;
  const id = createHash('sha256')
    .update(u32(budget.namespace.length))
    .update(budget.namespace)
    .update(u32(password.length))
    .update(password)
    .update(salt)
    .digest('hex');
  let key = keys.get(id);
  if (key === undefined) {
    if (!budget.take(now)) {
      fail(
        `derivePassword: more than ${budget.perMinute} new (password, user) pairs in a minute ${budget.namespace ? `in namespace ${budget.namespace}` : 'in this controller'} (each costs ~0.1 s of CPU): retried later`,
      );
    }
    key = scryptSync(password, salt, 64, { N: 32768, r: 8, p: 2, maxmem: 256 * 1024 * 1024 });
    if (keys.size >= KEEP) keys.delete(keys.keys().next().value!);
  } else keys.delete(id);
  keys.set(id, key);
  return key;
}

/** derivePassword(counter uint32, passwordType, password, user, site string) string, over Go byte strings. */
export function derivePassword(
  counter: number,
  passwordType: string,
  password: string,
  user: string,
  site: string,
): string {
  const templates = TEMPLATES.get(passwordType);
  if (templates === undefined) return `cannot find password template ${passwordType}`;
  const userBytes = Buffer.from(user, 'latin1');
  const siteBytes = Buffer.from(site, 'latin1');
  const seed = Buffer.from(SEED, 'latin1');
  const key = masterKey(Buffer.from(password, 'latin1'), Buffer.concat([seed, u32(userBytes.length), userBytes]));
  const mac = createHmac('sha256', key)
    .update(Buffer.concat([seed, u32(siteBytes.length), siteBytes, u32(counter)]))
    .digest();
  const temp = templates[mac[0]! % templates.length]!;
  let out = '';
  for (let i = 0; i < temp.length; i++) {
    const chars = CHARACTERS[temp[i]!]!;
    out += chars[mac[i + 1]! % chars.length];
  }
  return out;
}
