// What the VaultRoleBinding reconciler does to `auth/<mount>/role/<name>`, decided from what it observed.
// Pure. Vault roles carry no comment or metadata, so ownership is our claim in status (VaultRoleOwned=True,
// reason Created or Adopted), written *before* the first write: a crash between the two leaves a claim and
// no role (the next run creates it), never a role we cannot prove is ours.
import type { ConditionInput } from '../../kube/conditions.ts';
import type { KubernetesAuthRole } from '../../vault/types.ts';
import { normaliseMount, roleDifferences, roleMatches, type DesiredRole } from '../../policy/role.ts';
import * as vaultObject from './vault-object-plan.ts';

export const OWNED_CONDITION = 'VaultRoleOwned';

/**
 * The role the spec stands for, bound only to referenced VaultPolicies Ready for their generation (a
 * missing or refused one names a policy whose content vaultgate did not write), or why the spec is refused.
 */
export type RoleDesired =
  { role: DesiredRole; missing: string[]; notReady: string[] } | { refused: vaultObject.Refusal };

export interface RoleObserved {
  /** The Vault role name (`<prefix>.<namespace>.<name>`). */
  name: string;
  namespace: string;
  /** The mount in status (where vaultgate wrote the role), and the one the spec names (default applied). */
  statusMount?: string;
  specMount: string;
  /** The role at the mount the plan works on: the desired mount, or (refused) where ours is. Undefined: none. */
  actual?: KubernetesAuthRole;
  /** VaultRoleOwned as stored: True with reason Created/Adopted, or False with reason Revoked. */
  owned?: { status: string; reason: string };
  /** A claim written by an earlier reconcile that the cache does not show yet. */
  claimedUnseen: boolean;
  annotated: boolean;
  consent: boolean;
  /** status.observedGeneration is the object's generation: this spec was written before. */
  writtenThisGeneration: boolean;
  ready?: { reason: string; message: string };
}

/** Vault calls, and `claim`: the ownership claim written to status before a role is written. */
export type RoleOp =
  | { write: { mount: string; body: DesiredRole['body'] } }
  | { delete: string }
  | { claim: 'Created' | 'Adopted'; mount: string };
export type RolePlan = vaultObject.VaultObjectPlan<RoleOp, Record<string, unknown>> & {
  /** The claim no longer holds (the role is removed): forget the one not yet in the cache. */
  forgetClaim?: boolean;
};

/** Where observe reads the role: the desired mount; when refused, where ours is (nothing to read if none is). */
export function roleMountToRead(
  desired: RoleDesired,
  o: Pick<RoleObserved, 'statusMount' | 'specMount' | 'owned' | 'claimedUnseen'>,
): string | undefined {
  if ('role' in desired) return desired.role.mount;
  return roleIsOurs(o) ? normaliseMount(o.statusMount ?? o.specMount) : undefined;
}

/** Ours: claimed in status, or by an earlier reconcile whose status write the cache has not shown yet. */
export function roleIsOurs(o: Pick<RoleObserved, 'owned' | 'claimedUnseen'>): boolean {
  return o.owned?.status === 'True' || o.claimedUnseen;
}

export function planVaultRoleBinding(desired: RoleDesired, o: RoleObserved): RolePlan {
  if ('refused' in desired) return planRefused(desired.refused, o);
  const { role, missing, notReady } = desired;
  const ours = roleIsOurs(o);
  const owner = vaultObject.whose({ exists: o.actual !== undefined, ours, annotated: o.annotated, consent: o.consent });
  if (owner === 'foreign')
    return vaultObject.leaveForeign(
      `Vault role ${o.name} on auth/${role.mount}`,
      'VaultRoleBinding',
      o,
      mountField(o.statusMount),
    );
  const steps: Array<vaultObject.PlannedStep<RoleOp, Record<string, unknown>>> = [];
  // authMount changed: remove ours from the old mount first.
  if (o.statusMount && normaliseMount(o.statusMount) !== role.mount && ours) {
    steps.push(
      vaultObject.deleteStep(
        { delete: normaliseMount(o.statusMount) },
        { type: 'Normal', reason: 'Moved', note: `removed Vault role ${o.name} from auth mount ${o.statusMount}` },
        { reason: `spec.authMount changed to ${role.mount}` },
      ),
    );
  }
  const claim = ours ? undefined : owner === 'adoptable' ? ('Adopted' as const) : ('Created' as const);
  if (claim) steps.push({ op: { claim, mount: role.mount } });
  const kind = writeKind(o, role, claim);
  if (kind)
    steps.push(
      vaultObject.writeStep(
        { write: { mount: role.mount, body: role.body } },
        kind,
        writeNote(kind, o, role),
        role.body,
      ),
    );
  return {
    decision: kind ?? (claim === 'Adopted' ? 'adopt' : 'noop'),
    steps,
    status: {
      ready: readyOf(o, role, missing, notReady),
      conditions: claimCondition(o, claim),
      extra: mountField(role.mount),
    },
    events: [],
  };
}

function writeKind(
  o: RoleObserved,
  role: DesiredRole,
  claim: 'Created' | 'Adopted' | undefined,
): vaultObject.WriteKind | undefined {
  if (roleMatches(role.body, o.actual)) return undefined;
  if (o.actual === undefined) return 'create';
  // Drift: we already wrote this generation of the spec here, and Vault no longer says so.
  if (o.owned?.status === 'True' && o.writtenThisGeneration && o.statusMount === role.mount) return 'repair';
  return claim === 'Adopted' ? 'adopt' : 'update';
}

