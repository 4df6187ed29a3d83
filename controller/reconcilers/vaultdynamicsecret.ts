// VaultDynamicSecret: observe (the object's persisted lease state, the target Secret and the controller's
// copy of the credential, the rollout of the targets while a replaced lease waits) → plan
// (vaultdynamicsecret-plan.ts, pure) → act (Vault through vault/leases.ts, the two Secrets, status,
// Events, metrics). The credential is held in the two Secrets only: never in status, Events, logs or metrics.
//
// Vault revokes a lease with the token that minted it (hashicorp/vault#4592). The connector given here must
// therefore use a TokenCache that never revokes a token it replaces (revokeOnEvict: false): a new login
// leaves the minting token to live out its TTL, and the planner replaces the credential before that TTL
// ends (status.lease.tokenExpiresAt), in time for a rollout, instead of the credential dying under the pods.
import { createHash } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import { controllerReference } from '../../kube/apply.ts';
import { getCondition, setCondition, timestamp } from '../../kube/conditions.ts';
import { isAlreadyExists } from '../../kube/errors.ts';
import { withFinalizer } from '../../kube/finalizer.ts';
import type { Condition, KubeObject } from '../../kube/objects.ts';
import type { OwnWrites } from '../../kube/own-writes.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { NAMESPACES, SECRETS } from '../../kube/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import {
  CLUSTER_SECRET_STORES,
  SECRET_STORES,
  VAULT_DYNAMIC_SECRETS,
  VAULT_GUARDRAILS,
} from '../../schemas/resources.ts';
import { VAULTGATE_API_VERSION } from '../../schemas/kinds.ts';
import type { VaultDynamicSecretSpec, VaultDynamicSecretStatus } from '../../schemas/types.generated.ts';
import { parseGoDuration } from '../../golang/index.ts';
import { storeAllowsNamespace } from '../../eso/store-conditions.ts';
import { LABEL_MANAGED } from '../../eso/target.ts';
import {
  currentTokenLease,
  isLeaseGone,
  issueCredential,
  lookupLease,
  lookupTokenByAccessor,
  renewLease,
  revokeLease,
} from '../../vault/leases.ts';
import {
  certificateChainPem,
  certificateFacts,
  issueCertificate,
  pkiMountOf,
  revokeCertificate,
} from '../../vault/pki.ts';
import type { VaultRequester } from '../../vault/types.ts';
import { VDS_DEFAULTS } from '../../webhook/rules/vaultdynamicsecret.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings, reasonOf, safeMessage, SafeError } from './common.ts';
import { isOurClass, tryCache } from './lookups.ts';
import type { StoreConnector, StoreKind, StoreObject } from './store-connector.ts';
import {
  certificateRenewAt,
  mintingTokenLookDue,
  tokenConditionAtMint,
  planDeleting,
  planLifecycle,
  inheritedMaxTTL,
  renewedLease,
  replacedLease,
  type MintingTokenLook,
  type LeasePolicy,
  type LeaseState,
  type LifecycleObservation,
  type LifecyclePlan,
  type PreviousAction,
  type PreviousLease,
  type RolloutState,
} from './vaultdynamicsecret-plan.ts';

export interface VaultDynamicSecretObject extends KubeObject {
  spec: VaultDynamicSecretSpec;
  status?: VaultDynamicSecretStatus;
}

/** What the rollout coordinator answers (controller/rollouts/coordinator.ts); the lifecycle asks only this. */
export interface RolloutGate {
  settled(
    namespace: string,
    targets: ReadonlyArray<{ kind: 'Deployment' | 'StatefulSet' | 'DaemonSet'; name: string }>,
    secretName: string,
  ): Promise<RolloutState>;
}

/** Labels and annotations on the Secrets this reconciler writes. */
export const LABEL_DYNAMIC_SECRET = 'vaultgate.io/dynamic-secret';
export const LABEL_COPY = 'vaultgate.io/credential-copy';
/** The lease id, or for a certificate its serial. */
export const ANNOTATION_LEASE = 'vaultgate.io/lease-id';
/** On the copy: the minting token's accessor and end, so a credential adopted after a crash keeps its bound. */
export const ANNOTATION_TOKEN_ACCESSOR = 'vaultgate.io/token-accessor';
export const ANNOTATION_TOKEN_EXPIRES = 'vaultgate.io/token-expires-at';

/** Index on VaultDynamicSecrets: `namespace/<target Secret>` and `namespace/<copy Secret>`. */
export const VDS_SECRET_INDEX = 'vds-secret';

export function targetName(o: VaultDynamicSecretObject): string {
  return o.spec.target?.name ?? o.metadata.name;
}

/** The controller's copy of the current credential: one per object, named after its uid (no clash with a tenant's name). */
export function copyName(o: KubeObject): string {
  return `vds-copy-${o.metadata.uid ?? o.metadata.name}`;
}

export function vdsSecretIndex(obj: KubeObject): string[] {
  const o = obj as VaultDynamicSecretObject;
  const ns = o.metadata.namespace ?? '';
  return [`${ns}/${targetName(o)}`, `${ns}/${copyName(o)}`];
}

export interface LifecycleMetrics {
  operations: Counter<'operation' | 'result'>;
}

