// The plan of one Vault object vaultgate may own at the name it derives for a Kubernetes object (an ACL
// policy, a kubernetes-auth role), and the decisions the VaultPolicy and VaultRoleBinding planners share:
// whose the object is, what a write is called (Event, audit action), when a refusal is worth an Event.
// Pure: the planners get what observe read, and return data that act carries out.
import type { VaultWriteAction } from '../../trail/record.ts';
import type { ConditionInput } from '../../kube/conditions.ts';
import type { KubeObject } from '../../kube/objects.ts';

/** What the planner decided; one row of its table test each. */
export type Decision =
  | 'create' // nothing at our name: write it
  | 'update' // ours, the spec changed: rewrite it
  | 'repair' // ours, changed outside vaultgate: restore it
  | 'adopt' // someone else's, the tenant asks and the cluster admin consents: take it over
  | 'leave-foreign' // someone else's: never written or deleted
  | 'revoke' // the spec is refused and ours is in Vault: remove it
  | 'refuse' // the spec is refused and nothing of ours is in Vault
  | 'noop' // ours and as the spec says
  | 'delete' // the Kubernetes object is deleted: remove ours
  | 'keep'; // the Kubernetes object is deleted: nothing of ours to remove

export type Ready = Omit<ConditionInput, 'type'>;

export interface PlannedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
  action?: string;
}

export interface PlannedAudit<C> {
  action: VaultWriteAction;
  reason: string;
  /** What was written (hashed into the record, never kept). */
  content?: C;
  /** What the write changes in access, both ways. */
  change?: string;
}

/** One Vault call (or, for roles, the claim written to status before it), with what it is reported as. */
export interface PlannedStep<Op, C> {
  op: Op;
  event?: PlannedEvent;
  audit?: PlannedAudit<C>;
}

export interface VaultObjectPlan<Op, C> {
  decision: Decision;
  /** In order; each step's Event and audit record follow it at once, so a later failure loses neither. */
  steps: Array<PlannedStep<Op, C>>;
  /** The status written after the steps (none during deletion); `extra`: fields besides the conditions. */
  status?: { ready: Ready; conditions: ConditionInput[]; extra?: Record<string, unknown> };
  /** Recorded after the status. */
  events: PlannedEvent[];
}

/** Ready when a Vault call fails: `reason` (else the error's own) and the message around the error's text. */
export interface VaultFailure {
  reason?: string;
  before: string;
  after: string;
}

/**
 * What Ready says when a Vault call fails, for the desired state of a Vault `object` ("policy", "role")
 * named `name`: deleting, refused (what we wrote earlier may still be in force) or syncing.
 */
export function vaultFailure(object: string, desired: object | 'deleting', name: string): VaultFailure {
  if (desired === 'deleting')
    return { before: `deleting: cannot remove Vault ${object} ${name} yet (`, after: '); retrying' };
  if ('refused' in desired) {
    const r = (desired as { refused: Refusal }).refused;
    return {
      reason: r.reason,
      before: `${r.message}; the Vault ${object} ${name} vaultgate wrote earlier may still be in force: cannot remove it yet (`,
      after: '); retrying',
    };
  }
  return { before: `cannot sync Vault ${object} ${name}: `, after: '' };
}

/** A spec the controller's admission re-check (or rendering) refused: what Ready says about it. */
export interface Refusal {
  reason: string;
  message: string;
}

/**
 * Whose the Vault object at our derived name is. `ours`: vaultgate's mark on it (ownership header) or our
 * own record of writing it (a condition in status). Someone else's is taken over only when the tenant
 * annotates the object and the cluster admin consents; the annotation alone adopts nothing.
 */
export function whose(o: {
  exists: boolean;
  ours: boolean;
  annotated: boolean;
  consent: boolean;
}): 'nobody' | 'ours' | 'adoptable' | 'foreign' {
  if (!o.exists) return 'nobody';
  if (o.ours) return 'ours';
  return o.annotated && o.consent ? 'adoptable' : 'foreign';
}

/** Annotation a user sets to let vaultgate take over a Vault object it did not create. */
export const ADOPT_ANNOTATION = 'vaultgate.io/adopt';

export function wantsAdoption(obj: KubeObject): boolean {
  return obj.metadata.annotations?.[ADOPT_ANNOTATION] === 'true';
}

/**
 * Ready message for a Vault object of our derived name that vaultgate did not write: what adoption needs.
 * Both the tenant's annotation and the cluster admin's consent (an enforce VaultGuardrail selecting the
 * namespace with spec.allowAdoption: true); the annotation alone adopts nothing.
 */
export function notOwnedMessage(what: string, kind: string, namespace: string, annotated: boolean): string {
  const consent = `an enforce VaultGuardrail selecting namespace "${namespace}" with spec.allowAdoption: true`;
  return annotated
    ? `${what} exists and was not written by vaultgate for this object; it is left untouched. The ${kind} is annotated ${ADOPT_ANNOTATION}: "true", but adoption also needs the cluster admin's consent: ${consent}`
    : `${what} exists and was not written by vaultgate for this object; it is left untouched. To let vaultgate manage it, annotate the ${kind} with ${ADOPT_ANNOTATION}: "true" (adoption also needs the cluster admin's consent: ${consent})`;
}

