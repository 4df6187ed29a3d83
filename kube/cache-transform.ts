// What an informer keeps of each object it lists or watches (client-go's SetTransform, controller-runtime's
// cache.TransformStripManagedFields). The apiserver's bookkeeping is dropped from every object: managedFields
// (server-side apply's field owners, often the largest part of an object) and kubectl's last-applied
// annotation (a second copy of the whole object as it was applied). No reconciler reads either from a cache.
// Repeated strings (namespaces, kinds, label keys and values...) are shared: JSON.parse makes a new string
// for every value, so 10,000 objects of one namespace hold 10,000 copies of its name.
//
// Secrets can be cached without their values (`secretDigests`): each value is replaced by a keyed digest
// (HMAC-SHA256 under a key made at start-up and never written anywhere), enough to tell whether a stored
// value equals a wanted one, and the whole data's hash is computed once on the way in. A Secret read with
// a GET still has its values; `storedSecretData` answers the same questions for both.
import { createHmac, randomBytes } from 'node:crypto';
import type { KubeObject } from './objects.ts';

/** Returns the object to cache (it may edit and return `obj`: the informer owns it). */
export type CacheTransform<T extends KubeObject = KubeObject> = (obj: T) => T;

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Drop managedFields and kubectl's last-applied annotation, and share repeated strings. */
export function stripBookkeeping<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (meta.managedFields !== undefined) delete meta.managedFields;
  if (meta.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined) {
    delete meta.annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(meta.annotations).length === 0) delete meta.annotations;
  }
  internStrings(obj);
  return obj;
}

// Strings longer than this are rarely repeated (hashes, certificates) and are left as they are.
const INTERN_MAX_LENGTH = 48;
// A bound on the table, so hostile or merely varied input cannot grow it without end; when full it is
// dropped and filled again (a string already shared stays shared).
const INTERN_MAX_ENTRIES = 50_000;
let interned = new Map<string, string>();

function intern(s: string): string {
  if (s.length > INTERN_MAX_LENGTH) return s;
  const known = interned.get(s);
  if (known !== undefined) return known;
  if (interned.size >= INTERN_MAX_ENTRIES) interned = new Map();
  interned.set(s, s);
  return s;
}

// Values unique to each object (or to each second): sharing them saves nothing and would fill the table
// with strings no object holds any more.
const UNIQUE_FIELDS = new Set([
  'name',
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'generateName',
  'time',
  'lastTransitionTime',
  'refreshTime',
  'syncedResourceVersion',
]);
// Never an object's payload: a Secret's values must not outlive it in a table, a ConfigMap's rarely repeat.
const PAYLOAD_FIELDS = new Set(['data', 'stringData', 'binaryData']);

/** Share every short string of `obj` but its payload (object keys are already shared by V8's JSON.parse). */
export function internStrings(obj: KubeObject): void {
  for (const k of Object.keys(obj)) {
    if (PAYLOAD_FIELDS.has(k)) continue;
    const e = obj[k];
    if (typeof e === 'string') obj[k] = intern(e);
    else if (e && typeof e === 'object') internIn(e);
  }
}

function internIn(v: object): void {
  if (Object.isFrozen(v)) return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const e: unknown = v[i];
      if (typeof e === 'string') v[i] = intern(e);
      else if (e && typeof e === 'object') internIn(e);
    }
    return;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const e = o[k];
    if (typeof e === 'string') {
      if (!UNIQUE_FIELDS.has(k)) o[k] = intern(e);
    } else if (e && typeof e === 'object') internIn(e);
  }
}

/** What a cached Secret keeps of its data when its values are dropped. */
export interface SecretDataDigest {
  /** key → keyed digest of the value (its base64 text, as stored). */
  readonly values: Readonly<Record<string, string>>;
  /** The caller's hash of the whole data as stored (e.g. ESO's data-hash), when asked for. */
  readonly hash?: string;
}

/** A Secret as the cache may hold it: `data` replaced by `dataDigest`. */
export type CachedSecret = KubeObject & {
  data?: Record<string, string>;
  dataDigest?: SecretDataDigest;
  type?: string;
  immutable?: boolean;
};

// Made once per process and kept only in this module: a digest cannot be compared with one made elsewhere,
// nor tested offline against guessed values without it.
const DIGEST_KEY = randomBytes(32);

/** The keyed digest of one value, as its base64 text. */
export function valueDigest(base64: string): string {
  return createHmac('sha256', DIGEST_KEY).update(base64, 'utf8').digest('base64').slice(0, 24);
}

/**
 * Transform for Secrets whose values the controller does not need from the cache: `data` (and
 * `stringData`, which a stored Secret never has) become `dataDigest`; `hash` is computed from the values
 * before they are dropped.
 */
export function secretDigests(hash?: (data: Record<string, string>) => string): CacheTransform<CachedSecret> {
  return (obj) => {
    const secret = stripBookkeeping(obj);
    const data = secret.data ?? {};
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) values[k] = valueDigest(v);
    delete secret.data;
    delete secret.stringData;
    if (hash) {
      // Usually equal to an annotation the Secret carries (ESO's data-hash): one string for both.
      const h = hash(data);
      secret.dataDigest = { values, hash: Object.values(secret.metadata.annotations ?? {}).find((a) => a === h) ?? h };
    } else secret.dataDigest = { values };
    return secret;
  };
}

/** The stored data of a Secret, cached (digests) or read with a GET (values): the questions a reconcile asks. */
export interface StoredSecretData {
  keys(): string[];
  /** Whether the stored value of `key` is `base64`. */
  holds(key: string, base64: string): boolean;
  /** The whole data's hash: from the cache's digest, else `hash` of the values. */
  hash(hash: (data: Record<string, string>) => string): string;
  /** The values, or undefined when the cache dropped them (read the Secret for them). */
  readonly values?: Readonly<Record<string, string>>;
}

export function storedSecretData(secret: CachedSecret): StoredSecretData {
  const digest = secret.dataDigest;
  if (digest) {
    return {
      keys: () => Object.keys(digest.values),
      holds: (k, v) => Object.hasOwn(digest.values, k) && digest.values[k] === valueDigest(v),
      // A cache made without a hash function cannot answer: compare with the values (GET) instead.
      hash: () => digest.hash ?? '',
    };
  }
  const data = secret.data ?? {};
  return {
    keys: () => Object.keys(data),
    holds: (k, v) => Object.hasOwn(data, k) && data[k] === v,
    hash: (fn) => fn(data),
    values: data,
  };
}