/** vaultgate_dynamic_secret_operations_total{operation=mint|renew|revoke|restore|adopt, result=success|failure}. */
export function createLifecycleMetrics(registry?: Registry): LifecycleMetrics {
  return {
    operations: new Counter({
      name: 'vaultgate_dynamic_secret_operations_total',
      help: 'Lease lifecycle operations of VaultDynamicSecrets: mint (first credential and rotations), renew, revoke, restore (Secret rewritten from the copy, nothing minted), adopt.',
      labelNames: ['operation', 'result'] as const,
      registers: registry ? [registry] : [],
    }),
  };
}

export interface VaultDynamicSecretDeps {
  /** A connector whose TokenCache does not revoke replaced tokens (see the header). */
  connector: StoreConnector;
  rollouts: RolloutGate;
  metrics: LifecycleMetrics;
  controllerClass: string;
  namePrefix: string;
  ownSecretWrites?: OwnWrites;
  now?: () => number;
  /** Audit records of Vault changes (lease ids and reasons only). */
  onLeaseChange?: (record: {
    namespace: string;
    name: string;
    action: 'mint' | 'renew' | 'revoke';
    leaseId: string;
    reason: string;
  }) => void;
}

type SecretObject = KubeObject & { data?: Record<string, string>; type?: string };

const ms = (d: string | undefined, fallback: string): number => {
  const r = parseGoDuration(d ?? fallback);
  return r.ok ? r.ms : (parseGoDuration(fallback) as { ms: number }).ms;
};
const t = (s: string | undefined): number | undefined => (s ? Date.parse(s) : undefined);
const iso = (n: number | undefined): string | undefined => (n === undefined ? undefined : new Date(n).toISOString());

export function leasePolicyOf(spec: VaultDynamicSecretSpec): LeasePolicy {
  const lp = spec.leasePolicy ?? {};
  const rv = spec.revocation ?? {};
  return {
    renewAtPercent: lp.renewAtPercent ?? VDS_DEFAULTS.renewAtPercent,
    jitterPercent: lp.jitterPercent ?? VDS_DEFAULTS.jitterPercent,
    minValidityMs: ms(lp.minValidity, VDS_DEFAULTS.minValidity),
    ...(lp.maxTTL ? { maxTTLMs: ms(lp.maxTTL, lp.maxTTL) } : {}),
    onDelete: rv.onDelete ?? VDS_DEFAULTS.onDelete,
    previous: rv.previous ?? VDS_DEFAULTS.previous,
    graceMs: ms(rv.grace, VDS_DEFAULTS.grace),
  };
}

/** What minted the credential: a change of any of these means the credential is not the one asked for. */
export function sourceOf(o: VaultDynamicSecretObject): string {
  const s = o.spec;
  return createHash('sha256')
    .update(
      JSON.stringify([
        s.storeRef.kind ?? 'SecretStore',
        s.storeRef.name,
        s.path,
        s.method ?? 'GET',
        s.parameters ?? {},
      ]),
    )
    .digest('hex')
    .slice(0, 16);
}

/** The current credential from status: a lease, or a certificate (id = serial). */
function currentFromStatus(st: VaultDynamicSecretStatus | undefined): LeaseState | undefined {
  const c = st?.certificate;
  if (c) {
    const issuedAt = t(c.notBefore) ?? 0;
    const expiresAt = t(c.notAfter) ?? 0;
    return {
      id: c.serial,
      certificate: true,
      durationSeconds: Math.max(0, Math.round((expiresAt - issuedAt) / 1000)),
      renewable: false,
      issuedAt,
      expiresAt,
      ...(c.source ? { source: c.source } : {}),
    };
  }
  return leaseFromStatus(st?.lease);
}

function leaseFromStatus(s: VaultDynamicSecretStatus['lease']): LeaseState | undefined {
  if (!s) return undefined;
  return {
    id: s.id,
    durationSeconds: s.durationSeconds,
    renewable: s.renewable ?? false,
    issuedAt: t(s.issuedAt) ?? 0,
    expiresAt: t(s.expiresAt) ?? 0,
    ...(s.renewedAt ? { renewedAt: t(s.renewedAt)! } : {}),
    ...(s.maxExpiresAt ? { maxExpiresAt: t(s.maxExpiresAt)! } : {}),
    ...(s.maxTTLSeconds !== undefined ? { maxTTLSeconds: s.maxTTLSeconds } : {}),
    ...(s.tokenAccessor ? { tokenAccessor: s.tokenAccessor } : {}),
    ...(s.tokenExpiresAt ? { tokenExpiresAt: t(s.tokenExpiresAt)! } : {}),
    ...(s.tokenPeriodic !== undefined ? { tokenPeriodic: s.tokenPeriodic } : {}),
    ...(s.tokenCheckedAt ? { tokenCheckedAt: t(s.tokenCheckedAt)! } : {}),
    ...(s.source ? { source: s.source } : {}),
  };
}

