// What the PushSecret reconciler does, decided from what it observed. Pure: which branch a reconcile takes
// (ignore / refuse / wait for the refresh / sync; deletion is the shared finalizer's cleanup), whether the
// finalizer is wanted, what one push writes to a remote secret, and the status each outcome writes.
import type { PushSecretData } from '../../schemas/types.ts';
import { setCondition, timestamp } from '../../kube/conditions.ts';
import type { Condition } from '../../kube/objects.ts';
import { BACKOFF, ReconcileError, retryAfter, type Retry } from '../../kube/reconcile-error.ts';
import { MANAGED_BY_KEY, MANAGED_BY_VALUE, PUSHED_BY_KEY, remoteAfterPush, type RemoteState } from '../../eso/push.ts';

export type Synced = Record<string, Record<string, PushSecretData>>;
export interface PushStatus {
  refreshTime?: string;
  syncedResourceVersion?: string;
  syncedPushSecrets?: Synced;
  conditions?: Condition[];
}

export interface PushObserved {
  /** The stores could not be resolved (named one missing, a ClusterSecretStore refusing the namespace). */
  storesError?: ReconcileError;
  /** Every store it names is another controller's class: that controller's PushSecret. */
  storesForeign: boolean;
  deleting: boolean;
  /** Admission's re-check refused the spec: the findings, described. */
  denials?: string;
  /** ESO's syncedResourceVersion of the object now (generation, labels, annotations) and as last synced. */
  resourceVersion: string;
  status: PushStatus;
  refreshMs: number;
  now: number;
}

export type PushPlan =
  | { decision: 'fail'; error: ReconcileError } // its stores cannot be resolved
  | { decision: 'ignore' } // another controller's
  | { decision: 'cleanup' } // being deleted: the finalizer's cleanup (if ours is on it)
  | { decision: 'refuse'; error: ReconcileError } // admission's re-check refuses it: nothing is pushed
  | { decision: 'wait'; requeueAfterMs?: number } // synced, the refresh not due ("0s": never again)
  | { decision: 'sync' };

export function planPushSecret(o: PushObserved): PushPlan {
  // A spec admission refuses is refused whether or not its stores exist yet: the store's absence is
  // transient (it may be created next), the refusal is not, and it is the message the user needs.
  const refuse = o.denials
    ? ({ decision: 'refuse', error: new ReconcileError('InvalidSpec', `refused: ${o.denials}`) } as const)
    : undefined;
  if (o.storesError) return !o.deleting && refuse ? refuse : { decision: 'fail', error: o.storesError };
  if (o.storesForeign) return { decision: 'ignore' };
  if (o.deleting) return { decision: 'cleanup' };
  if (refuse) return refuse;
  const last = o.status.refreshTime ? Date.parse(o.status.refreshTime) : NaN;
  // ESO's shouldRefresh: a spec or metadata change, never synced, or the interval passed ("0s": once).
  const due =
    o.status.syncedResourceVersion !== o.resourceVersion ||
    (o.refreshMs > 0 && (Number.isNaN(last) || last + o.refreshMs < o.now));
  if (due) return { decision: 'sync' };
  return o.refreshMs > 0
    ? { decision: 'wait', requeueAfterMs: last + o.refreshMs - o.now + 5000 }
    : { decision: 'wait' };
}

/** The finalizer follows the deletion policy (ESO: added for Delete, removed for None). */
export function wantsFinalizer(deletionPolicy: string | undefined): boolean {
  return deletionPolicy === 'Delete';
}

/**
 * When a failed PushSecret runs again: a Vault outage, or a render stopped by the pool's limits, with the
 * work queue's backoff; anything else (ESO's errors, refusals) at the next refresh, at most 5 min away.
 */
export function pushRetry(transient: boolean, refreshMs: number): Retry {
  return transient ? BACKOFF : retryAfter(Math.min(refreshMs, 300_000) || 60_000);
}

/** The status after a failure: Ready=False Errored with the (checked) message, what was pushed kept. */
export function failedStatus(status: PushStatus, message: string, now: number, synced?: Synced): PushStatus {
  return {
    ...status,
    ...(synced ? { syncedPushSecrets: synced } : {}),
    conditions: ready(status, 'False', 'Errored', message, now),
  };
}

/** The status after a sync: Ready=True Synced, the refresh clock and what it pushed. */
export function syncedStatus(
  status: PushStatus,
  resourceVersion: string,
  pushed: Synced,
  ifNotExists: boolean,
  now: number,
): PushStatus {
  const message = `PushSecret synced successfully${ifNotExists ? '. Existing secrets in providers unchanged.' : ''}`;
  return {
    refreshTime: timestamp(now),
    syncedResourceVersion: resourceVersion,
    syncedPushSecrets: pushed,
    conditions: ready(status, 'True', 'Synced', message, now),
  };
}

// ESO's CRD declares Ready only, without observedGeneration: the apiserver refuses other fields in an apply.
function ready(status: PushStatus, s: 'True' | 'False', reason: string, message: string, now: number): Condition[] {
  return setCondition(
    status.conditions?.filter((c) => c.type === 'Ready'),
    { type: 'Ready', status: s, reason, message },
    undefined,
    now,
  );
}

/** What one push does to its remote secret. */
export type RemotePush =
  | { kind: 'exists' } // updatePolicy IfNotExists and a value is there: left as it is
  | { kind: 'noop' } // the value and our marker are there
  | {
      kind: 'write';
      /** ESO's managed-by marker and vaultgate's pushed-by marker naming this PushSecret, other metadata kept. */
      markers: Record<string, string>;
      markersAction: 'create' | 'update';
      body: Record<string, unknown>;
      /** KV v2: the data needs writing (a new value, or none there); v1 writes data and markers together. */
      writeData: boolean;
      dataAction: 'create' | 'update';
    };

/**
 * One push to a remote secret, as ESO's Vault provider: never over a secret without ESO's managed-by marker
 * (remoteAfterPush throws), the marker naming this PushSecret rewritten also when the value is already there
 * (taking over a secret ESO pushed), so a later deletion knows it is ours.
 */
export function planRemotePush(
  remote: RemoteState,
  push: PushSecretData,
  value: Buffer,
  id: string,
  ifNotExists: boolean,
): RemotePush {
  if (ifNotExists && exists(remote, push)) return { kind: 'exists' };
  const next = remoteAfterPush(remote, push, value);
  if (next === undefined && remote.customMetadata?.[PUSHED_BY_KEY] === id) return { kind: 'noop' };
  return {
    kind: 'write',
    markers: { ...remote.customMetadata, [MANAGED_BY_KEY]: MANAGED_BY_VALUE, [PUSHED_BY_KEY]: id },
    markersAction: remote.customMetadata === undefined ? 'create' : 'update',
    body: next ?? remote.data ?? {},
    writeData: next !== undefined || remote.data === undefined,
    dataAction: remote.data === undefined ? 'create' : 'update',
  };
}

/** ESO's SecretExists for IfNotExists: the remote secret (or its property) has a value. */
function exists(remote: RemoteState, push: PushSecretData): boolean {
  if (remote.data === undefined) return false;
  const p = push.match.remoteRef.property ?? '';
  return p === '' || remote.data[p] !== undefined;
}

export function mergeSynced(next: Synced, old: Synced | undefined): Synced {
  const out: Synced = structuredClone(next);
  for (const [store, entries] of Object.entries(old ?? {})) out[store] = { ...entries, ...out[store] };
  return out;
}
