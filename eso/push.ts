// PushSecret's pure logic, as ESO's pushsecret controller and Vault provider do it (v0.16.2, with
// dataTo and KV v2 check-and-set from v0.18+/v2): which pushes a source Secret makes for one store
// (data[] and the dataTo expansion, explicit entries winning), the value each push sends, and what the
// remote secret becomes (the whole JSON object, or one property merged into what is there).
//
// Ownership, as ESO marks it: a pushed secret carries custom_metadata managed-by=external-secrets (in
// the data itself on KV v1), and a secret without it is never overwritten. vaultgate adds who pushed it
// (PUSHED_BY = "<namespace>/<name>" of the PushSecret whose push wrote it) and deletes only a remote
// secret whose marker names the PushSecret doing the deletion: it never deletes one it did not push.
import type { PushSecretData, PushSecretDataTo } from '../schemas/types.ts';
import { compileGoRegexp, replaceAllGo, goJson } from '../golang/index.ts';
import { goStringMap, renderTemplate } from './template.ts';
import { withRenderDeadline } from '../golang/template/index.ts';
import { IN_PROCESS_DEADLINE_MS } from './rewrite.ts';
import { selectorMatches } from '../kube/label-selector.ts';
import { EsoDataError } from './errors.ts';

/** ESO's ownership marker (custom_metadata). */
export const MANAGED_BY_KEY = 'managed-by';
export const MANAGED_BY_VALUE = 'external-secrets';
/** vaultgate's: which PushSecret pushed the current value. */
export const PUSHED_BY_KEY = 'vaultgate.io/pushed-by';
/** ESO's finalizer for deletionPolicy Delete (kept, so a PushSecret ESO created stays consistent). */
export const PUSH_FINALIZER = 'pushsecret.externalsecrets.io/finalizer';

/** A push ESO refuses (a key collision, a remote secret not managed by external-secrets): keys and positions, never values. */
export class PushError extends EsoDataError {
  override readonly name = 'PushError';
  constructor(message: string) {
    super(message, 'PushFailed');
  }
}

export interface StoreIdentity {
  kind: 'SecretStore' | 'ClusterSecretStore';
  name: string;
  labels?: Record<string, string>;
}

/** `<kind>/<name>`, ESO's syncedPushSecrets key for a store. */
export const storeStatusKey = (s: StoreIdentity): string => `${s.kind}/${s.name}`;

/** ESO's statusRef: remoteKey, or remoteKey/property. */
export function statusRef(d: PushSecretData): string {
  const p = d.match.remoteRef.property;
  return p ? `${d.match.remoteRef.remoteKey}/${p}` : d.match.remoteRef.remoteKey;
}

const UNICODE = /_U([0-9a-fA-F]{4,5})_/g;

/** ESO's reverse: ReverseUnicode turns `_UXXXX_` back into the character. */
const reverseKey = (strategy: string | undefined, k: string): string =>
  strategy === 'ReverseUnicode' ? k.replace(UNICODE, (_m, hex: string) => String.fromCodePoint(parseInt(hex, 16))) : k;

/** ESO's ReverseKeys: every key reversed; a collision is an error. */
export function reverseKeys(strategy: string | undefined, data: ReadonlyMap<string, Buffer>): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of data) {
    const key = reverseKey(strategy, k);
    if (out.has(key))
      throw new PushError(
        `could not apply conversion strategy to keys: secret name collision during conversion: ${key}`,
      );
    out.set(key, v);
  }
  return out;
}

/** A push: the data entry (as recorded in status) and, for a dataTo bundle, the keys it carries. */
export interface PlannedPush {
  data: PushSecretData;
  bundle?: Map<string, Buffer>;
}

/** Whether a dataTo entry targets `store` (by name and kind, or by label selector and kind). */
function dataToTargets(d: PushSecretDataTo, store: StoreIdentity): boolean {
  const ref = d.storeRef;
  const kind = ref.kind ?? 'SecretStore';
  if (kind !== store.kind) return false;
  if (ref.name) return ref.name === store.name;
  return ref.labelSelector ? selectorMatches(ref.labelSelector, store.labels) : false;
}

function rewriteKey(rewrites: PushSecretDataTo['rewrite'], key: string): string {
  let k = key;
  for (const op of rewrites ?? []) {
    if (op.regexp) k = replaceAllGo(compileGoRegexp(op.regexp.source), k, op.regexp.target);
    else if (op.transform) {
      const { template } = op.transform;
      k = withRenderDeadline(IN_PROCESS_DEADLINE_MS, `${IN_PROCESS_DEADLINE_MS}ms`, () =>
        renderTemplate(template, goStringMap({ value: k })),
      );
    }
  }
  return k;
}

/**
 * The pushes for one store: dataTo entries expanded (per key: one remote secret per matched key, named
 * by the key after rewrites; bundle: every matched key in one remote secret), then data[]; an explicit
 * data entry for the same source key replaces the dataTo one (ESO's resolveSourceKeyConflicts).
 */
