// What the ExternalSecret reconciler does, decided from what it observed. Pure: no I/O, no clock, and no
// value (the plan holds names, reasons and messages; the Secret's data stays with the reconciler).
// Called up to three times in one reconcile, as observation deepens: before Vault is read (is this ours
// to sync, is a read due, may the target be written), after the read (is there anything to render) and
// after the render (create, update, merge, adopt or nothing). The same observations give the same plan.
import type { ErrorOutcome } from './error-policy.ts';
import type { Retry } from '../../kube/reconcile-error.ts';
import { ANNOTATION_FORCE_SYNC, LABEL_CREATED_BY } from '../../eso/target.ts';
import { parseGoDuration } from '../../golang/index.ts';
import { VDS_DEFAULTS } from '../../webhook/rules/vaultdynamicsecret.ts';
import {
  planLifecycle,
  type LeasePolicy,
  type LeaseState,
  type LifecyclePlan,
  type PreviousLease,
} from './vaultdynamicsecret-plan.ts';

/**
 * Label on a Secret vaultgate wrote with creationPolicy Orphan (which leaves no owner reference): the uid of
 * the ExternalSecret it was written for, so the next sync knows the Secret is its own.
 */
export const LABEL_CREATED_FOR = 'vaultgate.io/created-for';

/**
 * Annotation on an ExternalSecret that lets it take over a target Secret vaultgate did not create (with
 * creationPolicy Owner or Orphan). Without it such a Secret is left untouched: Ready=False, reason
 * SecretNotOwned. With it the Secret becomes this ExternalSecret's: keys it does not produce are removed
 * and, with Owner, it is garbage-collected with the ExternalSecret.
 */
export const ADOPT_SECRET_ANNOTATION = 'vaultgate.io/adopt-secret';

export type CreationPolicy = 'Owner' | 'Orphan' | 'Merge' | 'CreateOrMerge' | 'None';
export type DeletionPolicy = 'Retain' | 'Delete' | 'Merge';
/** How the target is written: CreateOrMerge is Merge on an existing Secret, Orphan on a new one (ESO v2). */
export type WritePolicy = 'Owner' | 'Orphan' | 'Merge' | 'None';

/** What the spec asks for. */
export interface EsDesired {
  namespace: string;
  targetName: string;
  creationPolicy: CreationPolicy;
  deletionPolicy: DeletionPolicy;
  /** spec.refreshInterval in ms (0: fetch once). */
  intervalMs: number;
  /** Why the spec is refused (admission's re-check, an unreadable refreshInterval): nothing is read or written. */
  refused?: string;
  /** Annotated vaultgate.io/adopt-secret: "true". */
  adopt: boolean;
}

/** The controller's settings the plan reads (ExternalSecretDeps' defaults applied). */
export interface EsSettings {
  missingTargetRetryMs: number;
  coalesceWindowMs: number;
  refreshWindowFraction: number;
  maxRefreshWindowMs: number;
}

/** The target Secret as it is, by ownership (never its data). */
export interface TargetSecret {
  /** An owner reference to this ExternalSecret, ESO's created-by label naming it, or vaultgate's created-for label. */
  createdByUs: boolean;
  /** A controller owner reference to this ExternalSecret / to another object. */
  controlledByUs: boolean;
  controlledByOther: boolean;
  /** Managed label set, data-hash matching its data, templateFrom sources as last rendered: nothing to repair. */
  valid: boolean;
  /** The data-hash annotation is set and does not match the data: changed outside vaultgate. */
  editedByHand: boolean;
}

/** A read or a render that failed: the error policy's verdict, and whether a templateFrom source is missing. */
export interface Failed {
  failed: ErrorOutcome;
  templateSourceMissing?: boolean;
}

export interface EsObserved {
  /** A store it reads from is another controller class's (ESO's shouldSkipUnmanagedStore). */
  anotherControllersStore: boolean;
  /** undefined: there is no target Secret (or creationPolicy None, which never looks). */
  target?: TargetSecret;
  refresh: {
    /** eso/refresh.ts shouldRefresh: the interval, policy, sync windows or a spec change call for a read. */
    due: boolean;
    /** ms to the next refresh as things are (undefined: none). */
    nextMs?: number;
    /** Ready=True, and status.syncedResourceVersion is of the current generation. */
    readyThisGeneration: boolean;
    /** syncedResourceVersion of the status, and the current one (generation, labels, annotations). */
    syncedRv?: string;
    generation: number;
    currentRv: string;
    /** The force-sync annotation's value. */
    forceSyncValue?: string;
  };
  /** What the provider returned (absent until read). */
  provider?: Failed | { keys: number; missing: number };
  /** The Secret the spec renders, compared with the target (absent until rendered). */
  rendered?: Failed | { matches: boolean };
}

