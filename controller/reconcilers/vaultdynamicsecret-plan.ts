// The lease lifecycle of a VaultDynamicSecret, decided from persisted state only (status, the Secrets'
// presence and the controller's copy, the minting token as Vault reports it, the rollout of the targets),
// so a restarted controller, or one that logged in again, renews what is due and mints nothing because it
// restarted: VSO re-mints (and restarts every workload) on both (VSO #285, #734). Pure: `now` is an input,
// the renewal jitter is derived from the lease id (stable across restarts), and the plan names the
// condition, Events and audit records each step implies. Never sees the credential itself.
//
// The credential is not in status, so a deleted target Secret is restored from a copy the controller keeps
// in a Secret of its own (same namespace, owned by the object, so the tenant's RBAC exposes nothing new and
// the garbage collector removes it with the object): a restore mints nothing and restarts nothing, as the
// bytes the pods hold are the same. Without the copy (deleted too), the credential cannot be had again: a
// new one is minted, the targets roll, and the old lease is revoked after them, as for any rotation.
//
// A certificate (credentialType Certificate) goes through the same plan as a lease that cannot be renewed:
// its id is its serial, its issue and expiry are notBefore and notAfter (from status, or parsed from the
// stored certificate after a crash), and it is re-issued at renewAtPercent of its lifetime plus jitter, at
// the latest minValidity before notAfter (VSO re-issues at expiry by default: its expiryOffset is 0).
// It has no lease, so the minting token's end does not bound it.
//
// The minting token: Vault revokes a lease with the token that minted it. Its end as last seen is in
// status; before acting on it (and once after a controller start, when no one renews that token any more)
// the reconciler looks it up again (`mintingToken`), so a token the cache renewed causes no rotation and
// one that ends (non-periodic, or no longer renewed) causes one in time, said in the TokenBound condition.

/** What a rollout target's coordinator answers (controller/rollouts/coordinator.ts settled()). */
export type RolloutState = 'settled' | 'rolling' | 'paused' | 'missing';

export type ReplaceReason =
  | 'MaxTTL'
  | 'TokenExpiry'
  | 'SpecChanged'
  | 'SecretLost'
  | 'NotRenewable'
  | 'LeaseLost'
  | 'Renewal'
  | 'CertificateExpired';

export interface LeaseState {
  id: string;
  /** Seconds Vault granted at issue. */
  durationSeconds: number;
  renewable: boolean;
  issuedAt: number;
  renewedAt?: number;
  expiresAt: number;
  maxExpiresAt?: number;
  /**
   * Vault's max TTL for this path in seconds, as a capped renewal showed it for this credential or for the
   * one it replaced (same source, same granted duration): planned from issue like a stated maxTTL, so a
   * credential is not renewed early only to learn it again (test/bench/lifecycle.ts: 3 renewals instead of 1).
   */
  maxTTLSeconds?: number;
  tokenAccessor?: string;
  tokenExpiresAt?: number;
  /** The minting token is periodic (lives while renewed). */
  tokenPeriodic?: boolean;
  tokenCheckedAt?: number;
  /** Hash of what minted it (store, path, method, parameters): a change means a new credential. */
  source?: string;
  /** A certificate: id is its serial, issuedAt/expiresAt its notBefore/notAfter; no lease, no token bound. */
  certificate?: boolean;
}

/** The minting token as looked up now: the session's own token, another live one, or gone (revoked, expired). */
export interface MintingTokenLook {
  accessor: string;
  state: 'current' | 'other' | 'gone';
  /** ms; undefined when the token does not expire. */
  expiresAt?: number;
  periodic?: boolean;
}

export interface PreviousLease {
  id: string;
  replacedAt: number;
  expiresAt?: number;
  /** Seconds of its last grant, to renew it while the rollout runs. */
  durationSeconds?: number;
  renewedAt?: number;
  rolloutSettledAt?: number;
  reason?: string;
  /** A certificate, revoked by serial at this PKI mount. */
  certificate?: boolean;
  mount?: string;
}

