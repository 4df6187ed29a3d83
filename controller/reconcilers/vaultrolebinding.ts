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
import type { AdmissionContext } from '../../webhook/admission/context.ts';
import { adoptionConsent } from '../../webhook/rules/guardrails.ts';
import { DEFAULT_AUTH_MOUNT, desiredRole } from '../../policy/role.ts';
import type { KubernetesAuthRole } from '../../vault/types.ts';
import { admissionContext } from './admission-context.ts';
import { assertAdmitted, buildStatus, jittered, type VaultObjectDeps } from './common.ts';
import { errorPolicy } from './error-policy.ts';
import { NEVER, ReconcileError } from '../../kube/reconcile-error.ts';
import { tryCache } from './lookups.ts';
import { wantsAdoption, type Ready } from './vault-object-plan.ts';
import { performSteps, reportPlan, whileVaultAnswers, type VaultObjectIo } from './vault-object.ts';
import {
  claimCondition,
  OWNED_CONDITION,
  planVaultRoleBinding,
  planVaultRoleBindingCleanup,
  roleMountToRead,
  roleVaultFailure,
  type RoleDesired,
  type RoleObserved,
  type RoleOp,
} from './vaultrolebinding-plan.ts';

export { OWNED_CONDITION } from './vaultrolebinding-plan.ts';
export { REVOKED_REASON } from './vault-object-plan.ts';

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

type Body = Record<string, unknown>;

export function createVaultRoleBindingReconciler(deps: VaultRoleBindingDeps): Reconciler {
  const now = deps.now ?? (() => new Date());
  const driftMs = deps.driftCheckMs ?? 300_000;
  // Claims written but maybe not yet visible in the cache (uid set): the cache is eventually consistent.
  const claimed = new Set<string>();

  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const obj = ctx.cache<VaultRoleBindingObject>(VAULT_ROLE_BINDINGS).get(key);
    if (!obj) return DONE;
    const run = bindingRun(deps, ctx, obj, claimed, now);
    return withFinalizer(ctx.client, VAULT_ROLE_BINDINGS, obj, {
      apply: async (current) => {
        await applyBinding(run, current);
        // Refused or not, re-checked on the drift period: drift repair of a refused object means "nothing of ours in Vault".
        return requeueAfter(jittered(driftMs, run.uid));
      },
      cleanup: async (current) => cleanupBinding(run, current),
    });
  };
}

/** One reconcile of one VaultRoleBinding: what it derives once, and the claim it makes. */
interface BindingRun {
  deps: VaultRoleBindingDeps;
  ctx: ReconcileContext;
  uid: string;
  /** The Vault role name. */
  name: string;
  io: VaultObjectIo<RoleOp, Body>;
  standing: ReturnType<typeof standingOf>;
  /** The reconciler's memory of claims the cache may not show yet. */
  claimed: Set<string>;
  /** The claim this reconcile made, once its step ran. */
  claimNow?: string;
}

function bindingRun(
  deps: VaultRoleBindingDeps,
  ctx: ReconcileContext,
  obj: VaultRoleBindingObject,
  claimed: Set<string>,
  now: () => Date,
): BindingRun {
  const uid = obj.metadata.uid ?? '';
  const name = vaultName(deps.namePrefix, obj.metadata.namespace ?? '', obj.metadata.name);
  const io = roleIo(deps, ctx, obj, name, claimed, now);
  return { deps, ctx, uid, name, io, standing: standingOf(obj, name, claimed.has(uid)), claimed };
}

/** Observe (the role at the mount the plan works on), plan, act, and report; a failed Vault call goes to status. */
async function applyBinding(run: BindingRun, current: VaultRoleBindingObject): Promise<void> {
  const { deps, ctx, name, standing } = run;
  const actx = admissionContext({
    guardrails: tryCache(ctx, VAULT_GUARDRAILS),
    namespaces: tryCache(ctx, NAMESPACES),
    policies: tryCache(ctx, VAULT_POLICIES),
    namePrefix: deps.namePrefix,
    controllerClass: deps.controllerClass ?? '',
  });
  const desired = desiredBinding(current, name, actx, ctx, deps.namePrefix);
  const failureMount = 'role' in desired ? (standing.statusMount ?? desired.role.mount) : standing.statusMount;
  const plan = await whileVaultAnswers(roleVaultFailure(desired, name), failedStatus(run, failureMount), async () => {
    const mount = roleMountToRead(desired, standing);
    const actual = mount === undefined ? undefined : await deps.sys.readKubernetesRole(mount, name);
    const planned = planVaultRoleBinding(desired, observe(current, standing, actual, actx));
    run.claimNow = planned.steps.map((s) => ('claim' in s.op ? s.op.claim : undefined)).find(Boolean);
    await performSteps(planned, run.io);
    return planned;
  });
  if (plan.forgetClaim) run.claimed.delete(run.uid);
  await reportPlan(plan, run.io);
}

/** Keep the finalizer on failure: the runtime retries with backoff; the status says why deletion waits. */
async function cleanupBinding(run: BindingRun, current: VaultRoleBindingObject): Promise<void> {
  const { standing } = run;
  await whileVaultAnswers(
    roleVaultFailure('deleting', run.name),
    failedStatus(run, standing.statusMount),
    async () => {
      const plan = planVaultRoleBindingCleanup({ ...standing, objectName: current.metadata.name });
      await performSteps(plan, run.io);
      if (plan.forgetClaim) run.claimed.delete(run.uid);
    },
    true,
  );
}