export type EsDecision =
  | 'skip'
  | 'refuse'
  | 'leave-foreign'
  | 'not-due'
  | 'read'
  | 'render'
  | 'failed'
  | 'delete'
  | 'keep'
  | 'synced-none'
  | 'target-missing'
  | 'controlled-by-other'
  | 'noop'
  | 'create'
  | 'update'
  | 'merge'
  | 'adopt'
  | 'write-failed';

export type EsStep =
  /** Read the provider: reads younger than maxAge may be shared; shareTag groups one force-sync request. */
  | { read: { maxAgeMs: number; shareTag?: string } }
  | 'render'
  | 'delete-secret'
  | { write: WritePolicy; create: boolean }
  /** template.metadata.finalizers added where missing (never removed). */
  | 'add-template-finalizers';

export interface Ready {
  status: 'True' | 'False';
  reason: string;
  message: string;
}
export interface EsEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}

/**
 * After the steps: `schedule` = next refresh counted from now (a sync happened), `next` = the next refresh
 * as observed, `done` = wait for a change, or a retry rule (`never`: the periodic refresh, if any).
 */
export type Then = 'schedule' | 'next' | 'done' | Retry;

export interface EsPlan {
  decision: EsDecision;
  steps: EsStep[];
  /** Ready as it will be (undefined: status untouched); refreshed: refreshTime and syncedResourceVersion move to now. */
  status?: { ready: Ready; refreshed: boolean };
  events: EsEvent[];
  then: Then;
}

const SYNCED_ERROR = 'SecretSyncedError';

export function writePolicyOf(d: EsDesired, targetExists: boolean): WritePolicy {
  if (d.creationPolicy === 'CreateOrMerge') return targetExists ? 'Merge' : 'Orphan';
  return d.creationPolicy;
}

/**
 * Asked as observation deepens: before the provider is read (ours, admitted, may the target be written,
 * is a read due), after the read (no data: delete or keep; else render) and after the render (write or not).
 */
export function planExternalSecret(d: EsDesired, o: EsObserved, s: EsSettings): EsPlan {
  const gate = planGate(d, o);
  if (gate) return gate;
  if (!o.provider) return { decision: 'read', steps: [{ read: readAge(d, o, s) }], events: [], then: 'done' };
  if ('failed' in o.provider) return fetchFailed(d, o.provider);
  const noData = planNoData(d, o.target, o.provider);
  if (noData) return noData;
  if (!o.rendered) return { decision: 'render', steps: ['render'], events: [], then: 'done' };
  if ('failed' in o.rendered) return fetchFailed(d, o.rendered);
  return planWrite(d, o.target, o.rendered.matches, s);
}

const ownerOrOrphan = (d: EsDesired): boolean => d.creationPolicy === 'Owner' || d.creationPolicy === 'Orphan';

/** Whether to sync at all: another controller's, refused, a foreign target, or nothing due. */
function planGate(d: EsDesired, o: EsObserved): EsPlan | undefined {
  if (o.anotherControllersStore) return { decision: 'skip', steps: [], events: [], then: 'done' };
  if (d.refused !== undefined) return failure('refuse', SYNCED_ERROR, d.refused, 'done');
  // A Secret someone else created is not ours to take (ESO users lost `argocd-secret` this way: its keys
  // nulled, then garbage-collected with the ExternalSecret). Decided before Vault is read.
  if (o.target && ownerOrOrphan(d) && !o.target.createdByUs && !d.adopt) {
    return failure('leave-foreign', 'SecretNotOwned', notOwnedMessage(d), { kind: 'never' });
  }
  const valid = d.creationPolicy === 'None' || (o.target?.valid ?? false);
  if (!o.refresh.due && valid && o.refresh.readyThisGeneration)
    return { decision: 'not-due', steps: [], events: [], then: 'next' };
  return undefined;
}