export interface LeasePolicy {
  renewAtPercent: number;
  jitterPercent: number;
  minValidityMs: number;
  /** The role's max_ttl as the user states it (planning from issue); Vault's capped renewal corrects it. */
  maxTTLMs?: number;
  onDelete: boolean;
  previous: 'AfterRollout' | 'Immediately' | 'Never';
  graceMs: number;
}

export interface LifecycleObservation {
  now: number;
  deleting: boolean;
  policy: LeasePolicy;
  /** Hash of the spec's store, path, method and parameters now. */
  source: string;
  lease?: LeaseState;
  previous: readonly PreviousLease[];
  /** The target Secret: ours with the copy's data, ours with other data, absent, or someone else's. */
  target: 'current' | 'differs' | 'missing' | 'foreign';
  /** The lease id the controller's copy holds the credential of; undefined when there is no copy. */
  copyLeaseId?: string;
  /** The rollout of the targets onto the Secret's current data; only asked while a replaced lease waits. */
  rollout?: RolloutState;
  /** The minting token looked up in this pass (see mintingTokenLookDue); absent when not looked up. */
  mintingToken?: MintingTokenLook;
}

export type MainAction =
  | { type: 'mint'; reason: 'Initial' | ReplaceReason }
  | { type: 'adopt' }
  | { type: 'restore' }
  | { type: 'renew'; incrementSeconds: number }
  | { type: 'revoke-all' }
  | { type: 'release' }
  | { type: 'refuse'; reason: 'SecretNotOwned' }
  | { type: 'noop' };

export type PreviousAction =
  | { id: string; op: 'revoke'; why: 'Immediately' | 'AfterRollout' | 'Overflow' }
  | { id: string; op: 'renew'; incrementSeconds: number }
  | { id: string; op: 'settled' }
  | { id: string; op: 'forget'; why: 'Never' | 'Expired' };

export interface PlannedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface LifecyclePlan {
  main: MainAction;
  /** The current lease's token fields as now known (from a fresh look-up), to persist. */
  token?: Pick<LeaseState, 'tokenExpiresAt' | 'tokenPeriodic' | 'tokenCheckedAt'>;
  /** TokenBound: whether the minting token ends before the credential would (a rotation it forces). */
  tokenCondition?: { status: 'True' | 'False'; reason: string; message: string };
  previous: PreviousAction[];
  condition: { status: 'True' | 'False' | 'Unknown'; reason: string; message: string };
  events: PlannedEvent[];
  /** Vault changes this plan makes, for the audit trail (lease ids only). */
  audit: Array<{ action: 'mint' | 'renew' | 'revoke'; leaseId?: string; reason: string }>;
  /** When to look again (ms from now) if nothing else happens. */
  requeueAfterMs?: number;
}

/** At most this many replaced leases wait at once; beyond it the oldest is revoked (with a Warning). */
export const MAX_PREVIOUS = 8;
/** A lease that cannot be renewed serves at least 1/20 of its lifetime before it is replaced. */
export const MIN_SERVED_FRACTION = 20;
/** Renewal retried no sooner than this (a failed renewal is retried by the queue's backoff anyway). */
const MIN_REQUEUE_MS = 1_000;

/** A number in [0, 1) from a string: the same lease renews at the same point after a restart. */
export function stableFraction(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h / 2 ** 32;
}

/** When a lease (granted `grantMs` at `from`) is renewed: renewAtPercent of it, plus up to jitterPercent. */
export function renewalTime(p: LeasePolicy, leaseId: string, from: number, grantMs: number): number {
  const fraction = (p.renewAtPercent + p.jitterPercent * stableFraction(`${leaseId}@${from}`)) / 100;
  return from + Math.min(0.95, fraction) * grantMs;
}

/** Time a renewal's answer (and the rotation it may call for) is given before a rotation point. */
const MAX_TTL_PROBE_MARGIN_MS = 5_000;