function leaseToStatus(l: LeaseState): NonNullable<VaultDynamicSecretStatus['lease']> {
  return {
    id: l.id,
    durationSeconds: l.durationSeconds,
    renewable: l.renewable,
    issuedAt: iso(l.issuedAt)!,
    expiresAt: iso(l.expiresAt)!,
    ...(l.renewedAt !== undefined ? { renewedAt: iso(l.renewedAt)! } : {}),
    ...(l.maxExpiresAt !== undefined ? { maxExpiresAt: iso(l.maxExpiresAt)! } : {}),
    ...(l.maxTTLSeconds !== undefined ? { maxTTLSeconds: l.maxTTLSeconds } : {}),
    ...(l.tokenAccessor ? { tokenAccessor: l.tokenAccessor } : {}),
    ...(l.tokenExpiresAt !== undefined ? { tokenExpiresAt: iso(l.tokenExpiresAt)! } : {}),
    ...(l.tokenPeriodic !== undefined ? { tokenPeriodic: l.tokenPeriodic } : {}),
    ...(l.tokenCheckedAt !== undefined ? { tokenCheckedAt: iso(l.tokenCheckedAt)! } : {}),
    ...(l.source ? { source: l.source } : {}),
  };
}

function certificateToStatus(l: LeaseState, p: LeasePolicy): NonNullable<VaultDynamicSecretStatus['certificate']> {
  return {
    serial: l.id,
    notBefore: iso(l.issuedAt)!,
    notAfter: iso(l.expiresAt)!,
    renewAt: iso(certificateRenewAt(p, l))!,
    ...(l.source ? { source: l.source } : {}),
  };
}

function previousFromStatus(list: VaultDynamicSecretStatus['previous']): PreviousLease[] {
  return (list ?? []).map((p) => ({
    id: p.id,
    replacedAt: t(p.replacedAt) ?? 0,
    ...(p.expiresAt ? { expiresAt: t(p.expiresAt)! } : {}),
    ...(p.durationSeconds !== undefined ? { durationSeconds: p.durationSeconds } : {}),
    ...(p.renewedAt ? { renewedAt: t(p.renewedAt)! } : {}),
    ...(p.rolloutSettledAt ? { rolloutSettledAt: t(p.rolloutSettledAt)! } : {}),
    ...(p.reason ? { reason: p.reason } : {}),
    ...(p.certificate ? { certificate: true } : {}),
    ...(p.mount ? { mount: p.mount } : {}),
  }));
}

function previousToStatus(list: PreviousLease[]): NonNullable<VaultDynamicSecretStatus['previous']> {
  return list.map((p) => ({
    id: p.id,
    replacedAt: iso(p.replacedAt)!,
    ...(p.expiresAt !== undefined ? { expiresAt: iso(p.expiresAt)! } : {}),
    ...(p.durationSeconds !== undefined ? { durationSeconds: p.durationSeconds } : {}),
    ...(p.renewedAt !== undefined ? { renewedAt: iso(p.renewedAt)! } : {}),
    ...(p.rolloutSettledAt !== undefined ? { rolloutSettledAt: iso(p.rolloutSettledAt)! } : {}),
    ...(p.reason ? { reason: p.reason } : {}),
    ...(p.certificate ? { certificate: true } : {}),
    ...(p.mount ? { mount: p.mount } : {}),
  }));
}

function ownedBy(s: KubeObject | undefined, o: KubeObject): boolean {
  if (!s) return false;
  return (
    (s.metadata.ownerReferences ?? []).some((r) => r.uid === o.metadata.uid) ||
    s.metadata.labels?.[LABEL_DYNAMIC_SECRET] === o.metadata.uid
  );
}

function sameData(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {}).sort();
  const kb = Object.keys(b ?? {}).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a![k] === b![k]);
}

interface Observed {
  obs: LifecycleObservation;
  target?: SecretObject;
  copy?: SecretObject;
}

async function observe(
  o: VaultDynamicSecretObject,
  ctx: ReconcileContext,
  deps: VaultDynamicSecretDeps,
  now: number,
  tokenChecked: Set<string>,
): Promise<Observed> {
  const ns = o.metadata.namespace ?? '';
  const [target, copy] = await Promise.all([
    ctx.client.get<SecretObject>(SECRETS, targetName(o), ns),
    ctx.client.get<SecretObject>(SECRETS, copyName(o), ns),
  ]);
  const lease = currentFromStatus(o.status);
  const previous = previousFromStatus(o.status?.previous);
  const ourCopy = ownedBy(copy, o) ? copy : undefined;
  const copyLeaseId = ourCopy?.metadata.annotations?.[ANNOTATION_LEASE];
  let targetState: LifecycleObservation['target'];
  if (!target) targetState = 'missing';
  else if (!ownedBy(target, o)) targetState = 'foreign';
  else if (ourCopy) targetState = sameData(target.data, ourCopy.data) ? 'current' : 'differs';
  else targetState = target.metadata.annotations?.[ANNOTATION_LEASE] === lease?.id ? 'current' : 'differs';
  const policy = leasePolicyOf(o.spec);
  const rollout =
    previous.length > 0 && policy.previous === 'AfterRollout' && !o.metadata.deletionTimestamp
      ? await deps.rollouts.settled(ns, o.spec.rolloutRestartTargets ?? [], targetName(o))
      : undefined;
  const uid = o.metadata.uid ?? `${ns}/${o.metadata.name}`;
  let mintingToken: MintingTokenLook | undefined;
  if (!o.metadata.deletionTimestamp && mintingTokenLookDue(lease, policy, now, tokenChecked.has(uid))) {
    mintingToken = await lookMintingToken(o, ctx, deps, lease!.tokenAccessor!);
    tokenChecked.add(uid);
  }
  return {
    obs: {
      now,
      deleting: Boolean(o.metadata.deletionTimestamp),
      policy,
      source: sourceOf(o),
      ...(lease ? { lease } : {}),
      previous,
      target: targetState,
      ...(copyLeaseId ? { copyLeaseId } : {}),
      ...(rollout ? { rollout } : {}),
      ...(mintingToken ? { mintingToken } : {}),
    },
    ...(target ? { target } : {}),
    ...(ourCopy ? { copy: ourCopy } : {}),
  };
}

