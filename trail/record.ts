// The audit record and its line format. One record = one JSON line:
//
//   {"audit":"vaultgate/v2","replica":"…","chain":"…","seq":7,"ts":"…","prev":"<sha256 hex>","event":{…},"hash":"<sha256 hex>"[,"jws":"…"]}
//
// Every record is hash-chained: `hash` = SHA-256 (hex) of the record's canonical payload
// (canonicalJson of {v, replica, chain, seq, ts, prev, event}: keys sorted, no whitespace), and `prev` is
// the previous record's hash in the same chain. The last record of every batch the trail writes is a
// checkpoint: it also carries `jws`, a compact JWS (EdDSA / Ed25519) whose payload is exactly that
// canonical payload, so one signature commits to the whole chain up to and including it (as a
// transparency log signs its tree head). The trail writes a batch (records + its signed last record) in
// one write before any decision in it is answered, so a well-formed trail always ends on a signed record.
// The first record of a chain has seq 0, a prev of 64 zeros and a `chain-start` event.
//
// Chains: each replica keeps its own chain (`chain` is a random id). After a restart the trail continues
// the chain whose last record it can read back from its file sink; without one it starts a new chain
// whose chain-start event names the previous head when known. See audit/README.md.
import { hash } from 'node:crypto';

export const AUDIT_FORMAT = 'vaultgate/v2';
/** The payload version inside the hash and the signature. */
export const PAYLOAD_VERSION = 2;
export const JWS_TYPE = 'vaultgate-audit+jws';
export const GENESIS_PREV = '0'.repeat(64);

export type AdmissionOutcome = 'allowed' | 'denied' | 'mutated';

/** An admission decision, without any object content (no spec, no data, no patch values). */
export interface AdmissionAuditEvent {
  type: 'admission';
  webhook?: 'mutating' | 'validating';
  uid: string;
  /** `group/version/Kind` of the object (core group: `v1/Kind`). */
  kind: string;
  namespace?: string;
  name?: string;
  operation: string;
  dryRun?: boolean;
  user: { username?: string; groups?: string[] };
  outcome: AdmissionOutcome;
  /** Stable rule ids that fired (denials and warnings). */
  rules: string[];
  warnings: string[];
  /** The denial message, when denied. */
  message?: string;
  /** JSON Patch operations applied by the mutating webhook: op and path only, never the values. */
  patch: Array<{ op: string; path: string }>;
  /**
   * Who sent the AdmissionReview, as the TLS layer saw it: `authenticated` when the webhook required
   * and verified a client certificate (then `subject` is its CN), otherwise `authenticated: false` and
   * only the TCP peer is known; `user` above is then merely what the body claims.
   */
  caller?: AdmissionCaller;
}

export interface AdmissionCaller {
  /**
   * A client certificate was verified against the webhook's client CA. Since subject pinning
   * (--client-subject) its subject is also one the webhook accepts, and `vouchedBy` says so; a record
   * with `authenticated: true` and no `vouchedBy` predates pinning: any certificate of the CA was taken.
   */
  authenticated: boolean;
  /** TLS peer address `ip:port`. */
  peer?: string;
  /** Subject CN of the verified client certificate. */
  subject?: string;
  /** What vouches for the caller, e.g. `verified client certificate CN=kube-apiserver-webhook-client (pinned subject)`; absent: nothing. */
  vouchedBy?: string;
}

export type VaultWriteAction = 'create' | 'update' | 'delete' | 'repair' | 'adopt';

/** A write the controller made in Vault (policies, kubernetes-auth roles, KV secrets and their metadata pushed by PushSecrets). */
export interface VaultWriteAuditEvent {
  type: 'vault-write';
  action: VaultWriteAction;
  object: 'policy' | 'role' | 'kv-secret' | 'kv-metadata';
  /** Vault-side name, e.g. `vaultgate.payments.db-read`; for KV, the API path written (`secret/data/team-a/db`). */
  vaultName: string;
  /** Auth mount for roles. */
  mount?: string;
  /** The Kubernetes object that owns it. */
  owner?: { kind: string; namespace: string; name: string; uid?: string };
  /** Why: e.g. `spec changed`, `drift: content differed from desired state`, `owner deleted`. */
  reason?: string;
  /**
   * SHA-256 of the written content (policy text / canonical role JSON / KV custom metadata); the content
   * itself is not kept. Never for KV secret data: a hash of a password confirms a guess of it.
   */
  contentSha256?: string;
  /** The KV v2 version a write created (Vault's own audit log and metadata name it the same way). */
  kvVersion?: number;
  /** e.g. "widens access: +read on secret/data/x/*". */
  change?: string;
}

export interface ChainStartEvent {
  type: 'chain-start';
  /** first-start: no earlier record for this replica was found; previous-unreadable: the sink's last line could not be read back. */
  reason: 'first-start' | 'previous-unreadable' | 'replica-changed';
  /** The head of the chain this one follows, when known (a verifier checks it against the files). */
  previous?: { chain: string; seq: number; hash: string };
}

export interface LifecycleEvent {
  type: 'lifecycle';
  action: 'start' | 'resume';
  /** Process version or build, for the record. */
  version?: string;
}

export type AuditEvent = AdmissionAuditEvent | VaultWriteAuditEvent | ChainStartEvent | LifecycleEvent;

/** What is hashed (and, for a checkpoint, signed). */
export interface AuditPayload {
  v: typeof PAYLOAD_VERSION;
  replica: string;
  chain: string;
  seq: number;
  ts: string;
  prev: string;
  event: AuditEvent;
}

/** A record: the payload's fields, its hash and, on a checkpoint (last record of a batch), the compact JWS over the payload. */
export interface AuditRecord extends Omit<AuditPayload, 'v'> {
  audit: typeof AUDIT_FORMAT;
  hash: string;
  jws?: string;
}