export function plannedPushes(
  spec: { data?: PushSecretData[]; dataTo?: PushSecretDataTo[] },
  source: ReadonlyMap<string, Buffer>,
  store: StoreIdentity,
): PlannedPush[] {
  const fromDataTo: PlannedPush[] = [];
  const remoteKeys = new Map<string, string>();
  (spec.dataTo ?? []).forEach((d, i) => {
    if (!dataToTargets(d, store)) return;
    const converted = reverseKeys(d.conversionStrategy, source);
    const original = new Map([...source.keys()].map((k) => [reverseKey(d.conversionStrategy, k), k]));
    const re = d.match?.regexp ? compileGoRegexp(d.match.regexp) : undefined;
    const matched = [...converted.keys()].sort().filter((k) => !re || re.test(k));
    if (matched.length === 0) return;
    const claim = (remote: string, from: string): void => {
      const seen = remoteKeys.get(remote);
      if (seen)
        throw new PushError(
          `dataTo[${i}]: duplicate remote key ${JSON.stringify(remote)} from source key ${JSON.stringify(from)} (conflicts with ${seen})`,
        );
      remoteKeys.set(remote, `dataTo[${i}]:${from}`);
    };
    const common = {
      ...(d.metadata !== undefined ? { metadata: d.metadata } : {}),
      conversionStrategy: 'None' as const,
    };
    if (d.remoteKey) {
      if ((d.rewrite ?? []).length > 0)
        throw new PushError(
          `dataTo[${i}]: remoteKey and rewrite are mutually exclusive: rewrite is only supported in per-key mode (without remoteKey)`,
        );
      claim(d.remoteKey, '__bundle__');
      fromDataTo.push({
        data: { match: { secretKey: '', remoteRef: { remoteKey: d.remoteKey } }, ...common },
        bundle: new Map(matched.map((k) => [k, converted.get(k)!])),
      });
      return;
    }
    for (const key of matched) {
      const remote = rewriteKey(d.rewrite, key);
      if (remote === '')
        throw new PushError(`dataTo[${i}]: empty remote key produced for source key ${JSON.stringify(key)}`);
      claim(remote, key);
      fromDataTo.push({
        data: { match: { secretKey: original.get(key) ?? key, remoteRef: { remoteKey: remote } }, ...common },
      });
    }
  });
  const explicit = spec.data ?? [];
  const explicitKeys = new Set(explicit.map((d) => d.match.secretKey ?? ''));
  return [
    ...fromDataTo.filter((p) => p.bundle || !explicitKeys.has(p.data.match.secretKey ?? '')),
    ...explicit.map((data) => ({ data })),
  ];
}

/**
 * The bytes one push sends (ESO's PushSecret): the source key's value, or with no secretKey the whole
 * (converted) Secret as a JSON object of strings. Throws when the key is missing.
 */
export function pushValue(push: PlannedPush, source: ReadonlyMap<string, Buffer>): Buffer {
  const data = push.bundle ?? reverseKeys(push.data.conversionStrategy, source);
  const key = push.data.match.secretKey ?? '';
  if (key === '')
    return Buffer.from(goJson(Object.fromEntries([...data].map(([k, v]) => [k, v.toString('utf8')])), true), 'utf8');
  const v = data.get(key);
  if (v === undefined) throw new PushError(`secret key ${key} does not exist`);
  return v;
}

export interface RemoteState {
  /** The remote secret's data (without KV v1's custom_metadata field), undefined when absent. */
  data?: Record<string, unknown>;
  /** Its custom metadata (KV v2) or custom_metadata field (KV v1). */
  customMetadata?: Record<string, string>;
}

export const isManaged = (r: RemoteState): boolean => r.customMetadata?.[MANAGED_BY_KEY] === MANAGED_BY_VALUE;
export const pushedBy = (r: RemoteState): string | undefined => r.customMetadata?.[PUSHED_BY_KEY];

/**
 * What the remote secret becomes (ESO's Vault PushSecret), or undefined when it already holds the value
 * (no write). Refuses a secret that exists without ESO's managed-by marker.
 */
export function remoteAfterPush(
  remote: RemoteState,
  push: PushSecretData,
  value: Buffer,
): Record<string, unknown> | undefined {
  if (remote.data !== undefined && !isManaged(remote)) throw new PushError('secret not managed by external-secrets');
  const property = push.match.remoteRef.property ?? '';
  if (property !== '') {
    const current = remote.data?.[property];
    if (current !== undefined) {
      if (typeof current !== 'string') throw new PushError(`error converting ${property} to string`);
      if (current === value.toString('utf8')) return undefined;
    }
    return { ...remote.data, [property]: value.toString('utf8') };
  }
  let incoming: unknown;
  try {
    incoming = JSON.parse(value.toString('utf8'));
  } catch {
    incoming = undefined;
  }
  if (typeof incoming !== 'object' || incoming === null || Array.isArray(incoming)) {
    throw new PushError(
      remote.data !== undefined
        ? 'error unmarshalling incoming secret value: invalid JSON format'
        : 'error unmarshalling vault secret: invalid JSON format',
    );
  }
  if (remote.data !== undefined && goJson(remote.data, true) === goJson(incoming, true)) return undefined;
  return incoming as Record<string, unknown>;
}

/**
 * What a deletion leaves (ESO's DeleteSecret): `{ delete: true }` to remove the remote secret entirely,
 * `{ keep }` to write the rest back after removing one property, nothing when the secret is not this
 * PushSecret's to delete (absent, not managed, or last pushed by another PushSecret).
 */
export function remoteAfterDelete(
  remote: RemoteState,
  push: PushSecretData,
  pushSecret: string,
): { delete: true } | { keep: Record<string, unknown> } | undefined {
  if (remote.data === undefined || !isManaged(remote) || pushedBy(remote) !== pushSecret) return undefined;
  const property = push.match.remoteRef.property ?? '';
  if (property !== '') {
    const rest = { ...remote.data };
    delete rest[property];
    if (Object.keys(rest).length > 0) return { keep: rest };
  }
  return { delete: true };
}
