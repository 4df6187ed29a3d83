// The rollout planner: pure. Given one workload (what its pods run with, per consumed Secret, and how its
// last rollout is going), the current per-Secret HMACs, the time and the coordinator's memory of this
// change, it decides whether to restart the workload now, later, or never. Keyed by workload, not by
// Secret: however many of its Secrets changed, a workload restarts once per window (VSO #644).
//
// What the pods run with is recorded on the workload (metadata annotation RECORD_ANNOTATION, a map from
// Secret name to HMAC), written together with the pod-template annotation that restarts them. A workload
// or Secret seen for the first time is adopted without a restart: its pods could not have started without
// the Secret they mount, so they run with its data. Only a changed HMAC of a recorded Secret restarts.
import type { RolloutPolicy, RolloutState } from '../../kube/workloads.ts';

/** Pod-template annotation: HMAC over every consumed Secret (changing it rolls the pods). */
export const TEMPLATE_ANNOTATION = 'vaultgate.io/secrets-hmac';
/** Workload annotation: `{"<secret>": "<HMAC>"}`, what the current pod template consumes. */
export const RECORD_ANNOTATION = 'vaultgate.io/secrets-hmacs';
/** Workload annotation: when vaultgate last restarted it (RFC 3339, ms): the cool-down survives a restart. */
export const RESTARTED_AT_ANNOTATION = 'vaultgate.io/secrets-restarted-at';

// The pacing's defaults live with the workloads (kube/workloads.ts), where admission reads them too.
export { DEFAULT_ROLLOUT_POLICY, type RolloutPolicy } from '../../kube/workloads.ts';

export interface PlanInput {
  /** Undefined: the workload does not exist (yet). */
  workload?: {
    state: RolloutState;
    /** A paused Deployment: a template change would not roll. */
    paused: boolean;
    /** RECORD_ANNOTATION, parsed; undefined when absent or unreadable (adopted afresh). */
    recorded?: Readonly<Record<string, string>>;
    /** RESTARTED_AT_ANNOTATION, epoch ms. */
    restartedAt?: number;
  };
  /** HMAC per consumed Secret that exists. */
  current: Readonly<Record<string, string>>;
  /** Consumed Secrets that do not exist now (not synced yet, deleted): compared when they are back. */
  missing: readonly string[];
  /** When this change was first seen (the coalescing window's start); undefined: seen now. */
  pendingSince?: number;
  /** Distinct states of the Secrets seen since then (the coalesced-restart count is this minus one). */
  pendingStates?: number;
  /** Other workloads of the namespace rolling because vaultgate restarted them. */
  rollingInNamespace: number;
  now: number;
  policy: RolloutPolicy;
}

export type WaitReason = 'Coalescing' | 'CoolingDown' | 'RolloutInProgress' | 'ConcurrencyLimit';

export type RolloutPlan =
  /** Nothing to do: no Secret consumed, the workload is missing, or its pods run with the current data. */
  | { action: 'none'; reason: 'NoSecrets' | 'WorkloadMissing' | 'Unchanged' }
  /** Record new Secrets (or drop gone ones) without a restart. */
  | { action: 'record'; record: Record<string, string> }
  /** Data changed, not yet: look again after `retryAfterMs`. */
  | { action: 'wait'; reason: WaitReason; retryAfterMs: number; changed: string[] }
  /** Data changed but the Deployment is paused: an Event, no error; its resume is a workload event. */
  | { action: 'paused'; changed: string[] }
  /** Patch the template annotation (one rollout) and the record, together. */
  | { action: 'restart'; record: Record<string, string>; changed: string[]; coalesced: number };

/** While waiting on other workloads' rollouts, how often to look again (their completion is not our event). */
export const CAP_RETRY_MS = 5_000;
/** A rollout in progress is watched through its status events; this is the backstop. */
export const ROLLING_RETRY_MS = 30_000;

export function planRollout(input: PlanInput): RolloutPlan {
  const { workload, current, missing, now, policy } = input;
  if (!workload) return { action: 'none', reason: 'WorkloadMissing' };
  const names = Object.keys(current);
  if (names.length === 0 && missing.length === 0) return { action: 'none', reason: 'NoSecrets' };
  const recorded = workload.recorded;
  // Missing Secrets keep their record (a Secret deleted and restored with other data is a change).
  const record: Record<string, string> = {};
  for (const name of missing) if (recorded?.[name] !== undefined) record[name] = recorded[name]!;
  Object.assign(record, current);

  const changed = recorded ? names.filter((n) => recorded[n] !== undefined && recorded[n] !== current[n]).sort() : [];
  // Nothing to record yet (its Secrets not written yet): no write, as a Deployment's generation counts
  // annotation changes too.
  if (!recorded && Object.keys(record).length === 0) return { action: 'none', reason: 'Unchanged' };
  if (changed.length === 0)
    return sameRecord(recorded, record) ? { action: 'none', reason: 'Unchanged' } : { action: 'record', record };

  if (workload.paused) return { action: 'paused', changed };
  // A restart on top of a rollout in progress would stack ReplicaSets; the pods being replaced run with
  // data whose credential is not revoked before settled() says so. A stalled rollout does not hold it.
  if (workload.state === 'rolling')
    return { action: 'wait', reason: 'RolloutInProgress', retryAfterMs: ROLLING_RETRY_MS, changed };
  const since = input.pendingSince ?? now;
  if (now < since + policy.coalesceMs)
    return { action: 'wait', reason: 'Coalescing', retryAfterMs: since + policy.coalesceMs - now, changed };
  if (workload.restartedAt !== undefined && now < workload.restartedAt + policy.cooldownMs) {
    return {
      action: 'wait',
      reason: 'CoolingDown',
      retryAfterMs: workload.restartedAt + policy.cooldownMs - now,
      changed,
    };
  }
  if (input.rollingInNamespace >= policy.maxConcurrent)
    return { action: 'wait', reason: 'ConcurrencyLimit', retryAfterMs: CAP_RETRY_MS, changed };
  return { action: 'restart', record, changed, coalesced: Math.max(0, (input.pendingStates ?? 1) - 1) };
}

function sameRecord(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>): boolean {
  if (!a) return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/** RECORD_ANNOTATION's value, or undefined when absent or not a map of strings (then adopted afresh). */
export function parseRecord(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined || value.length > 64 * 1024) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed)) {
      if (typeof v !== 'string') return undefined;
      out[k] = v;
    }
    return out;
  } catch {
    return undefined;
  }
}

/** The record as written: keys sorted, so equal records are equal strings. */
export function formatRecord(record: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.fromEntries(
      Object.keys(record)
        .sort()
        .map((k) => [k, record[k]]),
    ),
  );
}