/** The provider returned no data: the target deleted (deletionPolicy Delete, ours) or kept (Retain). */
function planNoData(
  d: EsDesired,
  target: TargetSecret | undefined,
  provider: { keys: number; missing: number },
): EsPlan | undefined {
  if (provider.keys === 0 && d.deletionPolicy === 'Delete') {
    const ours = target !== undefined && d.creationPolicy === 'Owner' && target.controlledByUs;
    return {
      decision: 'delete',
      steps: ours ? ['delete-secret'] : [],
      status: synced('secret deleted: the provider has no data (deletionPolicy Delete)', 'SecretDeleted'),
      events: ours
        ? [
            {
              type: 'Normal',
              reason: 'Deleted',
              note: `deleted Secret ${d.targetName}: the provider has no data any more (deletionPolicy Delete)`,
            },
          ]
        : [],
      then: 'schedule',
    };
  }
  if (provider.keys === 0 && d.deletionPolicy === 'Retain' && provider.missing === 0 && target) {
    return {
      decision: 'keep',
      steps: [],
      status: synced('the provider returned no data; the existing Secret is kept (deletionPolicy Retain)'),
      events: [],
      then: 'schedule',
    };
  }
  return undefined;
}

/** Rendered: written as the creationPolicy says, unless the target already is that Secret. */
function planWrite(d: EsDesired, target: TargetSecret | undefined, matches: boolean, s: EsSettings): EsPlan {
  if (d.creationPolicy === 'None')
    return {
      decision: 'synced-none',
      steps: [],
      status: synced('secret synced (creationPolicy None: no Secret is written)'),
      events: [],
      then: 'schedule',
    };
  if (d.creationPolicy === 'Merge' && !target) {
    return failure(
      'target-missing',
      'SecretMissing',
      `target Secret ${d.targetName} does not exist; creationPolicy Merge only adds keys to an existing Secret`,
      { kind: 'after', ms: s.missingTargetRetryMs },
    );
  }
  if (target && ownerOrOrphan(d) && target.controlledByOther) {
    return failure(
      'controlled-by-other',
      SYNCED_ERROR,
      `Secret ${d.targetName} is controlled by another owner; vaultgate does not take it over`,
      { kind: 'never' },
    );
  }
  const done = { status: synced('secret synced'), then: 'schedule' as const };
  if (matches) return { decision: 'noop', steps: ['add-template-finalizers'], events: [], ...done };
  const policy = writePolicyOf(d, target !== undefined);
  const decision = !target ? 'create' : policy === 'Merge' ? 'merge' : target.createdByUs ? 'update' : 'adopt';
  // Events are for what a user should look at: none for a routine create or update (ESO records one per
  // sync: 1,000 ExternalSecrets, 1,000 Events), one when a Secret edited by hand is repaired.
  const events: EsEvent[] = target?.editedByHand
    ? [
        {
          type: 'Normal',
          reason: 'Repaired',
          note: `Secret ${d.targetName} was changed outside vaultgate; its data was restored from the provider`,
        },
      ]
    : [];
  return { decision, steps: [{ write: policy, create: !target }, 'add-template-finalizers'], events, ...done };
}

function synced(message: string, reason = 'SecretSynced'): EsPlan['status'] {
  return { ready: { status: 'True', reason, message }, refreshed: true };
}

/** How a write to the target failed: what the apiserver said, in the error policy's words. */
export interface WriteFailure {
  failed: ErrorOutcome;
  /** 404: the Secret went away. */
  notFound: boolean;
  /** AlreadyExists: (for a create) someone else created it since it was looked up. */
  alreadyExists: boolean;
}

/**
 * A step that failed. Deleting the target: as a failed read. Writing it, or adding its finalizers: retried
 * after the Merge delay, whatever failed (a Merge target gone is SecretMissing; a Secret someone else
 * created while this one was being created is SecretNotOwned).
 */