/**
 * The token that minted the lease, as Vault knows it now: this session's own token (renewed by the token
 * cache), another one (minted before this process started or logged in again: no one renews it now), or
 * gone. Undefined when it cannot be looked up (no grant on auth/token/lookup-accessor, Vault down): status's
 * last-seen end then stands.
 */
async function lookMintingToken(
  o: VaultDynamicSecretObject,
  ctx: ReconcileContext,
  deps: VaultDynamicSecretDeps,
  accessor: string,
): Promise<MintingTokenLook | undefined> {
  try {
    const s = await session(o, ctx, deps);
    const self = await currentTokenLease(s);
    const tok = self.accessor === accessor ? self : await lookupTokenByAccessor(s, accessor);
    if (!tok) return { accessor, state: 'gone' };
    return {
      accessor,
      state: self.accessor === accessor ? 'current' : 'other',
      ...(tok.expireTime !== undefined ? { expiresAt: tok.expireTime } : {}),
      periodic: tok.periodic,
    };
  } catch (err) {
    ctx.log.info(
      { key: `${o.metadata.namespace ?? ''}/${o.metadata.name}`, reason: reasonOf(err, 'VaultError') },
      'the minting token could not be looked up: its end as last seen stands (grant update on auth/token/lookup-accessor)',
    );
    return undefined;
  }
}

/** The store's Vault session, after the same checks an ExternalSecret's store gets (class, readiness, namespace conditions). */
async function session(
  o: VaultDynamicSecretObject,
  ctx: ReconcileContext,
  deps: VaultDynamicSecretDeps,
): Promise<VaultRequester> {
  const ns = o.metadata.namespace ?? '';
  const ref = o.spec.storeRef;
  const kind: StoreKind = ref.kind ?? 'SecretStore';
  const cache = tryCache(ctx, kind === 'SecretStore' ? SECRET_STORES : CLUSTER_SECRET_STORES);
  const name = ref.name ?? '';
  const label = `${kind} ${name}`;
  if (!cache)
    throw new SafeError(
      'StoreNotServed',
      `${label} cannot be used: this controller serves no ${kind} (namespaced install)`,
    );
  const store = cache.get(kind === 'SecretStore' ? `${ns}/${name}` : name) as StoreObject | undefined;
  if (!store) throw new SafeError('StoreNotFound', `${label} not found`);
  if (!isOurClass(store.spec, deps.controllerClass))
    throw new SafeError('StoreNotFound', `${label} belongs to another controller class`);
  const ready = getCondition((store.status as { conditions?: Condition[] } | undefined)?.conditions, 'Ready');
  if (ready?.status === 'False') throw new SafeError('StoreNotReady', `${label} is not ready: ${ready.message}`);
  if (kind === 'ClusterSecretStore') {
    const nsObj = tryCache(ctx, NAMESPACES)?.get(ns);
    if (!storeAllowsNamespace(store.spec.conditions, ns, nsObj ? (nsObj.metadata.labels ?? {}) : undefined))
      throw new SafeError('StoreNotFound', `${label} does not allow namespace ${ns} (spec.conditions)`);
  }
  return (await deps.connector.connect(kind, store, ns)).session;
}

function secretBody(
  o: VaultDynamicSecretObject,
  name: string,
  data: Record<string, string>,
  leaseId: string,
  copy: boolean,
  extraAnnotations: Record<string, string> = {},
): SecretObject {
  const orphan = !copy && o.spec.target?.creationPolicy === 'Orphan';
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: o.metadata.namespace,
      labels: {
        [LABEL_MANAGED]: 'true',
        [LABEL_DYNAMIC_SECRET]: o.metadata.uid ?? '',
        ...(copy ? { [LABEL_COPY]: 'true' } : {}),
      },
      annotations: { [ANNOTATION_LEASE]: leaseId, ...(copy ? extraAnnotations : {}) },
      ...(orphan ? {} : { ownerReferences: [controllerReference(VAULT_DYNAMIC_SECRETS, o)] }),
    },
    type: isCertificate(o) ? 'kubernetes.io/tls' : 'Opaque',
    data,
  };
}

/** Creates the Secret, or rewrites ours (never one someone else owns: the planner refused that before). */
async function writeSecret(
  ctx: ReconcileContext,
  deps: VaultDynamicSecretDeps,
  body: SecretObject,
  existing: SecretObject | undefined,
): Promise<void> {
  let written: SecretObject;
  if (!existing) {
    try {
      written = await ctx.client.create<SecretObject>(SECRETS, body);
    } catch (err) {
      if (isAlreadyExists(err))
        throw new SafeError('SecretNotOwned', `Secret ${body.metadata.name} appeared meanwhile; looking again`);
      throw err;
    }
  } else {
    // Ours (the planner refused a foreign one): server-side apply, the rights the chart already grants (patch).
    written = await ctx.client.apply<SecretObject>(SECRETS, body, { force: true });
  }
  deps.ownSecretWrites?.record(written);
}