/**
 * When the lease is renewed while Vault's max TTL is unknown (not in the spec, no renewal capped yet): a
 * renewal asking for the lease plus minValidity is what reveals the max TTL (Vault caps its answer), and
 * the max TTL may be as near as the lease's current end, so the renewal comes before that end minus
 * minValidity; at renewAtPercent alone the cap showed up to 40 s after the rotation point (minValidity
 * 40 s, lease 30 s, max 100 s: the replaced credential had 22-31 s left under its pods). Never sooner than
 * a tenth of the grant, so a renewal just made is not made again.
 */
function leaseRenewalTime(lease: LeaseState, p: LeasePolicy): number {
  const from = lease.renewedAt ?? lease.issuedAt;
  const grant = lease.expiresAt - from;
  const at = renewalTime(p, lease.id, from, grant);
  if (maxEndOf(lease, p) !== undefined) return at;
  const probe = Math.max(from + grant / 10, lease.expiresAt - p.minValidityMs - MAX_TTL_PROBE_MARGIN_MS);
  return Math.min(at, probe);
}

/** The end the credential cannot outlive: Vault's max TTL (known or stated) or the minting token's end. */
function hardEnd(lease: LeaseState, p: LeasePolicy): { at: number; reason: ReplaceReason } | undefined {
  const ends: Array<{ at: number; reason: ReplaceReason }> = [];
  if (lease.certificate) {
    const at = Math.min(certificateRenewAt(p, lease), lease.expiresAt - p.minValidityMs) + p.minValidityMs;
    return { at, reason: 'Renewal' };
  }
  const maxEnd = maxEndOf(lease, p);
  if (maxEnd !== undefined) ends.push({ at: maxEnd, reason: 'MaxTTL' });
  // Served at least 1/MIN_SERVED_FRACTION of its lifetime: a lease not longer than minValidity (a kubernetes
  // token of 600 s with minValidity 10m) would otherwise be replaced as soon as minted, every second.
  if (!lease.renewable) {
    const served = (lease.expiresAt - lease.issuedAt) / MIN_SERVED_FRACTION;
    ends.push({ at: Math.max(lease.expiresAt, lease.issuedAt + served + p.minValidityMs), reason: 'NotRenewable' });
  }
  if (lease.tokenExpiresAt !== undefined) ends.push({ at: lease.tokenExpiresAt, reason: 'TokenExpiry' });
  return ends.sort((a, b) => a.at - b.at)[0];
}

/** When a certificate is re-issued: renewAtPercent of its lifetime plus jitter (stable per serial). */
export function certificateRenewAt(p: LeasePolicy, cert: Pick<LeaseState, 'id' | 'issuedAt' | 'expiresAt'>): number {
  return Math.min(
    renewalTime(p, cert.id, cert.issuedAt, cert.expiresAt - cert.issuedAt),
    cert.expiresAt - p.minValidityMs,
  );
}

/**
 * The current lease as a replaced one, waiting for its rollout. A lease Vault does not renew keeps no
 * duration, so nothing renews it meanwhile: the kubernetes secrets engine's are not renewable (OpenBao
 * answers "lease is not renewable", which reads as a lease gone, and it would be forgotten, not revoked).
 */
export function replacedLease(lease: LeaseState, now: number, reason: string): PreviousLease {
  return {
    id: lease.id,
    replacedAt: now,
    expiresAt: lease.expiresAt,
    ...(lease.renewable ? { durationSeconds: lease.durationSeconds } : {}),
    ...(lease.renewedAt !== undefined ? { renewedAt: lease.renewedAt } : {}),
    reason,
  };
}

/** Looking the minting token up again is due: once per controller start, and when its end comes near. */
export function mintingTokenLookDue(
  lease: LeaseState | undefined,
  p: LeasePolicy,
  now: number,
  checkedThisRun: boolean,
): boolean {
  if (!lease?.tokenAccessor || lease.certificate) return false;
  if (!checkedThisRun) return true;
  return lease.tokenExpiresAt !== undefined && lease.tokenExpiresAt - now < p.minValidityMs + 60_000;
}

/** Increment asked at each renewal: the lease's own duration plus minValidity, so a capped answer shows the max TTL minValidity early. */
export function renewIncrementSeconds(durationSeconds: number, p: LeasePolicy): number {
  return Math.max(1, durationSeconds) + Math.ceil(p.minValidityMs / 1000);
}

