// What the VaultPolicy reconciler does to `sys/policies/acl/<name>`, decided from what it observed. Pure.
// Ownership is the header policy/render.ts writes, or our own VaultPolicyOwned=True record (a header
// stripped in Vault must not turn a policy we own, maybe now wider, into someone else's we leave alone).
import { parsePolicyText } from '../../policy/parse.ts';
import { policiesEquivalent, type OwnershipVerdict } from '../../policy/ownership.ts';
import type { AclRule } from '../../policy/acl.ts';
import { summariseRuleWidening } from '../../policy/widening.ts';
import type { ConditionInput } from '../../kube/conditions.ts';
import * as vaultObject from './vault-object-plan.ts';

/** Status condition recording that vaultgate wrote the Vault policy (survives a stripped header). */
export const OWNED_CONDITION = 'VaultPolicyOwned';

/** The policy text the spec renders to (ownership header included), or why the spec is refused. */
export type PolicyDesired = { rendered: string } | { refused: vaultObject.Refusal };

export interface PolicyObserved {
  /** The Vault policy name (`<prefix>.<namespace>.<name>`). */
  name: string;
  namespace: string;
  /** The policy text in Vault; undefined: no such policy. */
  stored?: string;
  /**
   * The ownership header of `stored`: this object (`owned`), an earlier object of the same namespace and
   * name (`owned-previous`: rewritten, never deleted), or none of ours (`foreign`).
   */
  header: OwnershipVerdict;
  /** VaultPolicyOwned: True (we wrote it) / False with reason Revoked (we removed it) / absent. */
  owned?: { status: string; reason: string };
  /** The tenant's `vaultgate.io/adopt: "true"`, and the cluster admin's consent for the namespace. */
  annotated: boolean;
  consent: boolean;
  /** Ready=True for the current generation: this spec was made effective before. */
  syncedBefore: boolean;
  /** Ready as it is now. */
  ready?: { reason: string; message: string };
}

export type PolicyOp = { write: string } | 'delete';
export type PolicyPlan = vaultObject.VaultObjectPlan<PolicyOp, string>;

export function planVaultPolicy(desired: PolicyDesired, o: PolicyObserved): PolicyPlan {
  if ('refused' in desired) return planRefused(desired.refused, o);
  const { rendered } = desired;
  const claimed = o.owned?.status === 'True';
  const owner = vaultObject.whose({
    exists: o.stored !== undefined,
    ours: o.header !== 'foreign' || claimed,
    annotated: o.annotated,
    consent: o.consent,
  });
  if (owner === 'foreign') return vaultObject.leaveForeign(`Vault policy "${o.name}"`, 'VaultPolicy', o);
  const synced = {
    ready: { status: 'True' as const, reason: 'Synced', message: `Vault policy ${o.name} matches the spec` },
    conditions: [ownedWritten(o.name)],
  };
  if (o.stored === undefined)
    return {
      decision: 'create',
      steps: [vaultObject.writeStep({ write: rendered }, 'create', `created Vault policy ${o.name}`, rendered)],
      status: synced,
      events: [],
    };
  if (policiesEquivalent(rendered, o.stored)) return { decision: 'noop', steps: [], status: synced, events: [] };
  const [kind, note]: [vaultObject.WriteKind, string] =
    o.header === 'foreign' && claimed
      ? ['repair', `Vault policy ${o.name} was replaced outside vaultgate (ownership header removed); restored`]
      : owner === 'adoptable'
        ? ['adopt', `adopted and rewrote Vault policy ${o.name}`]
        : o.header === 'owned' && o.syncedBefore
          ? ['repair', `Vault policy ${o.name} was changed outside vaultgate; restored`]
          : ['update', `updated Vault policy ${o.name}`];
  return {
    decision: kind,
    steps: [vaultObject.writeStep({ write: rendered }, kind, note, rendered, accessChange(o.stored, rendered))],
    status: synced,
    events: [],
  };
}

/**
 * The spec is refused: Vault must hold nothing from this object. A policy vaultgate wrote (header, or our
 * VaultPolicyOwned claim) is removed; anyone else's is left alone. The reconciler re-checks on the drift
 * period, so an allowed spec (or a relaxed guardrail) writes it again.
 */
function planRefused(refusal: vaultObject.Refusal, o: PolicyObserved): PolicyPlan {
  const why = refusal.message;
  const ours = o.stored !== undefined && (o.header === 'owned' || o.owned?.status === 'True');
  const foreign = o.stored !== undefined && !ours;
  const revoked = ours || (!foreign && vaultObject.wasRevoked(o.owned));
  const message = foreign
    ? `not written to Vault: ${why}. Vault policy ${o.name} exists but was not written by vaultgate for this object; it is left untouched`
    : revoked
      ? `the Vault policy ${o.name} was removed because the spec is refused: ${why}. Nothing from this VaultPolicy is in force in Vault; vaultgate writes the policy again once the spec is allowed`
      : `not written to Vault: ${why}`;
  const removal = `removed Vault policy ${o.name} because the spec is refused (${refusal.reason}); its access is taken back`;
  return vaultObject.refusedPlan({
    refusal,
    message,
    ours,
    revoke: ours ? [vaultObject.revokeStep<PolicyOp, string>('delete', removal, accessChange(o.stored!, ''))] : [],
    conditions: revoked ? [vaultObject.revokedCondition(OWNED_CONDITION, `Vault policy ${o.name}`)] : [],
    before: o.ready,
  });
}

/** On deletion: only a policy whose header names this object is removed. */
export function planVaultPolicyCleanup(
  o: Pick<PolicyObserved, 'name' | 'namespace' | 'stored' | 'header'> & { objectName: string },
): PolicyPlan {
  if (o.stored === undefined) return { decision: 'keep', steps: [], events: [] };
  if (o.header !== 'owned') {
    return {
      decision: 'keep',
      steps: [],
      events: [
        {
          type: 'Normal',
          reason: 'NotDeleted',
          note: `Vault policy ${o.name} was not written by vaultgate for this object; left in place`,
          action: 'Delete',
        },
      ],
    };
  }
  const event = { type: 'Normal' as const, reason: 'Deleted', note: `deleted Vault policy ${o.name}` };
  return {
    decision: 'delete',
    steps: [
      vaultObject.deleteStep('delete', event, {
        reason: `deleted Vault policy ${o.name}: VaultPolicy ${o.namespace}/${o.objectName} was deleted`,
      }),
    ],
    events: [],
  };
}

/** What Ready says when a Vault call fails, for this desired state. */
export function policyVaultFailure(desired: PolicyDesired | 'deleting', name: string): vaultObject.VaultFailure {
  return vaultObject.vaultFailure('policy', desired, name);
}

function ownedWritten(name: string): ConditionInput {
  return {
    type: OWNED_CONDITION,
    status: 'True',
    reason: 'Written',
    message: `vaultgate wrote Vault policy ${name}: it repairs drift and deletes it with this object`,
  };
}

/** What a rewrite changes in access, both ways (e.g. a drift repair that takes back an out-of-band grant). */
export function accessChange(stored: string, rendered: string): string | undefined {
  const before = parsePolicyText(stored);
  const after = parsePolicyText(rendered);
  if (!before.ok || !after.ok) return undefined;
  const b = before.rules.map((r) => r.rule as AclRule);
  const a = after.rules.map((r) => r.rule as AclRule);
  const grants = summariseRuleWidening(b, a)?.replace(/^widens access: /, 'grants ');
  const takesBack = summariseRuleWidening(a, b)?.replace(/^widens access: /, 'takes back ');
  return [grants, takesBack].filter(Boolean).join('; ') || undefined;
}
