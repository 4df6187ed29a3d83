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
import { specRules } from '../../policy/spec-rules.ts';
import { ownershipOf, type OwnershipVerdict } from '../../policy/ownership.ts';
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
import type { AdmissionContext } from '../../webhook/admission/context.ts';
import { adoptionConsent } from '../../webhook/rules/guardrails.ts';
import { admissionContext } from './admission-context.ts';
import { assertAdmitted, buildStatus, jittered, type VaultObjectDeps } from './common.ts';
import { errorPolicy } from './error-policy.ts';
import { NEVER, ReconcileError } from '../../kube/reconcile-error.ts';
import { tryCache } from './lookups.ts';
import { wantsAdoption } from './vault-object-plan.ts';
import { performSteps, reportPlan, whileVaultAnswers, type VaultObjectIo } from './vault-object.ts';
import {
  OWNED_CONDITION,
  planVaultPolicy,
  planVaultPolicyCleanup,
  policyVaultFailure,
  type PolicyDesired,
  type PolicyObserved,
  type PolicyOp,
} from './vaultpolicy-plan.ts';

export { OWNED_CONDITION } from './vaultpolicy-plan.ts';
export { REVOKED_REASON } from './vault-object-plan.ts';

export interface VaultPolicyObject extends KubeObject {
  spec: VaultPolicySpec;
}

/** The same inputs as the VaultRoleBinding reconciler (common.ts VaultObjectDeps). */
export type VaultPolicyDeps = VaultObjectDeps;

export function createVaultPolicyReconciler(deps: VaultPolicyDeps): Reconciler {
  const now = deps.now ?? (() => new Date());
  const driftMs = deps.driftCheckMs ?? 300_000;

  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const obj = ctx.cache<VaultPolicyObject>(VAULT_POLICIES).get(key);
    if (!obj) return DONE;
    const name = vaultName(deps.namePrefix, obj.metadata.namespace ?? '', obj.metadata.name);
    const io = policyIo(deps, ctx, obj, name, now);
    const writeReady = (ready: PolicyReady): Promise<void> => io.writeStatus(ready, []);

    return withFinalizer(ctx.client, VAULT_POLICIES, obj, {
      apply: async (current) => {
        const actx = admissionContext({
          guardrails: tryCache(ctx, VAULT_GUARDRAILS),
          namespaces: tryCache(ctx, NAMESPACES),
          namePrefix: deps.namePrefix,
          controllerClass: deps.controllerClass ?? '',
        });
        const desired = desiredPolicy(current, name, actx);
        const plan = await whileVaultAnswers(policyVaultFailure(desired, name), writeReady, async () => {
          const planned = planVaultPolicy(desired, observe(current, name, await deps.sys.readPolicy(name), actx));
          await performSteps(planned, io);
          return planned;
        });
        await reportPlan(plan, io);
        // Refused or not, re-checked on the drift period: drift repair of a refused object means "nothing of ours in Vault".
        return requeueAfter(jittered(driftMs, obj.metadata.uid));
      },

      cleanup: async (current) => {
        // Keep the finalizer on failure: the runtime retries with backoff; the status says why deletion waits.
        await whileVaultAnswers(
          policyVaultFailure('deleting', name),
          writeReady,
          async () => {
            const stored = await deps.sys.readPolicy(name);
            const o = {
              name,
              namespace: current.metadata.namespace ?? '',
              objectName: current.metadata.name,
              stored,
              header: headerOf(stored, current),
            };
            const plan = planVaultPolicyCleanup(o);
            await performSteps(plan, io);
            await reportPlan(plan, io);
          },
          true,
        );
      },
    });
  };
}

type PolicyReady = Parameters<VaultObjectIo<PolicyOp, string>['writeStatus']>[0];

/** The policy text the spec renders to, or why the controller's re-check refuses it. */
function desiredPolicy(obj: VaultPolicyObject, name: string, actx: AdmissionContext): PolicyDesired {
  try {
    assertAdmitted(obj, name, actx);
    return { rendered: renderPolicy(rulesOf(obj.spec, obj.metadata.namespace ?? ''), ownerOf(obj)) };
  } catch (err) {
    const { reason, message } = errorPolicy(err, 'InvalidSpec');
    return { refused: { reason, message } };
  }
}

/** The rules the spec stands for, `{{namespace}}` expanded (policy/spec-rules.ts); a bad spec → ReconcileError InvalidSpec. */
function rulesOf(spec: VaultPolicySpec, namespace: string): PolicyRule[] {
  const { rules, errors } = specRules(spec as unknown as Record<string, unknown>, namespace);
  if (errors) throw new ReconcileError('InvalidSpec', errors.join('; '), NEVER);
  return rules as PolicyRule[];
}

function observe(
  obj: VaultPolicyObject,
  name: string,
  stored: string | undefined,
  actx: AdmissionContext,
): PolicyObserved {
  const ns = obj.metadata.namespace ?? '';
  const conditions = (obj.status as { conditions?: Condition[] } | undefined)?.conditions;
  const owned = getCondition(conditions, OWNED_CONDITION);
  const ready = getCondition(conditions, 'Ready');
  const annotated = wantsAdoption(obj);
  return {
    name,
    namespace: ns,
    stored,
    header: headerOf(stored, obj),
    ...(owned ? { owned: { status: owned.status, reason: owned.reason } } : {}),
    annotated,
    consent: annotated && adoptionConsent(ns, actx) !== undefined,
    syncedBefore: ready?.status === 'True' && ready.observedGeneration === obj.metadata.generation,
    ...(ready ? { ready: { reason: ready.reason, message: ready.message } } : {}),
  };
}

function ownerOf(obj: KubeObject): { namespace: string; name: string; uid: string } {
  return { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name, uid: obj.metadata.uid ?? '' };
}

function headerOf(stored: string | undefined, obj: KubeObject): OwnershipVerdict {
  return stored === undefined ? 'foreign' : ownershipOf(stored, ownerOf(obj));
}

function policyIo(
  deps: VaultPolicyDeps,
  ctx: ReconcileContext,
  obj: VaultPolicyObject,
  name: string,
  now: () => Date,
): VaultObjectIo<PolicyOp, string> {
  return {
    perform: (op) => (op === 'delete' ? deps.sys.deletePolicy(name) : deps.sys.writePolicy(name, op.write)),
    event: (e) => ctx.events.record(obj, e),
    audit: (a) =>
      deps.onVaultWrite?.({ object: 'policy', vaultName: name, owner: { kind: 'VaultPolicy', ...ownerOf(obj) }, ...a }),
    writeStatus: async (ready, conditions) => {
      await applyStatus(
        ctx.client,
        VAULT_POLICIES,
        obj,
        buildStatus(obj, { ready, conditions, extra: { vaultName: name } }, now()),
      );
    },
  };
}
