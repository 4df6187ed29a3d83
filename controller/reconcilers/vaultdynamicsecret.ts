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
import { certificateFacts, issueCertificate, pkiMountOf, revokeCertificate } from '../../vault/pki.ts';
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
  planLifecycle,
  replacedLease,
  type MintingTokenLook,
  type LeasePolicy,
  type LeaseState,
  type LifecycleObservation,
  type LifecyclePlan,
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

/** Revokes a replaced or current credential: a lease at sys/leases/revoke, a certificate by serial at its mount. */
async function revokeCredential(
  vault: VaultRequester,
  o: VaultDynamicSecretObject,
  id: string,
  cert: { certificate?: boolean; mount?: string } | undefined,
): Promise<void> {
  if (!cert?.certificate) return revokeLease(vault, id);
  const mount = cert.mount ?? pkiMountOf(o.spec.path);
  if (!mount) throw new SafeError('InvalidSpec', `spec.path ${o.spec.path} is not a PKI issue path: cannot revoke`);
  await revokeCertificate(vault, mount, id);
}

const b64 = (data: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));

interface ActResult {
  lease?: LeaseState;
  previous: PreviousLease[];
  failure?: { reason: string; message: string };
  /** The state changed: plan again soon rather than at the plan's requeue. */
  changed: boolean;
}