const isCertificate = (o: VaultDynamicSecretObject): boolean => o.spec.credentialType === 'Certificate';

/**
 * Revokes a replaced or current credential: a lease at sys/leases/revoke, a certificate by serial at its mount.
 * False for a certificate Vault did not revoke because it had expired (or is unknown): nothing is left to revoke.
 */
async function revokeCredential(
  vault: VaultRequester,
  o: VaultDynamicSecretObject,
  id: string,
  cert: { certificate?: boolean; mount?: string } | undefined,
): Promise<boolean> {
  if (!cert?.certificate) {
    await revokeLease(vault, id);
    return true;
  }
  const mount = cert.mount ?? pkiMountOf(o.spec.path);
  if (!mount) throw new SafeError('InvalidSpec', `spec.path ${o.spec.path} is not a PKI issue path: cannot revoke`);
  return revokeCertificate(vault, mount, id);
}

const b64 = (data: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));

/** What act leaves for status: the credentials it holds now, and a failure to show. */
type ActResult = Pick<Pass, 'lease' | 'previous' | 'changed'> & { failure?: { reason: string; message: string } };

/** One pass of act: what it works on, and the state it carries from step to step into status. */
interface Pass {
  o: VaultDynamicSecretObject;
  ctx: ReconcileContext;
  deps: VaultDynamicSecretDeps;
  seen: Observed;
  now: number;
  /** The store's Vault session, opened at the first step that needs it. */
  vault: () => Promise<VaultRequester>;
  lease: LeaseState | undefined;
  previous: PreviousLease[];
  /** The state changed: plan again soon rather than at the plan's requeue. */
  changed: boolean;
}

type MintReason = Extract<LifecyclePlan['main'], { type: 'mint' }>['reason'];

/** Carry out the plan: the replaced leases' steps, then the one step for the current credential. */
async function act(
  o: VaultDynamicSecretObject,
  ctx: ReconcileContext,
  deps: VaultDynamicSecretDeps,
  seen: Observed,
  plan: LifecyclePlan,
): Promise<ActResult> {
  let vault: VaultRequester | undefined;
  const pass: Pass = {
    o,
    ctx,
    deps,
    seen,
    now: seen.obs.now,
    vault: async () => (vault ??= await session(o, ctx, deps)),
    // The minting token as just looked up (plan.token) replaces what status had seen of it.
    lease:
      seen.obs.lease && plan.token
        ? { ...seen.obs.lease, tokenExpiresAt: undefined, tokenPeriodic: undefined, ...plan.token }
        : seen.obs.lease,
    previous: [...seen.obs.previous],
    changed: false,
  };
  // Replaced leases first: they are independent of what happens to the current one.
  for (const step of plan.previous) await actOnPrevious(pass, step);
  const main = plan.main;
  const cert = isCertificate(o);
  try {
    if (main.type === 'mint' && cert) await mintCertificate(pass, main.reason);
    else if (main.type === 'mint') await mintLease(pass, main.reason);
    else if (main.type === 'adopt' && cert) adoptCertificate(pass);
    else if (main.type === 'adopt') await adoptLease(pass);
    else if (main.type === 'restore') await restoreTarget(pass);
    else if (main.type === 'renew') await renewCurrent(pass, main.incrementSeconds);
    else if (main.type === 'noop') await rebuildCopy(pass);
    // revoke-all is cleanup's (withFinalizer); release and refuse act on nothing.
  } catch (err) {
    count(pass, main.type === 'noop' ? 'restore' : main.type, 'failure');
    const failure = { reason: reasonOf(err, 'VaultError'), message: safeMessage(err) };
    return { lease: pass.lease, previous: pass.previous, changed: pass.changed, failure };
  }
  return { lease: pass.lease, previous: pass.previous, changed: pass.changed };
}

const count = (p: Pass, operation: string, result: 'success' | 'failure'): void =>
  p.deps.metrics.operations.inc({ operation, result });

const audit = (p: Pass, action: 'mint' | 'renew' | 'revoke', leaseId: string, reason: string): void =>
  p.deps.onLeaseChange?.({ namespace: p.o.metadata.namespace ?? '', name: p.o.metadata.name, action, leaseId, reason });