export function planStepFailure(
  d: EsDesired,
  step: EsStep,
  targetExists: boolean,
  f: WriteFailure,
  s: EsSettings,
): EsPlan {
  if (step === 'delete-secret') return failure('failed', SYNCED_ERROR, f.failed.message, f.failed.retry);
  const policy = typeof step === 'object' && 'write' in step ? step.write : writePolicyOf(d, targetExists);
  const later: Retry = { kind: 'after', ms: s.missingTargetRetryMs };
  if (f.notFound && policy === 'Merge')
    return failure('write-failed', 'SecretMissing', `target Secret ${d.targetName} disappeared`, later);
  if (f.alreadyExists && !targetExists) {
    return failure(
      'write-failed',
      'SecretNotOwned',
      `Secret ${d.namespace}/${d.targetName} was created by someone else while this ExternalSecret was creating it; it is left untouched`,
      later,
    );
  }
  // ESO's reason, whatever failed (an apiserver's Invalid included): the message says what.
  return failure('write-failed', SYNCED_ERROR, `cannot write Secret ${d.targetName}: ${f.failed.message}`, later);
}

/**
 * How old a shared read may be: periodic refreshes accept the jitter window, a force-sync (a
 * metadata-only change of this generation) nothing but in-flight sharing, anything else a short window.
 * ExternalSecrets force-synced by one request (the same annotation value) share its fresh reads.
 */
function readAge(d: EsDesired, o: EsObserved, s: EsSettings): { maxAgeMs: number; shareTag?: string } {
  const { syncedRv, currentRv, forceSyncValue, generation } = o.refresh;
  const forceSync = syncedRv !== undefined && syncedRv !== currentRv && syncedRv.split('-')[0] === String(generation);
  const maxAgeMs = forceSync
    ? 0
    : syncedRv === currentRv && d.intervalMs > 0
      ? Math.min(d.intervalMs * s.refreshWindowFraction, s.maxRefreshWindowMs)
      : s.coalesceWindowMs;
  const shareTag = forceSync && forceSyncValue !== undefined ? `${ANNOTATION_FORCE_SYNC}=${forceSyncValue}` : undefined;
  return { maxAgeMs, ...(shareTag ? { shareTag } : {}) };
}

/**
 * A read or render failed: Ready=False, the Secret keeps its last good data. Retried as the error
 * policy says (a Vault error with backoff: a role or policy written later changes Vault without any
 * Kubernetes event), a missing templateFrom source within a minute (or the interval, if shorter).
 */
function fetchFailed(d: EsDesired, f: Failed): EsPlan {
  if (f.templateSourceMissing) {
    return failure('failed', 'TemplateSourceNotFound', f.failed.message, {
      kind: 'after',
      ms: d.intervalMs > 0 ? Math.min(d.intervalMs, 60_000) : 60_000,
    });
  }
  return failure('failed', SYNCED_ERROR, f.failed.message, f.failed.retry);
}

function failure(decision: EsDecision, reason: string, message: string, then: Then): EsPlan {
  return {
    decision,
    steps: [],
    status: { ready: { status: 'False', reason, message }, refreshed: false },
    events: [{ type: 'Warning', reason: 'UpdateFailed', note: message }],
    then,
  };
}

function notOwnedMessage(d: EsDesired): string {
  return (
    `Secret ${d.namespace}/${d.targetName} already exists and was not created by vaultgate for this ExternalSecret ` +
    `(no owner reference to it, no ${LABEL_CREATED_BY} or ${LABEL_CREATED_FOR} label naming it); it is left untouched. To let this ExternalSecret take it over ` +
    `(its other keys are removed${d.creationPolicy === 'Owner' ? ', and it is deleted with the ExternalSecret' : ''}), annotate the ExternalSecret ` +
    `${ADOPT_SECRET_ANNOTATION}: "true"; to add keys to it instead, use creationPolicy Merge`
  );
}

/**
 * Finalizer on ExternalSecrets whose dataFrom names a VaultDynamicSecret generator: deleting the
 * ExternalSecret revokes its generators' leases first (their state Secrets would otherwise be garbage-
 * collected and the leases left to expire).
 */
export const GENERATOR_FINALIZER = 'vaultgate.io/generator-leases';

/**
 * Failed revocations tolerated before the leases are left to expire unrenewed (a Warning Event says
 * so): with the work queue's backoff (5 ms × 2^n) about a minute of trying, so a Vault that is gone never
 * keeps an ExternalSecret (or its namespace) from being deleted for long.
 */