const condition = <S extends string>(status: S, reason: string, message: string) => ({ status, reason, message });
const ready = (reason: string, message: string): LifecyclePlan['condition'] => condition('True', reason, message);
const event = (type: 'Normal' | 'Warning', reason: string, message: string) => ({ type, reason, message });

/** What a plan implies besides its steps, gathered by the sub-planners in the order they decide. */
export interface Implied {
  events: PlannedEvent[];
  audit: LifecyclePlan['audit'];
  /** Times (ms) at which something falls due; the plan's requeue is the earliest. */
  wakeAt: number[];
}

/** What a sub-planner decides for the current credential. */
export type Decision = Pick<LifecyclePlan, 'main' | 'condition'>;

/**
 * The lifecycle in the order a newcomer reads it: a deleted object's leases; the replaced leases (each on
 * its own); a target Secret someone else owns; then the current credential: adopted after a crash, minted
 * the first time, replaced, restored into its Secret, renewed, or left as it is.
 */
export function planLifecycle(o: LifecycleObservation): LifecyclePlan {
  if (o.deleting) return planDeleting(o);
  const looked = lookedToken(o);
  const lease = looked?.lease ?? o.lease;
  const notes: Implied = { events: [], audit: [], wakeAt: [] };
  const previous = planPrevious(o, notes);
  if (o.target === 'foreign') return refuseForeign(previous, notes);
  const decision =
    planAdoption(o, lease) ??
    (lease
      ? (planReplacement(o, lease, looked, notes) ??
        planRestore(o, notes) ??
        planRenewal(o, lease, notes) ??
        steady(o, lease))
      : firstMint(notes));
  const next = notes.wakeAt.length > 0 ? Math.min(...notes.wakeAt) - o.now : undefined;
  const tokenCondition = looked && decision.main.type !== 'mint' ? tokenBound(looked, o.policy) : undefined;
  return {
    main: decision.main,
    previous,
    condition: decision.condition,
    events: notes.events,
    audit: notes.audit,
    ...(looked ? { token: looked.persist } : {}),
    ...(tokenCondition ? { tokenCondition } : {}),
    ...(next !== undefined ? { requeueAfterMs: Math.max(MIN_REQUEUE_MS, next) } : {}),
  };
}

/** A deleted object: every lease it holds is revoked (spec.revocation.onDelete), or all are let go. */
export function planDeleting(o: LifecycleObservation): LifecyclePlan {
  const revoke = o.policy.onDelete && (o.lease !== undefined || o.previous.length > 0);
  const ids = revoke ? [o.lease?.id, ...o.previous.map((x) => x.id)].filter((id): id is string => Boolean(id)) : [];
  return {
    main: { type: revoke ? 'revoke-all' : 'release' },
    previous: [],
    condition: ready('Deleting', revoke ? 'revoking the leases of a deleted object' : 'the object is being deleted'),
    events: [],
    audit: ids.map((leaseId) => ({ action: 'revoke', leaseId, reason: 'Deleted' })),
  };
}

function refuseForeign(previous: PreviousAction[], notes: Implied): LifecyclePlan {
  return {
    main: { type: 'refuse', reason: 'SecretNotOwned' },
    previous,
    condition: condition(
      'False',
      'SecretNotOwned',
      "the target Secret exists and is not this object's: nothing is minted into a Secret someone else owns",
    ),
    events: notes.events,
    audit: notes.audit,
    requeueAfterMs: 60_000,
  };
}

/** The replaced leases, each on its own: forgotten, revoked, renewed while their rollout runs, or marked rolled. */
export function planPrevious(o: LifecycleObservation, notes: Implied): PreviousAction[] {
  const overflow = Math.max(0, o.previous.length - MAX_PREVIOUS);
  return o.previous.flatMap((prev, i) => planReplaced(o, prev, i < overflow, notes));
}

