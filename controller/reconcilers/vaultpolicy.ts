// VaultPolicy → `sys/policies/acl/<prefix>.<namespace>.<name>`.
// Level-triggered: read Vault, compare with the rendered policy, write only the difference. A periodic,
// jittered re-read repairs out-of-band edits (Event DriftRepaired). Ownership is the header written by
// policy/render.ts: a policy vaultgate did not write is never overwritten or deleted unless the object
// carries `vaultgate.io/adopt: "true"` *and* the cluster admin consents (an enforce VaultGuardrail selecting
// the namespace with `spec.allowAdoption: true`). The admission rules run again here before anything is
// written, with the current guardrails and namespace labels.
//
// Tightening takes access back: when the re-check refuses a spec whose policy vaultgate already wrote
// (guardrail tightened, namespace relabelled, floor no longer relaxed), the policy vaultgate owns is
// removed from Vault (not shrunk: the simplest state that is certainly allowed), Ready=False says so,
// and the periodic re-check keeps running. A Vault policy vaultgate did not write is never removed.
import { parsePolicyText } from '../../policy/parse.ts';
import { specRules } from '../../policy/spec-rules.ts';
import { ownershipOf, policiesEquivalent } from '../../policy/ownership.ts';
import { renderPolicy, type PolicyRule } from '../../policy/render.ts';
import { vaultName } from '../../schemas/vault-names.ts';
import type { VaultPolicySpec } from '../../schemas/types.ts';
import { withFinalizer } from '../../kube/finalizer.ts';
import { getCondition } from '../../kube/conditions.ts';
import type { Condition, KubeObject } from '../../kube/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { NAMESPACES } from '../../kube/resources.ts';
import { VAULT_GUARDRAILS, VAULT_POLICIES } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import { admissionContext } from './admission-context.ts';
import type { AclRule } from '../../policy/acl.ts';
import { summariseRuleWidening } from '../../policy/widening.ts';
import type { VaultWriteAction } from '../../trail/record.ts';
import { adoptionConsent } from '../../webhook/rules/guardrails.ts';
import { assertAdmitted, buildStatus, jittered, notOwnedMessage, reasonOf, safeMessage, SafeError, wantsAdoption, type StatusInput, type VaultObjectDeps } from './common.ts';

export interface VaultPolicyObject extends KubeObject {
  spec: VaultPolicySpec;
}

/** The same inputs as the VaultRoleBinding reconciler (common.ts VaultObjectDeps). */
export type VaultPolicyDeps = VaultObjectDeps;

/** The rules the spec stands for, `{{namespace}}` expanded (policy/spec-rules.ts); a bad spec → SafeError. */
export function rulesOf(spec: VaultPolicySpec, namespace: string): PolicyRule[] {
  const { rules, errors } = specRules(spec as unknown as Record<string, unknown>, namespace);
  if (errors) throw new SafeError('InvalidSpec', errors.join('; '));
  return rules as PolicyRule[];
}

/** What a rewrite changes in access, both ways (e.g. a drift repair that takes back an out-of-band grant). */
function accessChange(stored: string, rendered: string): string | undefined {
  const before = parsePolicyText(stored);
  const after = parsePolicyText(rendered);
  if (!before.ok || !after.ok) return undefined;
  const b = before.rules.map((r) => r.rule as AclRule);
  const a = after.rules.map((r) => r.rule as AclRule);
  const grants = summariseRuleWidening(b, a)?.replace(/^widens access: /, 'grants ');
  const takesBack = summariseRuleWidening(a, b)?.replace(/^widens access: /, 'takes back ');
  return [grants, takesBack].filter(Boolean).join('; ') || undefined;
}

/** Status condition recording that vaultgate wrote the Vault policy (survives a stripped header). */
export const OWNED_CONDITION = 'VaultPolicyOwned';
/** OWNED_CONDITION reason (status False) after vaultgate removed its policy because the spec is refused. */
export const REVOKED_REASON = 'Revoked';