export const GENERATOR_REVOKE_ATTEMPTS = 14;

/** A generator state Secret (externalsecret-generators.ts): the dataFrom index it keeps, its lease ids. */
export interface GeneratorStateFacts {
  name: string;
  index: number;
  leaseIds: string[];
}

export interface GeneratorLeasesObserved {
  deleting: boolean;
  /** Admitted and not another controller's: refused, its leases are kept as they are (never revoked for it). */
  serving: boolean;
  /** GENERATOR_FINALIZER is on the ExternalSecret. */
  finalizer: boolean;
  /** dataFrom indices naming a VaultDynamicSecret generator (directly or through a ClusterGenerator). */
  leased: number[];
  /** A sync is due (a spec change among others): an entry that stopped naming a generator shows then. */
  syncDue: boolean;
  /** The state Secrets labelled for this ExternalSecret (undefined: not listed). */
  states?: GeneratorStateFacts[];
  /** Failed attempts of this key before this one. */
  retries: number;
}

export interface GeneratorLeasesPlan {
  /** List the state Secrets, then plan again. */
  list: boolean;
  /** Whether GENERATOR_FINALIZER should be on the ExternalSecret (kube/finalizer.ts adds or removes it before the sync). */
  finalizer: boolean;
  /**
   * Leases to revoke. Live: after the sync rewrote the target without them, each state Secret deleted
   * once revoked. Deleting: all of them, before the finalizer goes (the state Secrets go with the object).
   */
  revoke: GeneratorStateFacts[];
  /** Stale leases revoked with no generator left: look again soon to remove the finalizer. */
  again: boolean;
  /** A revocation failed: throw to retry with backoff, or give up (a Warning Event) and go on. */
  onRevokeFailure: 'retry' | 'give-up';
}

/**
 * The generators' leases of an ExternalSecret. The finalizer goes on before anything is minted; a state
 * Secret whose dataFrom entry no longer names a VaultDynamicSecret generator has its leases revoked once
 * the sync has rewritten the target without them; the finalizer comes off when no entry names one and
 * no lease is left. Deleting: every kept lease revoked, then the finalizer removed.
 */
export function planGeneratorLeases(o: GeneratorLeasesObserved): GeneratorLeasesPlan {
  const onRevokeFailure = o.retries + 1 < GENERATOR_REVOKE_ATTEMPTS ? 'retry' : 'give-up';
  const plan = (finalizer: boolean, revoke: GeneratorStateFacts[] = [], list = false): GeneratorLeasesPlan => ({
    list,
    finalizer,
    revoke,
    again: revoke.length > 0 && o.leased.length === 0 && !o.deleting,
    onRevokeFailure,
  });
  if (o.deleting) {
    if (!o.finalizer) return plan(false);
    if (!o.states) return plan(true, [], true);
    return plan(
      true,
      o.states.filter((s) => s.leaseIds.length > 0),
    );
  }
  // Refused or another controller's: its leases stay as they are (renewed by nobody), the finalizer too.
  if (!o.serving) return plan(o.finalizer);
  // Only an ExternalSecret that had a generator's lease (the finalizer says so) can have one to revoke;
  // an entry that stopped naming a generator is a spec change, so a sync is due.
  if (!o.finalizer || (o.leased.length > 0 && !o.syncDue)) return plan(o.finalizer || o.leased.length > 0);
  if (!o.states) return plan(true, [], true);
  const stale = o.states.filter((s) => !o.leased.includes(s.index));
  return plan(o.leased.length > 0 || stale.length > 0, stale);
}

const ms = (d: string): number => (parseGoDuration(d) as { ok: true; ms: number }).ms;
/**
 * ESO's manifest states no lease policy: the VaultDynamicSecret kind's defaults (renew at 67 % + up to
 * 10 % of the lease, replace 2 min before the max TTL). ExternalSecrets name no rollout targets to wait
 * for: a replaced lease is revoked 1 min after its replacement was written, time for the kubelet to
 * update the Secret in the pods' volumes (its sync period), within the 2 min it had left.
 */
export const GENERATOR_LEASE_POLICY: LeasePolicy = {
  renewAtPercent: VDS_DEFAULTS.renewAtPercent,
  jitterPercent: VDS_DEFAULTS.jitterPercent,
  minValidityMs: ms(VDS_DEFAULTS.minValidity),
  onDelete: false,
  previous: 'AfterRollout',
  graceMs: 60_000,
};