/** SHA-256 (hex) of the UTF-8 text. crypto.hash, one call: half the CPU of a createHash object per record. */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * JSON with object keys sorted (by UTF-16 code units, as RFC 8785) and undefined members left out, so
 * equal content hashes equally in any language. Written with plain loops and string appends: it runs
 * for every admission record, and was 9 % of the webhook's CPU under load as a map/join/template version.
 */
export function canonicalJson(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ',';
      const x: unknown = v[i];
      out += x === undefined ? 'null' : canonicalJson(x);
    }
    return `${out}]`;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length > 1) keys.sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const x = o[k];
    if (x === undefined) continue;
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(k);
    out += ':';
    out += canonicalJson(x);
  }
  return `${out}}`;
}

/** The keys of an admission event, each with its bit and its canonical `"key":` text, in canonical (sorted) order. */
const ADMISSION_KEYS = [
  'type',
  'webhook',
  'uid',
  'kind',
  'namespace',
  'name',
  'operation',
  'dryRun',
  'user',
  'outcome',
  'rules',
  'warnings',
  'message',
  'patch',
  'caller',
].sort();
const ADMISSION_KEY_BITS = new Map(ADMISSION_KEYS.map((k, i) => [k, 1 << i]));
const ADMISSION_KEY_TEXT = ADMISSION_KEYS.map((k) => `${JSON.stringify(k)}:`);

/**
 * canonicalJson of an event, byte for byte. An admission event (one per review) is written with its
 * keys in their known sorted order instead of listing and sorting them: any other event, or one with
 * a key an admission event does not have, goes through canonicalJson itself.
 */
export function canonicalEventJson(event: unknown): string {
  if (typeof event !== 'object' || event === null || (event as { type?: unknown }).type !== 'admission')
    return canonicalJson(event);
  const o = event as Record<string, unknown>;
  let present = 0;
  for (const k in o) {
    const bit = ADMISSION_KEY_BITS.get(k);
    if (bit === undefined || !Object.hasOwn(o, k)) return canonicalJson(event);
    present |= bit;
  }
  let out = '{';
  for (let i = 0; i < ADMISSION_KEYS.length; i++) {
    if ((present & (1 << i)) === 0) continue;
    const x = o[ADMISSION_KEYS[i]!];
    if (x === undefined) continue;
    if (out.length > 1) out += ',';
    out += ADMISSION_KEY_TEXT[i]!;
    out += canonicalJson(x);
  }
  return `${out}}`;
}

type PayloadFields = Pick<AuditRecord, 'replica' | 'chain' | 'seq' | 'ts' | 'prev' | 'event'>;

/** Whether a record read back from a line has its payload's scalar fields, each of its type. */
export function hasPayloadScalars(r: PayloadFields): boolean {
  return (
    typeof r.chain === 'string' &&
    typeof r.prev === 'string' &&
    typeof r.replica === 'string' &&
    typeof r.seq === 'number' &&
    typeof r.ts === 'string'
  );
}

/**
 * The canonical payload text of a record (what its hash covers and a checkpoint's JWS signs):
 * canonicalJson({ v, replica, chain, seq, ts, prev, event }), written out in its sorted key order
 * (chain, event, prev, replica, seq, ts, v) around the event's own canonical text, which the trail
 * computes once per record and also puts in the line.
 */
export function payloadText(r: PayloadFields, eventJson?: string): string {
  // A record read back from a line may lack a field or carry the wrong type: the generic form omits or
  // quotes it exactly as before, and the hash simply does not match.
  if (!hasPayloadScalars(r) || r.event === undefined) {
    return canonicalJson({
      v: PAYLOAD_VERSION,
      replica: r.replica,
      chain: r.chain,
      seq: r.seq,
      ts: r.ts,
      prev: r.prev,
      event: r.event,
    });
  }
  eventJson ??= canonicalJson(r.event);
  return `{"chain":${JSON.stringify(r.chain)},"event":${eventJson},"prev":${JSON.stringify(r.prev)},"replica":${JSON.stringify(r.replica)},"seq":${canonicalJson(r.seq)},"ts":${JSON.stringify(r.ts)},"v":${PAYLOAD_VERSION}}`;
}

/** The hash a following record puts in `prev`, computed from the record's content (not its `hash` field). */
export function recordHash(record: PayloadFields): string {
  return sha256Hex(payloadText(record));
}

/** The record's line: its fields in the documented order, the event as its canonical text (`eventJson` when the caller has it). */
export function toLine(record: AuditRecord, eventJson: string = canonicalJson(record.event)): string {
  const { audit, replica, chain, seq, ts, prev, hash, jws } = record;
  return `{"audit":${JSON.stringify(audit)},"replica":${JSON.stringify(replica)},"chain":${JSON.stringify(chain)},"seq":${canonicalJson(seq)},"ts":${JSON.stringify(ts)},"prev":${JSON.stringify(prev)},"event":${eventJson},"hash":${JSON.stringify(hash)}${jws === undefined ? '' : `,"jws":${JSON.stringify(jws)}`}}`;
}

/** A line that claims to be an audit record (other log lines on a shared stdout are ignored). */
export function parseLine(line: string): AuditRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || (v as { audit?: unknown }).audit !== AUDIT_FORMAT) return undefined;
  return v as AuditRecord;
}

/** The head of a chain, for resuming: what the next record continues from. */
export interface ChainHead {
  replica: string;
  chain: string;
  seq: number;
  hash: string;
}

export function headOf(record: AuditRecord): ChainHead {
  return { replica: record.replica, chain: record.chain, seq: record.seq, hash: recordHash(record) };
}