function writeNote(kind: vaultObject.WriteKind, o: RoleObserved, role: DesiredRole): string {
  if (kind === 'create') return `created Vault role ${o.name} on auth/${role.mount}`;
  if (kind === 'repair')
    return `Vault role ${o.name} was changed outside vaultgate (${roleDifferences(role.body, o.actual!).join(', ')}); restored`;
  if (kind === 'adopt') return `adopted and rewrote Vault role ${o.name} on auth/${role.mount}`;
  return `updated Vault role ${o.name}`;
}

function readyOf(o: RoleObserved, role: DesiredRole, missing: string[], notReady: string[]): vaultObject.Ready {
  const them = (n: string[], one: string, many: string): string => (n.length === 1 ? one : many);
  if (missing.length > 0) {
    return {
      status: 'False',
      reason: 'PolicyNotFound',
      message: `VaultPolicy ${missing.join(', ')} not found in namespace ${o.namespace}; the role is written without ${them(missing, 'it', 'them')} and updated when ${them(missing, 'it appears', 'they appear')}`,
    };
  }
  if (notReady.length > 0) {
    return {
      status: 'False',
      reason: 'PolicyNotReady',
      message: `VaultPolicy ${notReady.join(', ')} not Ready; the role is written without ${them(notReady, 'it', 'them')} until ${them(notReady, 'it is', 'they are')} written to Vault by vaultgate`,
    };
  }
  return { status: 'True', reason: 'Synced', message: `Vault role ${o.name} on auth/${role.mount} matches the spec` };
}

/**
 * The spec is refused: Vault must hold nothing from this object. The role vaultgate owns is removed from
 * the mount it was written to (no new logins; tokens already issued live until their TTL ends); a role we
 * do not own is left alone. Re-checked on the drift period, so an allowed spec writes it again.
 */
function planRefused(refusal: vaultObject.Refusal, o: RoleObserved): RolePlan {
  const ours = roleIsOurs(o);
  const revoked = ours || vaultObject.wasRevoked(o.owned);
  const message = revoked
    ? `the Vault role ${o.name} was removed because the spec is refused: ${refusal.message}. No login through this VaultRoleBinding is possible (tokens already issued keep their policies until their TTL ends); vaultgate writes the role again once the spec is allowed`
    : `not written to Vault: ${refusal.message}`;
  const mount = normaliseMount(o.statusMount ?? o.specMount);
  const removal = `removed Vault role ${o.name} from auth/${mount} because the spec is refused (${refusal.reason}); no new logins through it`;
  const plan = vaultObject.refusedPlan({
    refusal,
    message,
    ours,
    revoke:
      ours && o.actual !== undefined
        ? [vaultObject.revokeStep<RoleOp, Record<string, unknown>>({ delete: mount }, removal)]
        : [],
    conditions: revoked
      ? [vaultObject.revokedCondition(OWNED_CONDITION, `Vault role ${o.name}`)]
      : claimCondition(o, undefined),
    extra: mountField(revoked ? undefined : o.statusMount),
    before: o.ready,
  });
  return { ...plan, forgetClaim: ours };
}

/** On deletion: only a role we own is removed, from the mount it was written to. */
export function planVaultRoleBindingCleanup(
  o: Pick<RoleObserved, 'name' | 'namespace' | 'statusMount' | 'specMount' | 'owned' | 'claimedUnseen'> & {
    objectName: string;
  },
): RolePlan {
  if (!roleIsOurs(o)) return { decision: 'keep', steps: [], events: [] };
  const mount = normaliseMount(o.statusMount ?? o.specMount);
  const event = { type: 'Normal' as const, reason: 'Deleted', note: `deleted Vault role ${o.name} from auth/${mount}` };
  return {
    decision: 'delete',
    steps: [
      vaultObject.deleteStep({ delete: mount }, event, {
        reason: `deleted Vault role ${o.name}: VaultRoleBinding ${o.namespace}/${o.objectName} was deleted`,
      }),
    ],
    events: [],
    forgetClaim: true,
  };
}

/** What Ready says when a Vault call fails (the status keeps the claim as it stands then). */
export function roleVaultFailure(desired: RoleDesired | 'deleting', name: string): vaultObject.VaultFailure {
  return vaultObject.vaultFailure('role', desired, name);
}

/** The ownership condition to write: the claim made now, else the one standing (stored, or not yet seen). */
export function claimCondition(
  o: Pick<RoleObserved, 'name' | 'owned' | 'claimedUnseen'>,
  claim: string | undefined,
): ConditionInput[] {
  const reason = claim ?? o.owned?.reason ?? (o.claimedUnseen ? 'Created' : undefined);
  if (reason === undefined) return [];
  if (reason === vaultObject.REVOKED_REASON)
    return [vaultObject.revokedCondition(OWNED_CONDITION, `Vault role ${o.name}`)];
  return [
    { type: OWNED_CONDITION, status: 'True', reason, message: `vaultgate created or adopted the Vault role ${o.name}` },
  ];
}

function mountField(mount: string | undefined): Record<string, unknown> {
  return mount ? { authMount: mount } : {};
}