async function act(
  o: VaultDynamicSecretObject,
  ctx: ReconcileContext,
  deps: VaultDynamicSecretDeps,
  seen: Observed,
  plan: LifecyclePlan,
): Promise<ActResult> {
  const now = seen.obs.now;
  const m = deps.metrics.operations;
  const ns = o.metadata.namespace ?? '';
  const audit = (action: 'mint' | 'renew' | 'revoke', leaseId: string, reason: string): void =>
    deps.onLeaseChange?.({ namespace: ns, name: o.metadata.name, action, leaseId, reason });
  // The minting token as just looked up (plan.token) replaces what status had seen of it.
  let lease =
    seen.obs.lease && plan.token
      ? { ...seen.obs.lease, tokenExpiresAt: undefined, tokenPeriodic: undefined, ...plan.token }
      : seen.obs.lease;
  const previous = [...seen.obs.previous];
  let changed = false;
  let vault: VaultRequester | undefined;
  const v = async (): Promise<VaultRequester> => (vault ??= await session(o, ctx, deps));

  // Replaced leases first: they are independent of what happens to the current one.
  for (const step of plan.previous) {
    const i = previous.findIndex((p) => p.id === step.id);
    if (i < 0) continue;
    if (step.op === 'forget') {
      previous.splice(i, 1);
      changed = true;
      continue;
    }
    if (step.op === 'settled') {
      previous[i] = { ...previous[i]!, rolloutSettledAt: now };
      changed = true;
      continue;
    }
    try {
      if (step.op === 'revoke') {
        await revokeCredential(await v(), o, step.id, previous[i]);
        m.inc({ operation: 'revoke', result: 'success' });
        audit('revoke', step.id, step.why);
        ctx.events.record(o, {
          type: 'Normal',
          reason: 'PreviousLeaseRevoked',
          note: `revoked the replaced credential's lease (${step.why === 'AfterRollout' ? 'its rollout completed' : step.why})`,
        });
        previous.splice(i, 1);
      } else {
        const r = await renewLease(await v(), step.id, step.incrementSeconds);
        m.inc({ operation: 'renew', result: 'success' });
        previous[i] = { ...previous[i]!, renewedAt: now, expiresAt: now + r.durationSeconds * 1000 };
      }
      changed = true;
    } catch (err) {
      m.inc({ operation: step.op, result: 'failure' });
      if (isLeaseGone(err)) {
        previous.splice(i, 1);
        changed = true;
        continue;
      }
      ctx.log.warn(
        { key: `${ns}/${o.metadata.name}`, op: step.op, reason: reasonOf(err, 'VaultError') },
        'replaced lease: Vault call failed',
      );
    }
  }

  const main = plan.main;
  try {
    switch (main.type) {
      case 'mint': {
        const s = await v();
        if (isCertificate(o)) {
          const req = {
            path: o.spec.path,
            method: o.spec.method ?? 'PUT',
            ...(o.spec.parameters ? { parameters: o.spec.parameters as Record<string, string> } : {}),
          };
          const cert = await issueCertificate(s, req);
          m.inc({ operation: 'mint', result: 'success' });
          audit('mint', cert.serial, main.reason);
          const data = b64({ 'tls.crt': cert.certificate, 'tls.key': cert.privateKey, 'ca.crt': cert.issuingCa });
          await writeSecret(ctx, deps, secretBody(o, copyName(o), data, cert.serial, true), seen.copy);
          await writeSecret(ctx, deps, secretBody(o, targetName(o), data, cert.serial, false), seen.target);
          if (lease && main.reason !== 'CertificateExpired')
            previous.push({
              id: lease.id,
              replacedAt: now,
              expiresAt: lease.expiresAt,
              reason: main.reason,
              certificate: true,
              ...(pkiMountOf(o.spec.path) ? { mount: pkiMountOf(o.spec.path)! } : {}),
            });
          lease = {
            id: cert.serial,
            certificate: true,
            durationSeconds: Math.round((cert.notAfter - cert.notBefore) / 1000),
            renewable: false,
            issuedAt: cert.notBefore,
            expiresAt: cert.notAfter,
            source: seen.obs.source,
          };
          ctx.events.record(o, {
            type: 'Normal',
            reason: main.reason === 'Initial' ? 'CertificateIssued' : 'CertificateRotated',
            note: `wrote certificate ${cert.serial} (until ${iso(cert.notAfter)}) to Secret ${targetName(o)}${main.reason === 'Initial' ? '' : ` (${main.reason})`}`,
          });
          changed = true;
          break;
        }
        const tok = await currentTokenLease(s).catch(() => undefined);
        const cred = await issueCredential(s, {
          path: o.spec.path,
          method: o.spec.method ?? 'GET',
          ...(o.spec.parameters ? { parameters: o.spec.parameters as Record<string, string> } : {}),
        });
        m.inc({ operation: 'mint', result: 'success' });
        audit('mint', cred.leaseId, main.reason);
        const data = b64(cred.data);
        const tokenNotes = {
          ...(tok?.accessor ? { [ANNOTATION_TOKEN_ACCESSOR]: tok.accessor } : {}),
          ...(tok?.expireTime !== undefined ? { [ANNOTATION_TOKEN_EXPIRES]: iso(tok.expireTime)! } : {}),
        };
        // The copy first: a crash after this adopts the credential (and its token's bound) instead of minting another.
        await writeSecret(ctx, deps, secretBody(o, copyName(o), data, cred.leaseId, true, tokenNotes), seen.copy);
        await writeSecret(ctx, deps, secretBody(o, targetName(o), data, cred.leaseId, false), seen.target);
        if (lease && main.reason !== 'LeaseLost') previous.push(replacedLease(lease, now, main.reason));
        lease = {
          id: cred.leaseId,
          durationSeconds: cred.durationSeconds,
          renewable: cred.renewable,
          issuedAt: now,
          expiresAt: now + cred.durationSeconds * 1000,
          ...(tok?.accessor ? { tokenAccessor: tok.accessor } : {}),
          ...(tok?.expireTime !== undefined ? { tokenExpiresAt: tok.expireTime } : {}),
          ...(tok ? { tokenPeriodic: tok.periodic, tokenCheckedAt: now } : {}),
          source: seen.obs.source,
        };
        ctx.events.record(o, {
          type: 'Normal',
          reason: main.reason === 'Initial' ? 'CredentialIssued' : 'CredentialRotated',
          note: `wrote a new credential to Secret ${targetName(o)}${main.reason === 'Initial' ? '' : ` (${main.reason})`}`,
        });
        changed = true;
        break;
      }
      case 'adopt': {
        const id = seen.obs.copyLeaseId!;
        if (isCertificate(o)) {
          // Minted before a crash, status not written: the stored certificate says when it ends.
          const pem = Buffer.from(seen.copy?.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
          const facts = certificateFacts(pem);
          if (lease && lease.id !== id)
            previous.push({
              id: lease.id,
              replacedAt: now,
              expiresAt: lease.expiresAt,
              reason: 'Adopted',
              certificate: true,
              ...(pkiMountOf(o.spec.path) ? { mount: pkiMountOf(o.spec.path)! } : {}),
            });
          lease = facts
            ? {
                id,
                certificate: true,
                durationSeconds: Math.round((facts.notAfter - facts.notBefore) / 1000),
                renewable: false,
                issuedAt: facts.notBefore,
                expiresAt: facts.notAfter,
                source: seen.obs.source,
              }
            : undefined;
          m.inc({ operation: 'adopt', result: 'success' });
          changed = true;
          break;
        }
        const info = await lookupLease(await v(), id);
        const notes = seen.copy?.metadata.annotations ?? {};
        const tokenExpiresAt = t(notes[ANNOTATION_TOKEN_EXPIRES]);
        if (lease && lease.id !== id) previous.push(replacedLease(lease, now, 'Adopted'));
        lease =
          info && info.expireTime !== undefined
            ? {
                id,
                durationSeconds: Math.max(1, Math.round((info.expireTime - info.issueTime) / 1000)),
                renewable: info.renewable,
                issuedAt: info.issueTime,
                expiresAt: info.expireTime,
                ...(notes[ANNOTATION_TOKEN_ACCESSOR] ? { tokenAccessor: notes[ANNOTATION_TOKEN_ACCESSOR] } : {}),
                ...(tokenExpiresAt !== undefined ? { tokenExpiresAt } : {}),
                source: seen.obs.source,
              }
            : undefined;
        m.inc({ operation: 'adopt', result: 'success' });
        changed = true;
        break;
      }
      case 'restore': {
        const data = seen.copy?.data ?? {};
        await writeSecret(ctx, deps, secretBody(o, targetName(o), data, lease!.id, false), seen.target);
        m.inc({ operation: 'restore', result: 'success' });
        changed = true;
        break;
      }
      case 'renew': {
        const s = await v();
        try {
          const r = await renewLease(s, lease!.id, main.incrementSeconds);
          m.inc({ operation: 'renew', result: 'success' });
          const expiresAt = now + r.durationSeconds * 1000;
          // Vault granted less than asked: the max TTL ends the lease at that time.
          const capped = r.durationSeconds < main.incrementSeconds - 1;
          const tok = await currentTokenLease(s).catch(() => undefined);
          lease = {
            ...lease!,
            renewable: r.renewable,
            renewedAt: now,
            expiresAt,
            ...(capped ? { maxExpiresAt: expiresAt } : {}),
            ...(tok && tok.accessor === lease!.tokenAccessor && tok.expireTime !== undefined
              ? { tokenExpiresAt: tok.expireTime }
              : {}),
          };
        } catch (err) {
          if (!isLeaseGone(err)) throw err;
          m.inc({ operation: 'renew', result: 'failure' });
          lease = { ...lease!, expiresAt: now }; // gone: the next plan replaces it (LeaseLost)
        }
        changed = true;
        break;
      }
      case 'revoke-all':
      case 'release':
      case 'refuse':
      case 'noop':
        // A lost copy is rebuilt from the target (same credential), so a later deletion of the target restores.
        if (main.type === 'noop' && !seen.copy && seen.target && lease && seen.obs.target === 'current') {
          await writeSecret(ctx, deps, secretBody(o, copyName(o), seen.target.data ?? {}, lease.id, true), undefined);
        }
        break;
    }
  } catch (err) {
    m.inc({ operation: main.type === 'noop' ? 'restore' : main.type, result: 'failure' });
    return {
      ...(lease ? { lease } : {}),
      previous,
      failure: { reason: reasonOf(err, 'VaultError'), message: safeMessage(err) },
      changed,
    };
  }
  return { ...(lease ? { lease } : {}), previous, changed };
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
  const plan = planLifecycle({
    now,
    deleting: true,
    policy: leasePolicyOf(o.spec),
    source: sourceOf(o),
    ...(currentFromStatus(o.status) ? { lease: currentFromStatus(o.status)! } : {}),
    previous: previousFromStatus(o.status?.previous),
    target: 'current',
  });
  if (plan.main.type !== 'revoke-all') return;
  const current = currentFromStatus(o.status);
  const all: Array<{ id: string; certificate?: boolean; mount?: string }> = [
    ...(current ? [current] : []),
    ...previousFromStatus(o.status?.previous),
  ];
  const ids = all.map((x) => x.id);
  try {
    const s = await session(o, ctx, deps);
    for (const c of all) {
      const id = c.id;
      await revokeCredential(s, o, id, c);
      deps.metrics.operations.inc({ operation: 'revoke', result: 'success' });
      deps.onLeaseChange?.({
        namespace: o.metadata.namespace ?? '',
        name: o.metadata.name,
        action: 'revoke',
        leaseId: id,
        reason: 'Deleted',
      });
    }
  } catch (err) {
    deps.metrics.operations.inc({ operation: 'revoke', result: 'failure' });
    // Bounded: after a few tries the object goes; its leases end on their own within one renewal period.
    if (ctx.retries < 5) throw err;
    ctx.events.record(o, {
      type: 'Warning',
      reason: 'LeaseNotRevoked',
      note: `could not revoke ${ids.length} lease(s) on deletion (${reasonOf(err, 'VaultError')}); they expire unrenewed`,
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
  if (denials.length > 0) {
    await applyStatus(
      ctx.client,
      VAULT_DYNAMIC_SECRETS,
      o,
      statusOf(
        o,
        planLifecycle({
          now,
          deleting: false,
          policy: leasePolicyOf(o.spec),
          source: sourceOf(o),
          previous: [],
          target: 'current',
        }),
        {
          previous: previousFromStatus(o.status?.previous),
          ...(currentFromStatus(o.status) ? { lease: currentFromStatus(o.status)! } : {}),
          failure: { reason: 'InvalidSpec', message: describeFindings(denials) },
          changed: false,
        },
        now,
      ),
    );
    return DONE;
  }
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