/** Someone else's object at our name: Ready=False NotOwned saying what adoption needs, and a Warning; nothing done. */
export function leaveForeign<Op, C>(
  what: string,
  kind: string,
  o: { namespace: string; annotated: boolean },
  extra?: Record<string, unknown>,
): VaultObjectPlan<Op, C> {
  const message = notOwnedMessage(what, kind, o.namespace, o.annotated);
  return {
    decision: 'leave-foreign',
    steps: [],
    status: { ready: { status: 'False', reason: 'NotOwned', message }, conditions: [], ...(extra ? { extra } : {}) },
    events: [{ type: 'Warning', reason: 'NotOwned', note: message }],
  };
}

export type WriteKind = 'create' | 'update' | 'repair' | 'adopt';

/** What each kind of write is reported as: Event reason and type, audit action. */
const WRITES: Record<WriteKind, { reason: string; type: PlannedEvent['type']; audit: VaultWriteAction }> = {
  create: { reason: 'Created', type: 'Normal', audit: 'create' },
  update: { reason: 'Updated', type: 'Normal', audit: 'update' },
  repair: { reason: 'DriftRepaired', type: 'Warning', audit: 'repair' },
  adopt: { reason: 'Adopted', type: 'Normal', audit: 'adopt' },
};

/** A write of the desired content, with its Event and audit record. */
export function writeStep<Op, C>(
  op: Op,
  kind: WriteKind,
  note: string,
  content: C,
  change?: string,
): PlannedStep<Op, C> {
  const w = WRITES[kind];
  return {
    op,
    event: { type: w.type, reason: w.reason, note },
    audit: { action: w.audit, reason: note, content, ...(change ? { change } : {}) },
  };
}

/** A delete of ours, with its Event and audit record (reason: the Event's note unless given). */
export function deleteStep<Op, C>(
  op: Op,
  event: PlannedEvent,
  audit: { reason?: string; change?: string } = {},
): PlannedStep<Op, C> {
  return {
    op,
    event: { ...event, action: 'Delete' },
    audit: { action: 'delete', reason: audit.reason ?? event.note, ...(audit.change ? { change: audit.change } : {}) },
  };
}

/** A refusal's Warning Event, only when Ready changes: the re-check runs every drift period. */
export function refusalEvents(before: { reason?: string; message?: string } | undefined, ready: Ready): PlannedEvent[] {
  if (before?.reason === ready.reason && before.message === ready.message) return [];
  return [{ type: 'Warning', reason: ready.reason, note: ready.message }];
}

/** Reason of a kind's ownership condition (status False) after vaultgate removed its object because the spec is refused. */
export const REVOKED_REASON = 'Revoked';

/** The ownership condition as stored says vaultgate removed its object because the spec was refused. */
export function wasRevoked(owned: { status: string; reason: string } | undefined): boolean {
  return owned?.status === 'False' && owned.reason === REVOKED_REASON;
}

/** The ownership condition `type` once vaultgate removed `what` (e.g. "Vault role r") because the spec is refused. */
export function revokedCondition(type: string, what: string): ConditionInput {
  return {
    type,
    status: 'False',
    reason: REVOKED_REASON,
    message: `vaultgate removed the ${what} it had written, because the spec is refused`,
  };
}

/** The delete that takes ours back because the spec is refused: a Warning AccessRevoked, audited as a delete. */
export function revokeStep<Op, C>(op: Op, note: string, change?: string): PlannedStep<Op, C> {
  return deleteStep(op, { type: 'Warning', reason: 'AccessRevoked', note }, { change });
}

/**
 * A refused spec's plan: Vault must hold nothing from the object. `revoke` removes ours (decision revoke when
 * there was ours); Ready=False with the refusal's reason, and its Warning only when Ready changes.
 */
export function refusedPlan<Op, C>(p: {
  refusal: Refusal;
  message: string;
  ours: boolean;
  revoke: Array<PlannedStep<Op, C>>;
  conditions: ConditionInput[];
  extra?: Record<string, unknown>;
  before: { reason?: string; message?: string } | undefined;
}): VaultObjectPlan<Op, C> {
  const ready: Ready = { status: 'False', reason: p.refusal.reason, message: p.message };
  return {
    decision: p.ours ? 'revoke' : 'refuse',
    steps: p.revoke,
    status: { ready, conditions: p.conditions, ...(p.extra ? { extra: p.extra } : {}) },
    events: refusalEvents(p.before, ready),
  };
}

/** Ready after a failed Vault call, from `failure` and the error's safe reason and text. */
export function failedReady(failure: VaultFailure, errorReason: string, errorText: string): Ready {
  return {
    status: 'False',
    reason: failure.reason ?? errorReason,
    message: `${failure.before}${errorText}${failure.after}`,
  };
}