function planReplaced(
  o: LifecycleObservation,
  prev: PreviousLease,
  overflow: boolean,
  notes: Implied,
): PreviousAction[] {
  const revoke = (why: 'Immediately' | 'Overflow'): PreviousAction[] => {
    notes.audit.push({ action: 'revoke', leaseId: prev.id, reason: why });
    return [{ id: prev.id, op: 'revoke', why }];
  };
  if (prev.expiresAt !== undefined && prev.expiresAt <= o.now) return [{ id: prev.id, op: 'forget', why: 'Expired' }];
  if (overflow) {
    const why = `more than ${MAX_PREVIOUS} replaced credentials waited for their rollout; the oldest was revoked`;
    notes.events.push(event('Warning', 'PreviousLeaseRevokedEarly', why));
    return revoke('Overflow');
  }
  if (o.policy.previous === 'Never') return [{ id: prev.id, op: 'forget', why: 'Never' }];
  if (o.policy.previous === 'Immediately') return revoke('Immediately');
  return planAfterRollout(o, prev, notes);
}

/** A replaced lease waiting for the targets' rollout: revoked once it has settled plus grace, renewed meanwhile. */
function planAfterRollout(o: LifecycleObservation, prev: PreviousLease, notes: Implied): PreviousAction[] {
  const out: PreviousAction[] = [];
  const p = o.policy;
  let settledAt = prev.rolloutSettledAt;
  if (settledAt === undefined && (o.rollout === 'settled' || o.rollout === 'missing')) {
    settledAt = o.now;
    out.push({ id: prev.id, op: 'settled' });
    const why =
      'a rollout target or the Secret does not exist: nothing to wait for before revoking the replaced credential';
    if (o.rollout === 'missing') notes.events.push(event('Normal', 'RolloutTargetMissing', why));
  }
  if (settledAt !== undefined && o.now >= settledAt + p.graceMs) {
    notes.audit.push({ action: 'revoke', leaseId: prev.id, reason: 'AfterRollout' });
    return [...out, { id: prev.id, op: 'revoke', why: 'AfterRollout' }];
  }
  if (settledAt !== undefined) notes.wakeAt.push(settledAt + p.graceMs);
  if (o.rollout === 'paused' && settledAt === undefined) {
    const why = 'a rollout target is paused: the replaced credential stays valid (renewed) until it has rolled';
    notes.events.push(event('Warning', 'RolloutPaused', why));
  }
  // Still in use by pods not yet rolled: keep it alive as the current one is kept.
  if (prev.expiresAt !== undefined && prev.durationSeconds !== undefined) {
    const from = prev.renewedAt ?? prev.replacedAt;
    const at = renewalTime(p, prev.id, from, prev.expiresAt - from);
    if (o.now >= at)
      out.push({ id: prev.id, op: 'renew', incrementSeconds: renewIncrementSeconds(prev.durationSeconds, p) });
    else notes.wakeAt.push(at);
  }
  if (settledAt === undefined) notes.wakeAt.push(o.now + 5_000); // ask the coordinator again
  return out;
}

/** A copy newer than status: minted (and copied) before a crash, status not yet written. Adopt, never re-mint. */
function planAdoption(o: LifecycleObservation, lease: LeaseState | undefined): Decision | undefined {
  if (o.copyLeaseId === undefined || o.copyLeaseId === lease?.id || o.previous.some((x) => x.id === o.copyLeaseId))
    return undefined;
  const why = 'taking over a credential minted before the controller stopped';
  return { main: { type: 'adopt' }, condition: condition('Unknown', 'Adopting', why) };
}

function firstMint(notes: Implied): Decision {
  notes.audit.push({ action: 'mint', reason: 'Initial' });
  return {
    main: { type: 'mint', reason: 'Initial' },
    condition: condition('Unknown', 'Minting', 'minting the first credential'),
  };
}

/**
 * The current credential must be replaced: its minting token is gone, it expired, the spec changed, it
 * was lost with its copy, or its hard end (max TTL, token end, not renewable, a certificate's renewal point)
 * is within minValidity. Otherwise undefined, with the time that end falls due in `notes.wakeAt`.
 */
