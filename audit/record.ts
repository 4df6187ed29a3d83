// The audit record and its line format. One record = one JSON line:
//
//   {"audit":"vaultgate/v1","replica":"…","chain":"…","seq":7,"ts":"…","prev":"<sha256 hex>","event":{…},"jws":"<compact JWS>"}
//
// The compact JWS (EdDSA / Ed25519) signs exactly {v, replica, chain, seq, ts, prev, event}; the plain
// fields beside it are a readable copy for log shippers and `jq`, checked against the signed payload on
// verification. `prev` is the SHA-256 (hex) of the previous record's compact JWS string in the same
// chain, so the hash covers header, payload and signature. The first record of a chain has seq 0, a prev
// of 64 zeros and a `chain-start` event.
//
// Chains: each replica keeps its own chain (`chain` is a random id). After a restart the trail continues
// the chain whose last record it can read back from its file sink; without one it starts a new chain
// whose chain-start event names the previous head when known. See audit/README.md.
import { createHash } from 'node:crypto';

export const AUDIT_FORMAT = 'vaultgate/v1';
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
}

export type VaultWriteAction = 'create' | 'update' | 'delete' | 'repair' | 'adopt';

/** A write the controller made in Vault (policies and kubernetes-auth roles). */
export interface VaultWriteAuditEvent {
  type: 'vault-write';
  action: VaultWriteAction;
  object: 'policy' | 'role';
  /** Vault-side name, e.g. `vaultgate.payments.db-read`. */
  vaultName: string;
  /** Auth mount for roles. */
  mount?: string;
  /** The Kubernetes object that owns it. */
  owner?: { kind: string; namespace: string; name: string; uid?: string };
  /** Why: e.g. `spec changed`, `drift: content differed from desired state`, `owner deleted`. */
  reason?: string;
  /** SHA-256 of the written content (policy text / canonical role JSON); the content itself is not kept. */
  contentSha256?: string;
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

/** What is signed. */
export interface AuditPayload {
  v: 1;
  replica: string;
  chain: string;
  seq: number;
  ts: string;
  prev: string;
  event: AuditEvent;
}

/** A signed record: the payload's fields plus the compact JWS over them. */
export interface AuditRecord extends Omit<AuditPayload, 'v'> {
  audit: typeof AUDIT_FORMAT;
  jws: string;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The hash a following record puts in `prev`. */
export function recordHash(record: Pick<AuditRecord, 'jws'>): string {
  return sha256Hex(record.jws);
}

export function toLine(record: AuditRecord): string {
  const { audit, replica, chain, seq, ts, prev, event, jws } = record;
  return JSON.stringify({ audit, replica, chain, seq, ts, prev, event, jws });
}

/** A line that claims to be an audit record (other log lines on a shared stdout are ignored). */
export function parseLine(line: string): AuditRecord | undefined {
  let v: unknown;
  try { v = JSON.parse(line); } catch { return undefined; }
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