/** A generator's leases as its state Secret keeps them (ids and times only, never a value). */
export interface KeptLeases {
  lease?: LeaseState;
  previous: PreviousLease[];
}

export interface GeneratorCredentialObserved {
  /** `generate`: a sync wants the generator's keys; `maintain`: between syncs, only leases are kept. */
  mode: 'generate' | 'maintain';
  now: number;
  /** Which generator: its dataFrom index and `<kind> <name>`, for the Event. */
  generator: { index: number; label: string };
  /** What mints the credential now (generator, provider, path, parameters): a change means a new one. */
  source: string;
  kept: KeptLeases;
  /** The state Secret exists: it holds the kept credential. */
  stored: boolean;
}

export type GeneratorCredentialStep =
  /** Maintenance mints nothing: the sync does, and is asked for when a kept lease must be replaced. */
  | { op: 'leave-to-sync'; syncNeeded: boolean }
  /**
   * Ask Vault for a new credential. `retire`: the current lease waits its grace as a replaced one (a lease
   * Vault lost is not). `event`: recorded when the answer has a lease to keep.
   */
  | { op: 'mint'; reason: string; retire: boolean; event: EsEvent }
  | { op: 'renew'; incrementSeconds: number }
  | { op: 'keep' };

export interface GeneratorCredentialPlan {
  /** The VaultDynamicSecret kind's plan for the kept leases: the replaced leases' steps, when to look again. */
  lifecycle: LifecyclePlan;
  /** What becomes of the current credential. */
  step: GeneratorCredentialStep;
}

/**
 * A VaultDynamicSecret generator's credential (externalsecret-generators.ts), decided by the
 * VaultDynamicSecret kind's planner under GENERATOR_LEASE_POLICY: no rollout to wait for, the state
 * Secret as the controller's copy. A sync returns the kept credential; one without a state Secret, or
 * due for replacement, is minted at a sync only.
 */
export function planGeneratorCredential(o: GeneratorCredentialObserved): GeneratorCredentialPlan {
  const lifecycle = generatorLifecycle(o.now, o.source, o.kept, o.stored);
  const { main } = lifecycle;
  const lease = o.kept.lease;
  if (main.type === 'mint' || !o.stored) {
    if (o.mode === 'maintain') return { lifecycle, step: { op: 'leave-to-sync', syncNeeded: lease !== undefined } };
    const reason = main.type === 'mint' ? main.reason : 'SecretLost';
    const event: EsEvent = {
      type: 'Normal',
      reason: lease ? 'CredentialRotated' : 'CredentialIssued',
      note: `spec.dataFrom[${o.generator.index}]: generator ${o.generator.label} issued a new leased credential${lease ? ` (${reason})` : ''}`,
    };
    return { lifecycle, step: { op: 'mint', reason, retire: lease !== undefined && reason !== 'LeaseLost', event } };
  }
  if (main.type === 'renew' && lease)
    return { lifecycle, step: { op: 'renew', incrementSeconds: main.incrementSeconds } };
  return { lifecycle, step: { op: 'keep' } };
}

/**
 * When to look at the credential again (ms): as planned, or, once `kept` was rewritten, as the leases now
 * are (the state Secret then exists); a step still due (a replacement only a sync mints): in a second.
 */
export function generatorLookAgainMs(
  o: GeneratorCredentialObserved,
  planned: LifecyclePlan,
  kept?: KeptLeases,
): number | undefined {
  const next = kept ? generatorLifecycle(o.now, o.source, kept, true) : planned;
  return next.main.type === 'noop' ? next.requeueAfterMs : 1_000;
}

function generatorLifecycle(now: number, source: string, kept: KeptLeases, stored: boolean): LifecyclePlan {
  return planLifecycle({
    now,
    deleting: false,
    policy: GENERATOR_LEASE_POLICY,
    source,
    ...(kept.lease ? { lease: kept.lease } : {}),
    previous: kept.previous,
    target: stored ? 'current' : 'missing',
    ...(kept.lease && stored ? { copyLeaseId: kept.lease.id } : {}),
    rollout: 'settled',
  });
}