/** One replaced lease's step. A Vault failure is logged and left to the next pass, unless the lease is gone. */
async function actOnPrevious(p: Pass, step: PreviousAction): Promise<void> {
  const i = p.previous.findIndex((x) => x.id === step.id);
  if (i < 0) return;
  if (step.op === 'forget' || step.op === 'settled') {
    if (step.op === 'forget') p.previous.splice(i, 1);
    else p.previous[i] = { ...p.previous[i]!, rolloutSettledAt: p.now };
    p.changed = true;
    return;
  }
  try {
    if (step.op === 'revoke') {
      const revoked = await revokeCredential(await p.vault(), p.o, step.id, p.previous[i]);
      count(p, 'revoke', 'success');
      audit(p, 'revoke', step.id, step.why);
      const why = step.why === 'AfterRollout' ? 'its rollout completed' : step.why;
      p.ctx.events.record(p.o, {
        type: 'Normal',
        reason: 'PreviousLeaseRevoked',
        note: !p.previous[i]!.certificate
          ? `revoked the replaced credential's lease (${why})`
          : revoked
            ? `revoked the replaced certificate ${step.id} (${why})`
            : `the replaced certificate ${step.id} had already expired: nothing left to revoke (${why})`,
      });
      p.previous.splice(i, 1);
    } else {
      const r = await renewLease(await p.vault(), step.id, step.incrementSeconds);
      count(p, 'renew', 'success');
      p.previous[i] = { ...p.previous[i]!, renewedAt: p.now, expiresAt: p.now + r.durationSeconds * 1000 };
    }
    p.changed = true;
  } catch (err) {
    count(p, step.op, 'failure');
    if (isLeaseGone(err)) {
      p.previous.splice(i, 1);
      p.changed = true;
      return;
    }
    p.ctx.log.warn(
      { key: `${p.o.metadata.namespace ?? ''}/${p.o.metadata.name}`, op: step.op, reason: reasonOf(err, 'VaultError') },
      'replaced lease: Vault call failed',
    );
  }
}

/** The credential's request as the spec states it (`method` defaults differ: GET for a lease, PUT for a certificate). */
function requestOf(o: VaultDynamicSecretObject, method: 'GET' | 'PUT'): Parameters<typeof issueCredential>[1] {
  return {
    path: o.spec.path,
    method: o.spec.method ?? method,
    ...(o.spec.parameters ? { parameters: o.spec.parameters as Record<string, string> } : {}),
  };
}

/** Writes a new credential: the copy first, so a crash after it adopts the credential instead of minting another. */
async function writeCredential(p: Pass, data: Record<string, string>, id: string, copyNotes?: Record<string, string>) {
  await writeSecret(p.ctx, p.deps, secretBody(p.o, copyName(p.o), data, id, true, copyNotes), p.seen.copy);
  await writeSecret(p.ctx, p.deps, secretBody(p.o, targetName(p.o), data, id, false), p.seen.target);
}

function recordMinted(p: Pass, reason: MintReason, issued: string, rotated: string, note: string): void {
  const initial = reason === 'Initial';
  p.ctx.events.record(p.o, {
    type: 'Normal',
    reason: initial ? issued : rotated,
    note: `${note} to Secret ${targetName(p.o)}${initial ? '' : ` (${reason})`}`,
  });
}

async function mintLease(p: Pass, reason: MintReason): Promise<void> {
  const s = await p.vault();
  const tok = await currentTokenLease(s).catch(() => undefined);
  const cred = await issueCredential(s, requestOf(p.o, 'GET'));
  count(p, 'mint', 'success');
  audit(p, 'mint', cred.leaseId, reason);
  await writeCredential(p, b64(cred.data), cred.leaseId, {
    ...(tok?.accessor ? { [ANNOTATION_TOKEN_ACCESSOR]: tok.accessor } : {}),
    ...(tok?.expireTime !== undefined ? { [ANNOTATION_TOKEN_EXPIRES]: iso(tok.expireTime)! } : {}),
  });
  const replaced = p.lease;
  if (replaced && reason !== 'LeaseLost') p.previous.push(replacedLease(replaced, p.now, reason));
  p.lease = {
    id: cred.leaseId,
    durationSeconds: cred.durationSeconds,
    renewable: cred.renewable,
    issuedAt: p.now,
    expiresAt: p.now + cred.durationSeconds * 1000,
    ...inheritedMaxTTL(replaced, { source: p.seen.obs.source, durationSeconds: cred.durationSeconds }),
    ...(tok?.accessor ? { tokenAccessor: tok.accessor } : {}),
    ...(tok?.expireTime !== undefined ? { tokenExpiresAt: tok.expireTime } : {}),
    ...(tok ? { tokenPeriodic: tok.periodic, tokenCheckedAt: p.now } : {}),
    source: p.seen.obs.source,
  };
  recordMinted(p, reason, 'CredentialIssued', 'CredentialRotated', 'wrote a new credential');
  p.changed = true;
}

async function mintCertificate(p: Pass, reason: MintReason): Promise<void> {
  const cert = await issueCertificate(await p.vault(), requestOf(p.o, 'PUT'));
  count(p, 'mint', 'success');
  audit(p, 'mint', cert.serial, reason);
  await writeCredential(
    p,
    b64({ 'tls.crt': certificateChainPem(cert), 'tls.key': cert.privateKey, 'ca.crt': cert.caCertificate }),
    cert.serial,
  );
  if (p.lease && reason !== 'CertificateExpired') p.previous.push(replacedCertificate(p, reason));
  p.lease = certificateLease(p, cert.serial, cert);
  const note = `wrote certificate ${cert.serial} (until ${iso(cert.notAfter)})`;
  recordMinted(p, reason, 'CertificateIssued', 'CertificateRotated', note);
  p.changed = true;
}

/** The current certificate as a replaced one, revoked later by serial at its PKI mount. */
function replacedCertificate(p: Pass, reason: string): PreviousLease {
  const mount = pkiMountOf(p.o.spec.path);
  return {
    id: p.lease!.id,
    replacedAt: p.now,
    expiresAt: p.lease!.expiresAt,
    reason,
    certificate: true,
    ...(mount ? { mount } : {}),
  };
}