export function planReplacement(
  o: LifecycleObservation,
  lease: LeaseState,
  looked: LookedToken | undefined,
  notes: Implied,
): Decision | undefined {
  const replaceFor = (reason: ReplaceReason, status: 'True' | 'False', why: string, message: string): Decision => ({
    main: replace(reason, notes),
    condition: condition(status, why, message),
  });
  const p = o.policy;
  if (looked?.gone) {
    const message =
      'the Vault token that minted the credential is gone (revoked or expired), and Vault revoked the lease with it';
    return replaceFor('LeaseLost', 'False', 'TokenRevoked', message);
  }
  if (lease.expiresAt <= o.now)
    return lease.certificate
      ? replaceFor(
          'CertificateExpired',
          'False',
          'CertificateExpired',
          'the certificate expired before it was re-issued',
        )
      : replaceFor('LeaseLost', 'False', 'LeaseExpired', 'the lease expired before it was renewed');
  if (lease.source !== undefined && lease.source !== o.source)
    return replaceFor('SpecChanged', 'True', 'Rotating', 'replacing the credential: the spec changed');
  if (o.target === 'missing' && o.copyLeaseId !== lease.id) {
    const message = "the Secret and the controller's copy were deleted: replacing the credential";
    return replaceFor('SecretLost', 'True', 'Rotating', message);
  }
  const end = hardEnd(looked?.bound ?? lease, p);
  // This process's own token is renewed by its token cache: look again (at most every 30 s) near its end,
  // where the cache may have had to log in again, leaving it to end.
  if (looked?.state === 'current' && lease.tokenExpiresAt !== undefined)
    notes.wakeAt.push(Math.max(o.now + 30_000, lease.tokenExpiresAt - p.minValidityMs));
  if (!end) return undefined;
  if (end.at - o.now >= p.minValidityMs) {
    notes.wakeAt.push(end.at - p.minValidityMs);
    return undefined;
  }
  const ends = lease.certificate || end.reason === 'NotRenewable' ? lease.expiresAt : end.at;
  const left = Math.max(0, Math.round((ends - o.now) / 1000));
  const message = lease.certificate
    ? `re-issuing the certificate ${left}s before its notAfter`
    : `replacing the credential ${left}s before it ends`;
  return replaceFor(end.reason, 'True', 'Rotating', message);
}

/** The target Secret was deleted (its copy kept) or changed: rewritten from the copy, nothing minted. */
function planRestore(o: LifecycleObservation, notes: Implied): Decision | undefined {
  if (o.target !== 'missing' && o.target !== 'differs') return undefined;
  const why = 'the target Secret was deleted or changed: restored with the current credential (nothing minted)';
  notes.events.push(event('Normal', 'SecretRestored', why));
  const restoring = "restoring the target Secret from the controller's copy";
  return { main: { type: 'restore' }, condition: ready('Restoring', restoring) };
}

/** A renewable lease at its renewal point is renewed (with a Warning when renewals have been failing); else its time is noted. */
export function planRenewal(o: LifecycleObservation, lease: LeaseState, notes: Implied): Decision | undefined {
  if (!lease.renewable) return undefined;
  const p = o.policy;
  const from = lease.renewedAt ?? lease.issuedAt;
  const grant = lease.expiresAt - from;
  const at = leaseRenewalTime(lease, p);
  if (o.now < at) {
    notes.wakeAt.push(at);
    return undefined;
  }
  // Past the renewal window's end by half of what was left: a renewal has been failing.
  const late = o.now >= from + grant * (1 - (1 - (p.renewAtPercent + p.jitterPercent) / 100) / 2);
  const left = Math.max(0, Math.round((lease.expiresAt - o.now) / 1000));
  const unrenewed = `the lease ends in ${left}s and has not been renewed`;
  if (late) notes.events.push(event('Warning', 'LeaseExpiringUnrenewed', unrenewed));
  notes.audit.push({ action: 'renew', leaseId: lease.id, reason: 'Due' });
  return {
    main: { type: 'renew', incrementSeconds: renewIncrementSeconds(lease.durationSeconds, p) },
    condition: ready('Renewing', 'renewing the lease'),
  };
}