/** A failure's status, at `mount`: it keeps the claim as it stands then (made by this reconcile, or earlier). */
function failedStatus(run: BindingRun, mount: string | undefined): (ready: Ready) => Promise<void> {
  return (ready) => run.io.writeStatus(ready, claimCondition(run.standing, run.claimNow), mountField(mount));
}

/** What the object's status and this reconciler's memory say, before Vault is read. */
function standingOf(
  obj: VaultRoleBindingObject,
  name: string,
  claimedUnseen: boolean,
): Omit<RoleObserved, 'annotated' | 'consent'> {
  const status = (obj.status ?? {}) as { authMount?: string; observedGeneration?: number; conditions?: Condition[] };
  const owned = getCondition(status.conditions, OWNED_CONDITION);
  const ready = getCondition(status.conditions, 'Ready');
  return {
    name,
    namespace: obj.metadata.namespace ?? '',
    specMount: obj.spec.authMount ?? DEFAULT_AUTH_MOUNT,
    claimedUnseen,
    ...(status.authMount ? { statusMount: status.authMount } : {}),
    ...(owned ? { owned: { status: owned.status, reason: owned.reason } } : {}),
    writtenThisGeneration: status.observedGeneration === obj.metadata.generation,
    ...(ready ? { ready: { reason: ready.reason, message: ready.message } } : {}),
  };
}

function observe(
  obj: VaultRoleBindingObject,
  standing: ReturnType<typeof standingOf>,
  actual: KubernetesAuthRole | undefined,
  actx: AdmissionContext,
): RoleObserved {
  const annotated = wantsAdoption(obj);
  return {
    ...standing,
    ...(actual ? { actual } : {}),
    annotated,
    consent: annotated && adoptionConsent(standing.namespace, actx) !== undefined,
  };
}

/**
 * The role the spec stands for, or why the controller's re-check refuses it. Bound only to referenced
 * VaultPolicies Ready for their generation; the others are named in Ready (PolicyNotFound, PolicyNotReady),
 * and a VaultPolicy event re-enqueues this binding through the `policy` index.
 */
function desiredBinding(
  obj: VaultRoleBindingObject,
  name: string,
  actx: AdmissionContext,
  ctx: ReconcileContext,
  namePrefix: string,
): RoleDesired {
  const ns = obj.metadata.namespace ?? '';
  try {
    assertAdmitted(obj, name, actx);
    const policies = ctx.cache(VAULT_POLICIES);
    const missing: string[] = [];
    const notReady: string[] = [];
    const bound: string[] = [];
    for (const p of obj.spec.policies) {
      const vp = policies.get(`${ns}/${p}`);
      if (!vp) missing.push(p);
      else if (
        vp.metadata.deletionTimestamp ||
        !isReady((vp.status as { conditions?: Condition[] } | undefined)?.conditions, vp.metadata.generation)
      )
        notReady.push(p);
      else bound.push(vaultName(namePrefix, ns, p));
    }
    try {
      return { role: desiredRole(ns, obj.spec, bound), missing, notReady };
    } catch (e) {
      throw new ReconcileError('InvalidSpec', (e as Error).message, NEVER);
    }
  } catch (err) {
    const { reason, message } = errorPolicy(err, 'InvalidSpec');
    return { refused: { reason, message } };
  }
}

function roleIo(
  deps: VaultRoleBindingDeps,
  ctx: ReconcileContext,
  obj: VaultRoleBindingObject,
  name: string,
  claimed: Set<string>,
  now: () => Date,
): VaultObjectIo<RoleOp, Body> {
  const uid = obj.metadata.uid ?? '';
  const owner = { kind: 'VaultRoleBinding', namespace: obj.metadata.namespace ?? '', name: obj.metadata.name, uid };
  const writeStatus: VaultObjectIo<RoleOp, Body>['writeStatus'] = async (ready, conditions, extra) => {
    await applyStatus(
      ctx.client,
      VAULT_ROLE_BINDINGS,
      obj,
      buildStatus(obj, { ready, conditions, extra: { vaultName: name, ...extra } }, now()),
    );
  };
  return {
    perform: async (op) => {
      if ('write' in op) return deps.sys.writeKubernetesRole(op.write.mount, name, op.write.body);
      if ('delete' in op) return deps.sys.deleteKubernetesRole(op.delete, name);
      // Claim before writing (see the header): a crash after this line still proves ownership.
      await writeStatus(
        { status: 'Unknown', reason: 'Writing', message: `writing Vault role ${name}` },
        claimCondition({ name, claimedUnseen: false }, op.claim),
        mountField(op.mount),
      );
      claimed.add(uid);
    },
    event: (e) => ctx.events.record(obj, e),
    audit: (a, op) =>
      deps.onVaultWrite?.({
        object: 'role',
        vaultName: name,
        mount: 'write' in op ? op.write.mount : 'delete' in op ? op.delete : op.mount,
        owner,
        ...a,
      }),
    writeStatus,
  };
}

function mountField(mount: string | undefined): Record<string, unknown> {
  return mount ? { authMount: mount } : {};
}