export function createVaultPolicyReconciler(deps: VaultPolicyDeps): Reconciler {
  const now = deps.now ?? (() => new Date());
  const driftMs = deps.driftCheckMs ?? 300_000;

  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const obj = ctx.cache<VaultPolicyObject>(VAULT_POLICIES).get(key);
    if (!obj) return DONE;
    const ns = obj.metadata.namespace ?? '';
    const name = vaultName(deps.namePrefix, ns, obj.metadata.name);
    const owner = { namespace: ns, name: obj.metadata.name, uid: obj.metadata.uid ?? '' };
    const audited = (action: VaultWriteAction, reason: string, content?: string, change?: string): void => {
      deps.onVaultWrite?.({ action, object: 'policy', vaultName: name, owner: { kind: 'VaultPolicy', ...owner }, reason, ...(content !== undefined ? { content } : {}), ...(change ? { change } : {}) });
    };

    const writeStatus = async (input: StatusInput): Promise<void> => {
      await applyStatus(ctx.client, VAULT_POLICIES, obj, buildStatus(obj, { ...input, extra: { vaultName: name, ...input.extra } }, now()));
    };

    const conditionsOf = (o: KubeObject): Condition[] | undefined => (o.status as { conditions?: Condition[] } | undefined)?.conditions;

    /**
     * The spec is refused: make Vault hold nothing from this object. A policy vaultgate wrote (ownership
     * header, or our own VaultPolicyOwned claim) is removed; anything else is left alone. Re-checked on
     * the drift period, so an allowed spec (or a relaxed guardrail) writes it again.
     */
    const refuse = async (current: VaultPolicyObject, err: unknown): Promise<Result> => {
      const reason = reasonOf(err, 'InvalidSpec');
      const why = safeMessage(err);
      const ownedCond = getCondition(conditionsOf(current), OWNED_CONDITION);
      let removed = false;
      let foreign = false;
      try {
        const stored = await deps.sys.readPolicy(name);
        if (stored !== undefined) {
          if (ownershipOf(stored, owner) === 'owned' || ownedCond?.status === 'True') {
            await deps.sys.deletePolicy(name);
            removed = true;
            const note = `removed Vault policy ${name} because the spec is refused (${reason}); its access is taken back`;
            ctx.events.record(current, { type: 'Warning', reason: 'AccessRevoked', note, action: 'Delete' });
            audited('delete', note, undefined, accessChange(stored, ''));
          } else {
            foreign = true;
          }
        }
      } catch (vaultErr) {
        const message = `${why}; the Vault policy ${name} vaultgate wrote earlier may still be in force: cannot remove it yet (${safeMessage(vaultErr)}); retrying`;
        await writeStatus({ ready: { status: 'False', reason, message } });
        throw vaultErr;
      }
      const revoked = removed || (!foreign && ownedCond?.status === 'False' && ownedCond.reason === REVOKED_REASON);
      const message = foreign
        ? `not written to Vault: ${why}. Vault policy ${name} exists but was not written by vaultgate for this object; it is left untouched`
        : revoked
          ? `the Vault policy ${name} was removed because the spec is refused: ${why}. Nothing from this VaultPolicy is in force in Vault; vaultgate writes the policy again once the spec is allowed`
          : `not written to Vault: ${why}`;
      const before = getCondition(conditionsOf(current), 'Ready');
      await writeStatus({
        ready: { status: 'False', reason, message },
        conditions: revoked ? [{ type: OWNED_CONDITION, status: 'False', reason: REVOKED_REASON, message: `vaultgate removed the Vault policy ${name} it had written, because the spec is refused` }] : [],
      });
      if (before?.reason !== reason || before.message !== message) ctx.events.record(current, { type: 'Warning', reason, note: message });
      // Keep re-checking: drift repair of a refused object means "nothing of ours in Vault".
      return requeueAfter(jittered(driftMs, obj.metadata.uid));
    };

    return withFinalizer(ctx.client, VAULT_POLICIES, obj, {
      apply: async (current) => {
        let rendered: string;
        const actx = admissionContext({
          guardrails: tryCache(ctx, VAULT_GUARDRAILS), namespaces: tryCache(ctx, NAMESPACES),
          namePrefix: deps.namePrefix, controllerClass: deps.controllerClass ?? '',
        });
        try {
          assertAdmitted(current, name, actx);
          rendered = renderPolicy(rulesOf(current.spec, current.metadata.namespace ?? ''), owner);
        } catch (err) {
          // A spec problem: nothing of ours may stay in Vault; re-checked on the drift period.
          return refuse(current, err);
        }

        let stored: string | undefined;
        try {
          stored = await deps.sys.readPolicy(name);
          if (stored !== undefined) {
            const verdict = ownershipOf(stored, owner);
            // Our own record that we wrote this policy: a header stripped in Vault must not turn a policy
            // we own (maybe now wider) into someone else's that we leave alone.
            const claimed = getCondition(conditionsOf(current), OWNED_CONDITION)?.status === 'True';
            const consent = wantsAdoption(current) ? adoptionConsent(ns, actx) : undefined;
            if (verdict === 'foreign' && !claimed && consent === undefined) {
              const message = notOwnedMessage(`Vault policy "${name}"`, 'VaultPolicy', ns, wantsAdoption(current));
              await writeStatus({ ready: { status: 'False', reason: 'NotOwned', message } });
              ctx.events.record(current, { type: 'Warning', reason: 'NotOwned', note: message });
              return requeueAfter(jittered(driftMs, obj.metadata.uid));
            }
            if (!policiesEquivalent(rendered, stored)) {
              await deps.sys.writePolicy(name, rendered);
              const syncedBefore = verdict === 'owned' && isSyncedFor(current);
              const [reason, note] = verdict === 'foreign' && claimed ? ['DriftRepaired', `Vault policy ${name} was replaced outside vaultgate (ownership header removed); restored`]
                : verdict === 'foreign' ? ['Adopted', `adopted and rewrote Vault policy ${name}`]
                : syncedBefore ? ['DriftRepaired', `Vault policy ${name} was changed outside vaultgate; restored`]
                : ['Updated', `updated Vault policy ${name}`];
              ctx.events.record(current, { type: reason === 'DriftRepaired' ? 'Warning' : 'Normal', reason, note });
              audited(reason === 'DriftRepaired' ? 'repair' : reason === 'Adopted' ? 'adopt' : 'update', note, rendered, accessChange(stored, rendered));
            }
          } else {
            await deps.sys.writePolicy(name, rendered);
            ctx.events.record(current, { type: 'Normal', reason: 'Created', note: `created Vault policy ${name}` });
            audited('create', `created Vault policy ${name}`, rendered);
          }
        } catch (err) {
          await writeStatus({ ready: { status: 'False', reason: reasonOf(err, 'VaultError'), message: `cannot sync Vault policy ${name}: ${safeMessage(err)}` } });
          throw err;
        }
        await writeStatus({
          ready: { status: 'True', reason: 'Synced', message: `Vault policy ${name} matches the spec` },
          conditions: [{ type: OWNED_CONDITION, status: 'True', reason: 'Written', message: `vaultgate wrote Vault policy ${name}: it repairs drift and deletes it with this object` }],
        });
        return requeueAfter(jittered(driftMs, obj.metadata.uid));
      },

      cleanup: async (current) => {
        try {
          const stored = await deps.sys.readPolicy(name);
          if (stored === undefined) return;
          if (ownershipOf(stored, owner) === 'owned') {
            await deps.sys.deletePolicy(name);
            ctx.events.record(current, { type: 'Normal', reason: 'Deleted', note: `deleted Vault policy ${name}`, action: 'Delete' });
            audited('delete', `deleted Vault policy ${name}: VaultPolicy ${ns}/${current.metadata.name} was deleted`);
          } else {
            ctx.events.record(current, { type: 'Normal', reason: 'NotDeleted', note: `Vault policy ${name} was not written by vaultgate for this object; left in place`, action: 'Delete' });
          }
        } catch (err) {
          // Keep the finalizer: the runtime retries with backoff; the status says why deletion waits.
          await writeStatus({ ready: { status: 'False', reason: reasonOf(err, 'VaultError'), message: `deleting: cannot remove Vault policy ${name} yet (${safeMessage(err)}); retrying` } }).catch(() => undefined);
          throw err;
        }
      },
    });
  };
}

/** Ready=True for the current generation: vaultgate already made this spec effective once. */
function isSyncedFor(obj: KubeObject): boolean {
  const status = obj.status as { conditions?: Array<{ type: string; status: string; observedGeneration?: number }> } | undefined;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === obj.metadata.generation;
}

/** A cache the controller may not watch (e.g. namespaces in a namespace-scoped install): undefined then. */
export function tryCache(ctx: ReconcileContext, res: Parameters<ReconcileContext['cache']>[0]): ReturnType<ReconcileContext['cache']> | undefined {
  try {
    return ctx.cache(res);
  } catch {
    return undefined;
  }
}