/** Nothing to do for the current credential: the condition says why it is fine (or what it waits for). */
function steady(o: LifecycleObservation, lease: LeaseState): Decision {
  const n = o.previous.length;
  const noop = (reason: string, message: string): Decision => ({
    main: { type: 'noop' },
    condition: ready(reason, message),
  });
  if (n > 0 && o.policy.previous === 'AfterRollout')
    return noop(
      'AwaitingRollout',
      `the credential is valid; ${n} replaced credential${n === 1 ? '' : 's'} wait${n === 1 ? 's' : ''} for the rollout before revocation`,
    );
  if (lease.certificate)
    return noop(
      'CertificateValid',
      `the certificate is valid until ${new Date(lease.expiresAt).toISOString()} and is re-issued at ${new Date(certificateRenewAt(o.policy, lease)).toISOString()}`,
    );
  return noop('LeaseValid', 'the credential is valid and its lease is renewed on schedule');
}

function replace(reason: ReplaceReason, notes: Implied): MainAction {
  const why: Record<ReplaceReason, string> = {
    MaxTTL: 'the lease nears its max TTL',
    TokenExpiry: 'the Vault token that minted it ends soon, and Vault revokes the lease with it',
    SpecChanged: 'the store, path, method or parameters changed',
    SecretLost: "the Secret and the controller's copy of the credential were deleted",
    NotRenewable: 'the lease is not renewable and ends soon',
    LeaseLost: 'Vault no longer knows the lease (revoked, or expired unrenewed)',
    Renewal: 'the certificate reached its renewal point (a fraction of its lifetime)',
    CertificateExpired: 'the certificate expired before it was re-issued',
  };
  const warn = reason === 'LeaseLost' || reason === 'SecretLost' || reason === 'CertificateExpired';
  notes.events.push(event(warn ? 'Warning' : 'Normal', 'Rotating', `minting a replacement credential: ${why[reason]}`));
  notes.audit.push({ action: 'mint', reason });
  return { type: 'mint', reason };
}

/**
 * The current lease with its minting token as just looked up: `bound` is the lease as the plan weighs it
 * (this process's own token, renewed by its token cache, bounds nothing while it is renewed), `persist`
 * what status keeps.
 */
function lookedToken(o: LifecycleObservation): LookedToken | undefined {
  const lease = o.lease;
  const look = o.mintingToken;
  if (!lease || lease.certificate || !look || look.accessor !== lease.tokenAccessor) return undefined;
  const persist = {
    ...(look.expiresAt !== undefined ? { tokenExpiresAt: look.expiresAt } : {}),
    ...(look.periodic !== undefined ? { tokenPeriodic: look.periodic } : {}),
    tokenCheckedAt: o.now,
  };
  const { tokenExpiresAt: _e, tokenPeriodic: _p, ...rest } = lease;
  const updated: LeaseState = { ...rest, ...persist };
  const { tokenExpiresAt: _b, ...unbounded } = updated;
  const maxEnd = maxEndOf(lease, o.policy);
  return {
    lease: updated,
    bound: look.state === 'current' ? unbounded : updated,
    persist,
    gone: look.state === 'gone',
    state: look.state,
    ...(maxEnd !== undefined ? { maxEnd } : {}),
  };
}

/** The minting token as looked up in this pass, weighed against the current lease (see lookedToken). */
export interface LookedToken {
  lease: LeaseState;
  bound: LeaseState;
  persist: NonNullable<LifecyclePlan['token']>;
  gone: boolean;
  state: MintingTokenLook['state'];
  maxEnd?: number;
}

/**
 * The end Vault's max TTL sets: known from a capped renewal of this lease, else stated in the spec or
 * learned from the credential it replaced; the earliest of what is known.
 */
function maxEndOf(lease: LeaseState, p: LeasePolicy): number | undefined {
  const known = [
    lease.maxExpiresAt,
    p.maxTTLMs !== undefined ? lease.issuedAt + p.maxTTLMs : undefined,
    lease.maxExpiresAt === undefined && lease.maxTTLSeconds !== undefined
      ? lease.issuedAt + lease.maxTTLSeconds * 1000
      : undefined,
  ];
  const ends = known.filter((x): x is number => x !== undefined);
  return ends.length > 0 ? Math.min(...ends) : undefined;
}

