// VaultRoleBinding → kubernetes-auth role `auth/<mount>/role/<prefix>.<namespace>.<name>`.
//
// Which policies are bound: only referenced VaultPolicies that are Ready for their current generation.
// A VaultPolicy that is missing, NotOwned or refused by a guardrail names a Vault policy whose content
// vaultgate did not write (or that does not exist yet); binding that name would grant whatever someone
// else put there. So the role is written with the Ready subset (fail closed) and Ready=False says which
// are missing (PolicyNotFound) or not ready (PolicyNotReady); a VaultPolicy event re-enqueues its
// dependents through the `policy` index, so the binding converges by itself when they become Ready.
//
// Ownership: Vault roles carry no comment or metadata, so ownership is recorded on our side, *before*
// the first write: the condition VaultRoleOwned=True (reason Created or Adopted) is stored in status,
// then the role is created. A crash between the two leaves a claim and no role (next run creates it),
// never a role we cannot prove is ours. A role that exists without our claim is NotOwned until the user
// sets `vaultgate.io/adopt: "true"` and the cluster admin consents (an enforce VaultGuardrail selecting the
// namespace with `spec.allowAdoption: true`); only owned roles are ever overwritten or deleted.
//
// Tightening takes access back: when the re-check refuses a binding whose role vaultgate already wrote
// (maxTokenTTL lowered, requireAudience added, namespace relabelled), the role vaultgate owns is removed
// from Vault (no new logins; tokens already issued live until their TTL ends), VaultRoleOwned turns False
// (reason Revoked), Ready=False says so, and the periodic re-check keeps running.
import { vaultName } from '../../schemas/vault-names.ts';
import type { VaultRoleBindingSpec } from '../../schemas/types.ts';
import { getCondition, isReady } from '../../kube/conditions.ts';
import { withFinalizer } from '../../kube/finalizer.ts';
import type { Condition, KubeObject } from '../../kube/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { NAMESPACES } from '../../kube/resources.ts';
import { VAULT_GUARDRAILS, VAULT_POLICIES, VAULT_ROLE_BINDINGS } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import { admissionContext } from './admission-context.ts';
import { assertAdmitted, buildStatus, jittered, notOwnedMessage, reasonOf, safeMessage, SafeError, wantsAdoption, type StatusInput, type VaultObjectDeps } from './common.ts';
import { adoptionConsent } from '../../webhook/rules/guardrails.ts';
import type { VaultWriteAction } from '../../trail/record.ts';
import { DEFAULT_AUTH_MOUNT, desiredRole, normaliseMount, roleDifferences, roleMatches, type DesiredRole } from '../../policy/role.ts';
import { tryCache } from './vaultpolicy.ts';

export const OWNED_CONDITION = 'VaultRoleOwned';
/** OWNED_CONDITION reason (status False) after vaultgate removed its role because the spec is refused. */
export const REVOKED_REASON = 'Revoked';
/** Index on VaultRoleBindings: `namespace/policyName` for every policy a binding names. */
export const POLICY_INDEX = 'policy';

export interface VaultRoleBindingObject extends KubeObject {
  spec: VaultRoleBindingSpec;
}

export function policyIndex(obj: KubeObject): string[] {
  const spec = (obj as VaultRoleBindingObject).spec;
  return (spec?.policies ?? []).map((p) => `${obj.metadata.namespace}/${p}`);
}

/** The same inputs as the VaultPolicy reconciler (common.ts VaultObjectDeps). */
export type VaultRoleBindingDeps = VaultObjectDeps;