function certificateLease(p: Pass, serial: string, c: { notBefore: number; notAfter: number }): LeaseState {
  return {
    id: serial,
    certificate: true,
    durationSeconds: Math.round((c.notAfter - c.notBefore) / 1000),
    renewable: false,
    issuedAt: c.notBefore,
    expiresAt: c.notAfter,
    source: p.seen.obs.source,
  };
}

/** A lease minted (and copied) before a crash, status not written: Vault's look-up says when it ends. */
async function adoptLease(p: Pass): Promise<void> {
  const id = p.seen.obs.copyLeaseId!;
  const info = await lookupLease(await p.vault(), id);
  const notes = p.seen.copy?.metadata.annotations ?? {};
  const tokenExpiresAt = t(notes[ANNOTATION_TOKEN_EXPIRES]);
  if (p.lease && p.lease.id !== id) p.previous.push(replacedLease(p.lease, p.now, 'Adopted'));
  p.lease =
    info && info.expireTime !== undefined
      ? {
          id,
          durationSeconds: Math.max(1, Math.round((info.expireTime - info.issueTime) / 1000)),
          renewable: info.renewable,
          issuedAt: info.issueTime,
          expiresAt: info.expireTime,
          ...(notes[ANNOTATION_TOKEN_ACCESSOR] ? { tokenAccessor: notes[ANNOTATION_TOKEN_ACCESSOR] } : {}),
          ...(tokenExpiresAt !== undefined ? { tokenExpiresAt } : {}),
          source: p.seen.obs.source,
        }
      : undefined;
  count(p, 'adopt', 'success');
  p.changed = true;
}

/** A certificate issued before a crash, status not written: the stored certificate says when it ends. */
function adoptCertificate(p: Pass): void {
  const id = p.seen.obs.copyLeaseId!;
  const facts = certificateFacts(Buffer.from(p.seen.copy?.data?.['tls.crt'] ?? '', 'base64').toString('utf8'));
  if (p.lease && p.lease.id !== id) p.previous.push(replacedCertificate(p, 'Adopted'));
  p.lease = facts ? certificateLease(p, id, facts) : undefined;
  count(p, 'adopt', 'success');
  p.changed = true;
}

/** The target Secret rewritten from the copy: the same credential, nothing minted. */
async function restoreTarget(p: Pass): Promise<void> {
  const data = p.seen.copy?.data ?? {};
  await writeSecret(p.ctx, p.deps, secretBody(p.o, targetName(p.o), data, p.lease!.id, false), p.seen.target);
  count(p, 'restore', 'success');
  p.changed = true;
}

async function renewCurrent(p: Pass, incrementSeconds: number): Promise<void> {
  const lease = p.lease!;
  const s = await p.vault();
  try {
    const r = await renewLease(s, lease.id, incrementSeconds);
    count(p, 'renew', 'success');
    const tok = await currentTokenLease(s).catch(() => undefined);
    p.lease = {
      ...renewedLease(lease, r, incrementSeconds, p.now),
      ...(tok && tok.accessor === lease.tokenAccessor && tok.expireTime !== undefined
        ? { tokenExpiresAt: tok.expireTime }
        : {}),
    };
  } catch (err) {
    if (!isLeaseGone(err)) throw err;
    count(p, 'renew', 'failure');
    p.lease = { ...lease, expiresAt: p.now }; // gone: the next plan replaces it (LeaseLost)
  }
  p.changed = true;
}

/** A lost copy is rebuilt from the target (same credential), so a later deletion of the target restores. */
async function rebuildCopy(p: Pass): Promise<void> {
  const { copy, target, obs } = p.seen;
  if (copy || !target || !p.lease || obs.target !== 'current') return;
  await writeSecret(p.ctx, p.deps, secretBody(p.o, copyName(p.o), target.data ?? {}, p.lease.id, true), undefined);
}

function statusOf(
  o: VaultDynamicSecretObject,
  plan: LifecyclePlan,
  r: ActResult,
  now: number,
): Record<string, unknown> {
  const gen = o.metadata.generation;
  const cond = r.failure
    ? { status: 'False' as const, reason: r.failure.reason, message: r.failure.message }
    : plan.condition;
  let conditions = setCondition(o.status?.conditions, { type: 'Ready', ...cond }, gen, timestamp(now));
  const token =
    plan.tokenCondition ??
    (plan.main.type === 'mint' && r.lease ? tokenConditionAtMint(r.lease, leasePolicyOf(o.spec)) : undefined);
  if (token) conditions = setCondition(conditions, { type: 'TokenBound', ...token }, gen, timestamp(now));
  const current = r.lease
    ? r.lease.certificate
      ? { certificate: certificateToStatus(r.lease, leasePolicyOf(o.spec)) }
      : { lease: leaseToStatus(r.lease) }
    : {};
  return {
    ...(gen !== undefined ? { observedGeneration: gen } : {}),
    ...current,
    // Undefined, not left out, when none is left: applyStatus then sees the revoked one go and writes.
    previous: r.previous.length > 0 ? previousToStatus(r.previous) : undefined,
    conditions,
  };
}