/**
 * The lease after Vault answered a renewal. Vault grants exactly the increment asked unless the max TTL
 * ends the lease sooner (OpenBao 2.7.2 answers the remaining whole seconds, so 119 for 120 asked is a cap):
 * granted less than asked, the max TTL ends it then, and its length is kept for the next credential.
 */
export function renewedLease(
  lease: LeaseState,
  granted: { durationSeconds: number; renewable: boolean },
  askedSeconds: number,
  now: number,
): LeaseState {
  const expiresAt = now + granted.durationSeconds * 1000;
  const capped = granted.durationSeconds < Math.max(1, Math.round(askedSeconds));
  return {
    ...lease,
    renewable: granted.renewable,
    renewedAt: now,
    expiresAt,
    ...(capped
      ? { maxExpiresAt: expiresAt, maxTTLSeconds: Math.max(1, Math.round((expiresAt - lease.issuedAt) / 1000)) }
      : {}),
  };
}

/**
 * The max TTL a new credential inherits from the one it replaces: only from the same source and with the
 * same duration granted at issue (a role whose TTLs changed shows a new max TTL by a capped renewal again).
 */
export function inheritedMaxTTL(
  replaced: LeaseState | undefined,
  minted: { source?: string; durationSeconds: number },
): { maxTTLSeconds?: number } {
  if (!replaced || replaced.certificate || replaced.maxTTLSeconds === undefined) return {};
  if (replaced.source !== minted.source || replaced.durationSeconds !== minted.durationSeconds) return {};
  return { maxTTLSeconds: replaced.maxTTLSeconds };
}

/**
 * TokenBound for a credential just minted: its minting token is this process's own, as looked up at the
 * mint, so the condition is known without another Vault request (it described the replaced credential's).
 */
export function tokenConditionAtMint(lease: LeaseState, p: LeasePolicy): LifecyclePlan['tokenCondition'] | undefined {
  if (lease.certificate || !lease.tokenAccessor || lease.tokenCheckedAt === undefined) return undefined;
  const maxEnd = maxEndOf(lease, p);
  const persist = { tokenCheckedAt: lease.tokenCheckedAt };
  const looked: LookedToken = { lease, bound: lease, persist, gone: false, state: 'current' };
  return tokenBound(maxEnd !== undefined ? { ...looked, maxEnd } : looked, p);
}

/** Condition TokenBound (set when the token was looked up): False when the minting token may end the credential first. */
function tokenBound(looked: LookedToken, p: LeasePolicy): LifecyclePlan['tokenCondition'] | undefined {
  const end = looked.lease.tokenExpiresAt;
  const at = (n: number): string => new Date(n).toISOString();
  const minted = 'the Vault token that minted the credential';
  if (looked.state === 'gone') return undefined;
  if (end === undefined || (looked.maxEnd !== undefined && end >= looked.maxEnd))
    return condition('True', 'TokenOutlivesCredential', `${minted} does not end before the credential does`);
  if (looked.state === 'current' && looked.lease.tokenPeriodic)
    return condition('True', 'TokenPeriodic', `${minted} is periodic and renewed by this controller`);
  if (looked.state === 'current') {
    const message = `${minted} is not periodic: renewed by this controller up to its max TTL, it then ends (now at ${at(end)}) and Vault revokes the lease with it, so the credential is replaced before that (an auth role with token_period avoids these rotations)`;
    return condition('False', 'TokenNotPeriodic', message);
  }
  const message = `${minted} ends at ${at(end)}${looked.maxEnd !== undefined ? `, before the credential's max TTL (${at(looked.maxEnd)})` : ''}, and Vault revokes the lease with it: the credential is replaced ${Math.round(p.minValidityMs / 1000)}s (minValidity) before that${looked.lease.tokenPeriodic ? ' (a periodic token of an earlier login or controller process, which no one renews now)' : ''}`;
  return condition('False', looked.lease.tokenPeriodic ? 'TokenNoLongerRenewed' : 'TokenEndsFirst', message);
}