export function createVaultRoleBindingReconciler(deps: VaultRoleBindingDeps): Reconciler {
  const now = deps.now ?? (() => new Date());
  const driftMs = deps.driftCheckMs ?? 300_000;
  // Claims written but maybe not yet visible in the cache (uid set): the cache is eventually consistent.
  const claimed = new Set<string>();

  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const obj = ctx.cache<VaultRoleBindingObject>(VAULT_ROLE_BINDINGS).get(key);
    if (!obj) return DONE;
    const ns = obj.metadata.namespace ?? '';
    const uid = obj.metadata.uid ?? '';
    const name = vaultName(deps.namePrefix, ns, obj.metadata.name);
    const audited = (action: VaultWriteAction, mount: string, reason: string, content?: Record<string, unknown>): void => {
      deps.onVaultWrite?.({ action, object: 'role', vaultName: name, mount, owner: { kind: 'VaultRoleBinding', namespace: ns, name: obj.metadata.name, uid }, reason, ...(content ? { content } : {}) });
    };
    const status = (obj.status ?? {}) as { authMount?: string; conditions?: Condition[] };
    const ownedInStatus = getCondition(status.conditions, OWNED_CONDITION)?.status === 'True';
    const owned = (): boolean => ownedInStatus || claimed.has(uid);

    const writeStatus = async (input: StatusInput, mount: string | undefined, ownedReason?: string): Promise<void> => {
      // Without a reason the existing conditions (and any earlier claim) are carried over as they are.
      const ownedCond = ownedReason === REVOKED_REASON
        ? [{ type: OWNED_CONDITION, status: 'False' as const, reason: REVOKED_REASON, message: `vaultgate removed the Vault role ${name} it had written, because the spec is refused` }]
        : ownedReason ? [{ type: OWNED_CONDITION, status: 'True' as const, reason: ownedReason, message: `vaultgate created or adopted the Vault role ${name}` }] : [];
      const built = buildStatus(obj, { ...input, conditions: ownedCond, extra: { vaultName: name, ...(mount ? { authMount: mount } : {}) } }, now());
      await applyStatus(ctx.client, VAULT_ROLE_BINDINGS, obj, built);
    };
    const ownedReasonNow = (): string | undefined => getCondition(status.conditions, OWNED_CONDITION)?.reason ?? (claimed.has(uid) ? 'Created' : undefined);

    /**
     * The spec is refused: make Vault hold nothing from this object. The role vaultgate owns (our claim in
     * status) is removed from the mount it was written to; a role we do not own is left alone. Re-checked
     * on the drift period, so an allowed spec (or a relaxed guardrail) writes it again.
     */
    const refuse = async (current: VaultRoleBindingObject, err: unknown): Promise<Result> => {
      const reason = reasonOf(err, 'InvalidSpec');
      const why = safeMessage(err);
      const ownedCond = getCondition(status.conditions, OWNED_CONDITION);
      let removed = false;
      if (owned()) {
        const mount = normaliseMount(status.authMount ?? desiredMount(current.spec));
        try {
          if (await deps.sys.readKubernetesRole(mount, name)) {
            await deps.sys.deleteKubernetesRole(mount, name);
            const note = `removed Vault role ${name} from auth/${mount} because the spec is refused (${reason}); no new logins through it`;
            ctx.events.record(current, { type: 'Warning', reason: 'AccessRevoked', note, action: 'Delete' });
            audited('delete', mount, note);
          }
          removed = true;
          claimed.delete(uid);
        } catch (vaultErr) {
          const message = `${why}; the Vault role ${name} vaultgate wrote earlier may still be in force: cannot remove it yet (${safeMessage(vaultErr)}); retrying`;
          await writeStatus({ ready: { status: 'False', reason, message } }, status.authMount, ownedReasonNow());
          throw vaultErr;
        }
      }
      const revoked = removed || (ownedCond?.status === 'False' && ownedCond.reason === REVOKED_REASON);
      const message = revoked
        ? `the Vault role ${name} was removed because the spec is refused: ${why}. No login through this VaultRoleBinding is possible (tokens already issued keep their policies until their TTL ends); vaultgate writes the role again once the spec is allowed`
        : `not written to Vault: ${why}`;
      const before = getCondition(status.conditions, 'Ready');
      await writeStatus({ ready: { status: 'False', reason, message } }, revoked ? undefined : status.authMount, revoked ? REVOKED_REASON : ownedReasonNow());
      if (before?.reason !== reason || before.message !== message) ctx.events.record(current, { type: 'Warning', reason, note: message });
      // Keep re-checking: drift repair of a refused object means "nothing of ours in Vault".
      return requeueAfter(jittered(driftMs, uid));
    };

    return withFinalizer(ctx.client, VAULT_ROLE_BINDINGS, obj, {
      apply: async (current) => {
        let desired: DesiredRole;
        const missing: string[] = [];
        const notReady: string[] = [];
        const actx = admissionContext({
          guardrails: tryCache(ctx, VAULT_GUARDRAILS), namespaces: tryCache(ctx, NAMESPACES), policies: tryCache(ctx, VAULT_POLICIES),
          namePrefix: deps.namePrefix, controllerClass: deps.controllerClass ?? '',
        });
        try {
          assertAdmitted(current, name, actx);
          const policies = ctx.cache(VAULT_POLICIES);
          const bound: string[] = [];
          for (const p of current.spec.policies) {
            const vp = policies.get(`${ns}/${p}`);
            if (!vp) missing.push(p);
            else if (vp.metadata.deletionTimestamp || !isReady((vp.status as { conditions?: Condition[] } | undefined)?.conditions, vp.metadata.generation)) notReady.push(p);
            else bound.push(vaultName(deps.namePrefix, ns, p));
          }
          try {
            desired = desiredRole(ns, current.spec, bound);
          } catch (e) {
            throw new SafeError('InvalidSpec', (e as Error).message);
          }
        } catch (err) {
          // A spec problem: nothing of ours may stay in Vault; re-checked on the drift period.
          return refuse(current, err);
        }

        let ownedReason = ownedReasonNow();
        try {
          // authMount changed: remove our role from the old mount first (only if it is ours).
          if (status.authMount && normaliseMount(status.authMount) !== desired.mount && owned()) {
            await deps.sys.deleteKubernetesRole(normaliseMount(status.authMount), name);
            ctx.events.record(current, { type: 'Normal', reason: 'Moved', note: `removed Vault role ${name} from auth mount ${status.authMount}` });
            audited('delete', normaliseMount(status.authMount), `spec.authMount changed to ${desired.mount}`);
          }
          const actual = await deps.sys.readKubernetesRole(desired.mount, name);
          if (actual && !owned() && (!wantsAdoption(current) || adoptionConsent(ns, actx) === undefined)) {
            const message = notOwnedMessage(`Vault role ${name} on auth/${desired.mount}`, 'VaultRoleBinding', ns, wantsAdoption(current));
            await writeStatus({ ready: { status: 'False', reason: 'NotOwned', message } }, status.authMount, undefined);
            ctx.events.record(current, { type: 'Warning', reason: 'NotOwned', note: message });
            return requeueAfter(jittered(driftMs, uid));
          }
          if (!owned()) {
            // Claim before writing (see the header): a crash after this line still proves ownership.
            ownedReason = actual ? 'Adopted' : 'Created';
            await writeStatus({ ready: { status: 'Unknown', reason: 'Writing', message: `writing Vault role ${name}` } }, desired.mount, ownedReason);
            claimed.add(uid);
          }
          if (!roleMatches(desired.body, actual)) {
            await deps.sys.writeKubernetesRole(desired.mount, name, desired.body);
            // Drift: we already wrote this generation of the spec here, and Vault no longer says so.
            const drift = actual && ownedInStatus && (obj.status as { observedGeneration?: number } | undefined)?.observedGeneration === current.metadata.generation && status.authMount === desired.mount;
            const note = !actual ? `created Vault role ${name} on auth/${desired.mount}`
              : drift ? `Vault role ${name} was changed outside vaultgate (${roleDifferences(desired.body, actual).join(', ')}); restored`
              : `updated Vault role ${name}`;
            ctx.events.record(current, { type: drift ? 'Warning' : 'Normal', reason: !actual ? 'Created' : drift ? 'DriftRepaired' : 'Updated', note });
            audited(!actual ? 'create' : drift ? 'repair' : ownedReason === 'Adopted' && !ownedInStatus ? 'adopt' : 'update', desired.mount, note, desired.body);
          }
        } catch (err) {
          await writeStatus({ ready: { status: 'False', reason: reasonOf(err, 'VaultError'), message: `cannot sync Vault role ${name}: ${safeMessage(err)}` } }, status.authMount ?? desired.mount, ownedReason);
          throw err;
        }

        const ready: StatusInput['ready'] = missing.length > 0
          ? { status: 'False', reason: 'PolicyNotFound', message: `VaultPolicy ${missing.join(', ')} not found in namespace ${ns}; the role is written without ${missing.length === 1 ? 'it' : 'them'} and updated when ${missing.length === 1 ? 'it appears' : 'they appear'}` }
          : notReady.length > 0
            ? { status: 'False', reason: 'PolicyNotReady', message: `VaultPolicy ${notReady.join(', ')} not Ready; the role is written without ${notReady.length === 1 ? 'it' : 'them'} until ${notReady.length === 1 ? 'it is' : 'they are'} written to Vault by vaultgate` }
            : { status: 'True', reason: 'Synced', message: `Vault role ${name} on auth/${desired.mount} matches the spec` };
        await writeStatus({ ready }, desired.mount, ownedReason);
        return requeueAfter(jittered(driftMs, uid));
      },

      cleanup: async (current) => {
        if (!owned()) return;
        const mount = normaliseMount(status.authMount ?? desiredMount(current.spec));
        try {
          await deps.sys.deleteKubernetesRole(mount, name);
          ctx.events.record(current, { type: 'Normal', reason: 'Deleted', note: `deleted Vault role ${name} from auth/${mount}`, action: 'Delete' });
          audited('delete', mount, `deleted Vault role ${name}: VaultRoleBinding ${ns}/${current.metadata.name} was deleted`);
          claimed.delete(uid);
        } catch (err) {
          await writeStatus({ ready: { status: 'False', reason: reasonOf(err, 'VaultError'), message: `deleting: cannot remove Vault role ${name} yet (${safeMessage(err)}); retrying` } }, status.authMount, ownedReasonNow()).catch(() => undefined);
          throw err;
        }
      },
    });
  };
}

function desiredMount(spec: VaultRoleBindingSpec): string {
  return spec.authMount ?? DEFAULT_AUTH_MOUNT;
}