async function cleanup(
  o: VaultDynamicSecretObject,
  ctx: ReconcileContext,
  deps: VaultDynamicSecretDeps,
  now: number,
): Promise<void> {
  const lease = currentFromStatus(o.status);
  const previous = previousFromStatus(o.status?.previous);
  const policy = leasePolicyOf(o.spec);
  const observed = { now, deleting: true, policy, source: sourceOf(o), previous, target: 'current' } as const;
  if (planDeleting(lease ? { ...observed, lease } : observed).main.type !== 'revoke-all') return;
  const all: Array<{ id: string; certificate?: boolean; mount?: string }> = [...(lease ? [lease] : []), ...previous];
  try {
    const s = await session(o, ctx, deps);
    for (const c of all) {
      await revokeCredential(s, o, c.id, c);
      deps.metrics.operations.inc({ operation: 'revoke', result: 'success' });
      const namespace = o.metadata.namespace ?? '';
      deps.onLeaseChange?.({ namespace, name: o.metadata.name, action: 'revoke', leaseId: c.id, reason: 'Deleted' });
    }
  } catch (err) {
    deps.metrics.operations.inc({ operation: 'revoke', result: 'failure' });
    // Bounded: after a few tries the object goes; its leases end on their own within one renewal period.
    if (ctx.retries < 5) throw err;
    ctx.events.record(o, {
      type: 'Warning',
      reason: 'LeaseNotRevoked',
      note: `could not revoke ${all.length} lease(s) on deletion (${reasonOf(err, 'VaultError')}); they expire unrenewed`,
      action: 'Delete',
    });
  }
}

/** The object in the apiserver was written after the cached copy this pass read (gone counts as not ahead). */
async function statusIsAhead(o: VaultDynamicSecretObject, ctx: ReconcileContext): Promise<boolean> {
  const live = await ctx.client.get<VaultDynamicSecretObject>(
    VAULT_DYNAMIC_SECRETS,
    o.metadata.name,
    o.metadata.namespace ?? '',
  );
  return live !== undefined && live.metadata.resourceVersion !== o.metadata.resourceVersion;
}

/** A spec admission refuses now (a guardrail changed since, say): status says why; nothing else is touched. */
async function refuseInvalid(o: VaultDynamicSecretObject, ctx: ReconcileContext, why: string, now: number) {
  const policy = leasePolicyOf(o.spec);
  const plan = planLifecycle({ now, deleting: false, policy, source: sourceOf(o), previous: [], target: 'current' });
  const held = { lease: currentFromStatus(o.status), previous: previousFromStatus(o.status?.previous), changed: false };
  const failure = { reason: 'InvalidSpec', message: why };
  await applyStatus(ctx.client, VAULT_DYNAMIC_SECRETS, o, statusOf(o, plan, { ...held, failure }, now));
  return DONE;
}

async function reconcileLive(
  o: VaultDynamicSecretObject,
  ctx: ReconcileContext,
  deps: VaultDynamicSecretDeps,
  now: number,
  tokenChecked: Set<string>,
): Promise<Result> {
  const denials = admissionDenials(
    { ...o, apiVersion: VAULTGATE_API_VERSION, kind: 'VaultDynamicSecret' },
    admissionContext({
      guardrails: ctx.cache(VAULT_GUARDRAILS),
      namespaces: ctx.cache(NAMESPACES),
      namePrefix: deps.namePrefix,
      controllerClass: deps.controllerClass,
    }),
  );
  if (denials.length > 0) return refuseInvalid(o, ctx, describeFindings(denials), now);
  const seen = await observe(o, ctx, deps, now, tokenChecked);
  const plan = planLifecycle(seen.obs);
  // A copy newer than status is what a crash leaves, and also what the cache shows just after this
  // controller's own rotation: the Secrets' watch events trigger a pass before the status write reaches the
  // cache. Adopt only what the object itself, read now, does not already hold.
  if (plan.main.type === 'adopt' && (await statusIsAhead(o, ctx))) return requeueAfter(1_000);
  for (const e of plan.events) ctx.events.record(o, { type: e.type, reason: e.reason, note: e.message });
  const result = await act(o, ctx, deps, seen, plan);
  await applyStatus(ctx.client, VAULT_DYNAMIC_SECRETS, o, statusOf(o, plan, result, now));
  if (result.failure) throw new SafeError(result.failure.reason, result.failure.message);
  if (result.changed) return requeueAfter(1_000);
  return plan.requeueAfterMs !== undefined ? requeueAfter(plan.requeueAfterMs) : DONE;
}

export function createVaultDynamicSecretReconciler(deps: VaultDynamicSecretDeps): Reconciler {
  const now = deps.now ?? Date.now;
  // Objects whose minting token this process has looked up: after a start, each is looked up once.
  const tokenChecked = new Set<string>();
  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const cached = ctx.cache<VaultDynamicSecretObject>(VAULT_DYNAMIC_SECRETS).get(key);
    if (!cached) return DONE;
    return withFinalizer(ctx.client, VAULT_DYNAMIC_SECRETS, cached, {
      apply: (o) => reconcileLive(o, ctx, deps, now(), tokenChecked),
      cleanup: (o) => cleanup(o, ctx, deps, now()),
    });
  };
}

/**
 * The gate when no rollout coordinator is wired: an object without rollout targets has nothing to wait
 * for; one with targets is never taken as rolled (its replaced lease stays renewed until its max TTL).
 */
export const settledWithoutTargets: RolloutGate = {
  settled: (_ns, targets) => Promise.resolve(targets.length === 0 ? 'settled' : 'rolling'),
};
