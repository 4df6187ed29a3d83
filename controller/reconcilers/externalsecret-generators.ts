// ESO's generators behind an ExternalSecret's dataFrom[].sourceRef.generatorRef (Password,
// VaultDynamicSecret, ClusterGenerator of either), as ESO's handleGenerateSecrets: the generator runs
// when the ExternalSecret syncs (its refreshInterval, a spec change, a force-sync, a target Secret to
// repair), and its keys go through the entry's rewrite.
//
// Password: a new password at every sync, as ESO (its Cleanup does nothing and it keeps no state).
// VaultDynamicSecret: where ESO asks Vault again at every sync, logging in afresh, and never renews or
// revokes (its Cleanup returns nil: credentials die between two refreshes, ESO #2198, #2812), a leased
// answer is kept: renewed at a fraction of its lease, replaced only before Vault's max TTL (or the
// minting token's end), the replaced lease revoked after a grace. observe (the state Secret) → plan
// (externalsecret-plan.ts planGeneratorCredential: the VaultDynamicSecret kind's planLifecycle under
// GENERATOR_LEASE_POLICY) → act (Vault, the state Secret, an Event), on state kept in a Secret owned by the
// ExternalSecret (`esgen-<uid>-<i>`: the credential as data, the lease ids and times in an annotation;
// ESO's ExternalSecret status has no field for them and status must hold nothing about a credential).
// A sync returns the kept credential; renewals happen between syncs, at the lease's own pace.
import { createHash } from 'node:crypto';
import { isAlreadyExists } from '../../kube/errors.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { NEVER, ReconcileError } from '../../kube/reconcile-error.ts';
import type { ReconcileContext } from '../../kube/reconciler.ts';
import { SECRETS } from '../../kube/resources.ts';
import { CLUSTER_GENERATORS, PASSWORD_GENERATORS, VAULT_DYNAMIC_SECRET_GENERATORS } from '../../schemas/resources.ts';
import { CLUSTER_GENERATOR_SPECS, GENERATOR_API_VERSION } from '../../schemas/generator-kinds.ts';
import type { ExternalSecretSpec } from '../../schemas/types.ts';
import type { PasswordSpec, VaultDynamicSecretGeneratorSpec } from '../../schemas/types.generated.ts';
import { generatePassword } from '../../eso/generators/password.ts';
import { generatedFrom, requestVaultGenerator } from '../../eso/generators/vault.ts';
import { currentTokenLease, isLeaseGone, renewLease, revokeLease } from '../../vault/leases.ts';
import type { VaultRequester } from '../../vault/types.ts';
import { reasonOf } from './common.ts';
import { isOurClass } from './lookups.ts';
import type { StoreConnector, StoreObject } from './store-connector.ts';
import {
  isStateOf,
  keptLeasesOf,
  providerOf,
  stateDataOf,
  stateIndexOf,
  stateSecret,
  stateSecretName,
  stateSelector,
  type StateSecret,
} from './generator-state.ts';
import {
  generatorLookAgainMs,
  planGeneratorCredential,
  type GeneratorCredentialObserved,
  type GeneratorCredentialStep,
  type GeneratorStateFacts,
  type KeptLeases,
} from './externalsecret-plan.ts';
import {
  inheritedMaxTTL,
  renewedLease,
  replacedLease,
  type LeaseState,
  type LifecyclePlan,
  type PreviousLease,
} from './vaultdynamicsecret-plan.ts';

export interface GeneratorDeps {
  /** A connector whose TokenCache does not revoke a token it replaces: Vault revokes the token's leases with it. */
  connector: StoreConnector;
  controllerClass: string;
  now: () => number;
}

type EsObject = KubeObject & { spec: ExternalSecretSpec };
type GeneratorRef = { apiVersion?: unknown; kind?: unknown; name?: unknown };
type Resolved =
  | { kind: 'Password'; spec: PasswordSpec; label: string }
  | { kind: 'VaultDynamicSecret'; spec: VaultDynamicSecretGeneratorSpec; label: string };

export function generatorRefOf(entry: NonNullable<ExternalSecretSpec['dataFrom']>[number]): GeneratorRef | undefined {
  const ref = entry.sourceRef?.generatorRef as GeneratorRef | undefined;
  return ref && typeof ref === 'object' ? ref : undefined;
}

/** Finds the generator as ESO's resolvers.GeneratorRef: namespaced kinds in the ExternalSecret's namespace. */
async function resolve(ctx: ReconcileContext, ns: string, ref: GeneratorRef, where: string): Promise<Resolved> {
  const kind = typeof ref.kind === 'string' ? ref.kind : '';
  const name = typeof ref.name === 'string' ? ref.name : '';
  const label = `${kind} ${name}`;
  if (ref.apiVersion !== GENERATOR_API_VERSION)
    throw new ReconcileError('InvalidSpec', `${where}.apiVersion must be ${GENERATOR_API_VERSION}`, NEVER);
  const get = async <T extends KubeObject>(res: typeof PASSWORD_GENERATORS, namespace?: string): Promise<T> => {
    const o = await ctx.client.get<T>(res, name, namespace);
    // A generator applied after the ExternalSecret: retried with backoff, as a Vault error is.
    if (!o) throw new ReconcileError('SecretSyncedError', `${where}: generator ${label} not found`);
    return o;
  };
  if (kind === 'Password')
    return { kind, spec: (await get<KubeObject & { spec?: PasswordSpec }>(PASSWORD_GENERATORS, ns)).spec ?? {}, label };
  if (kind === 'VaultDynamicSecret') {
    const o = await get<KubeObject & { spec: VaultDynamicSecretGeneratorSpec }>(VAULT_DYNAMIC_SECRET_GENERATORS, ns);
    return { kind, spec: o.spec, label };
  }
  if (kind === 'ClusterGenerator') {
    const o = await get<KubeObject & { spec?: { kind?: string; generator?: Record<string, unknown> } }>(
      CLUSTER_GENERATORS,
    );
    const inner = o.spec?.kind as keyof typeof CLUSTER_GENERATOR_SPECS | undefined;
    const spec =
      inner && CLUSTER_GENERATOR_SPECS[inner] ? o.spec?.generator?.[CLUSTER_GENERATOR_SPECS[inner]] : undefined;
    if (!inner || !spec)
      throw new ReconcileError(
        'InvalidSpec',
        `${where}: ClusterGenerator ${name} has no generator vaultgate serves`,
        NEVER,
      );
    return inner === 'Password'
      ? { kind: inner, spec, label }
      : { kind: inner, spec: spec as VaultDynamicSecretGeneratorSpec, label };
  }
  throw new ReconcileError('InvalidSpec', `${where}.kind ${kind} is not a generator vaultgate serves`, NEVER);
}

/** What minted the credential: a change of any of these means it is not the one asked for. */
function sourceOf(spec: VaultDynamicSecretGeneratorSpec, ref: GeneratorRef): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        ref.kind,
        ref.name,
        spec.provider,
        spec.path,
        spec.method ?? '',
        spec.parameters ?? {},
        spec.resultType ?? 'Data',
      ]),
    )
    .digest('hex')
    .slice(0, 16);
}

/** The Vault session of a generator's provider block: checked as a SecretStore of the ExternalSecret's namespace. */
async function session(
  deps: GeneratorDeps,
  es: EsObject,
  provider: VaultDynamicSecretGeneratorSpec['provider'],
  label: string,
): Promise<VaultRequester> {
  const ns = es.metadata.namespace ?? '';
  const store: StoreObject = {
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: { name: `generator-${label.replace(/\s+/g, '-')}`, namespace: ns },
    spec: { provider: { vault: provider } },
  };
  return (await deps.connector.connect('SecretStore', store, ns)).session;
}

export interface GeneratorRun {
  /** The generator's keys (absent in maintenance, which only keeps leases). */
  data?: Map<string, Buffer>;
  /** The kept lease must be replaced: sync the ExternalSecret now. */
  syncNeeded: boolean;
  /** When the lease needs attention again (ms from now). */
  requeueAfterMs?: number;
}

export interface ExternalSecretGenerators {
  /** dataFrom[index]'s keys at a sync. */
  generate(ctx: ReconcileContext, es: EsObject, index: number): Promise<Map<string, Buffer>>;
  /** Between syncs: renew what is due, revoke what was replaced; say whether a replacement needs a sync. */
  maintain(ctx: ReconcileContext, es: EsObject): Promise<{ syncNeeded: boolean; requeueAfterMs?: number }>;
  /** dataFrom indices naming a VaultDynamicSecret generator, directly or through a ClusterGenerator (read). */
  leased(ctx: ReconcileContext, es: EsObject): Promise<number[]>;
  /** The state Secrets kept for this ExternalSecret: index and lease ids (no value). */
  states(ctx: ReconcileContext, es: EsObject): Promise<GeneratorStateFacts[]>;
  /** Revokes a state Secret's leases (gone already: done), with the provider that minted them. */
  revoke(ctx: ReconcileContext, es: EsObject, state: GeneratorStateFacts): Promise<void>;
}

export function createGenerators(deps: GeneratorDeps): ExternalSecretGenerators {
  return {
    generate: (ctx, es, index) => generate(deps, ctx, es, index),
    maintain: (ctx, es) => maintain(deps, ctx, es),
    leased,
    states,
    revoke: (ctx, es, state) => revoke(deps, ctx, es, state),
  };
}

const whereOf = (index: number): string => `spec.dataFrom[${index}].sourceRef.generatorRef`;

/** dataFrom[index]'s keys at a sync: a new password, or the VaultDynamicSecret generator's kept credential. */
async function generate(
  deps: GeneratorDeps,
  ctx: ReconcileContext,
  es: EsObject,
  index: number,
): Promise<Map<string, Buffer>> {
  const entry = es.spec.dataFrom?.[index];
  const ref = entry ? generatorRefOf(entry) : undefined;
  const where = whereOf(index);
  if (!ref) throw new ReconcileError('InvalidSpec', `${where} is required`, NEVER);
  const r = await resolve(ctx, es.metadata.namespace ?? '', ref, where);
  if (r.kind === 'Password') {
    try {
      return new Map([['password', generatePassword(r.spec)]]);
    } catch (err) {
      throw new ReconcileError('InvalidSpec', `${where}: ${r.label}: ${(err as Error).message}`, NEVER);
    }
  }
  return (await keepCredential(leaseRun(deps, ctx, es, { index, ref, r }), 'generate')).data ?? new Map();
}

/** Between syncs, each VaultDynamicSecret generator's leases: renewed when due, replaced ones revoked. */
async function maintain(
  deps: GeneratorDeps,
  ctx: ReconcileContext,
  es: EsObject,
): Promise<{ syncNeeded: boolean; requeueAfterMs?: number }> {
  let syncNeeded = false;
  let requeueAfterMs: number | undefined;
  for (const [index, entry] of (es.spec.dataFrom ?? []).entries()) {
    const ref = generatorRefOf(entry);
    if (!ref || (ref.kind !== 'VaultDynamicSecret' && ref.kind !== 'ClusterGenerator')) continue;
    try {
      const r = await resolve(ctx, es.metadata.namespace ?? '', ref, whereOf(index));
      if (r.kind !== 'VaultDynamicSecret') continue;
      const run = await keepCredential(leaseRun(deps, ctx, es, { index, ref, r }), 'maintain');
      syncNeeded ||= run.syncNeeded;
      if (run.requeueAfterMs !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, run.requeueAfterMs);
    } catch (err) {
      // The sync reports what fails (Ready=False); here, only look again soon.
      ctx.log.warn(
        { key: `${es.metadata.namespace}/${es.metadata.name}`, reason: reasonOf(err, 'VaultError') },
        'generator: lease not kept',
      );
      requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, 5_000 * 2 ** Math.min(ctx.retries, 6));
    }
  }
  return { syncNeeded, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
}

/** dataFrom indices naming a VaultDynamicSecret generator, directly or through a ClusterGenerator. */
async function leased(ctx: ReconcileContext, es: EsObject): Promise<number[]> {
  const out: number[] = [];
  for (const [index, entry] of (es.spec.dataFrom ?? []).entries()) {
    const ref = generatorRefOf(entry);
    if (ref?.apiVersion !== GENERATOR_API_VERSION) continue;
    if (ref.kind === 'VaultDynamicSecret') out.push(index);
    else if (ref.kind === 'ClusterGenerator' && typeof ref.name === 'string') {
      const o = await ctx.client.get<KubeObject & { spec?: { kind?: string } }>(CLUSTER_GENERATORS, ref.name);
      if (o?.spec?.kind === 'VaultDynamicSecret') out.push(index);
    }
  }
  return out;
}

/** The state Secrets labelled for this ExternalSecret: index and lease ids (no value). */
async function states(ctx: ReconcileContext, es: EsObject): Promise<GeneratorStateFacts[]> {
  const uid = es.metadata.uid;
  if (!uid) return [];
  const list = await ctx.client.list<StateSecret>(SECRETS, {
    namespace: es.metadata.namespace ?? '',
    labelSelector: stateSelector(uid),
  });
  return list.items.flatMap((s) => {
    const index = stateIndexOf(es, s.metadata.name);
    if (index === undefined) return [];
    const kept = keptLeasesOf(s);
    return [
      {
        name: s.metadata.name,
        index,
        leaseIds: [...(kept.lease ? [kept.lease.id] : []), ...kept.previous.map((p) => p.id)],
      },
    ];
  });
}

/** Revokes a state Secret's leases (gone already: done), with the provider that minted them. */
async function revoke(
  deps: GeneratorDeps,
  ctx: ReconcileContext,
  es: EsObject,
  state: GeneratorStateFacts,
): Promise<void> {
  if (state.leaseIds.length === 0) return;
  const ns = es.metadata.namespace ?? '';
  const where = whereOf(state.index);
  const secret = await ctx.client.get<StateSecret>(SECRETS, state.name, ns);
  let provider = providerOf(secret);
  // Kept before the provider was recorded: the generator as it is now, if it still is one.
  if (!provider) {
    const entry = es.spec.dataFrom?.[state.index];
    const ref = entry ? generatorRefOf(entry) : undefined;
    const r = ref ? await resolve(ctx, ns, ref, where) : undefined;
    if (r?.kind === 'VaultDynamicSecret') provider = r.spec.provider;
  }
  if (!provider)
    throw new ReconcileError(
      'LeaseNotRevoked',
      `${where}: the generator that minted the leases of ${state.name} is gone and its provider was not recorded`,
    );
  const vault = await session(deps, es, provider, `state ${state.name}`);
  for (const id of state.leaseIds) {
    try {
      await revokeLease(vault, id);
    } catch (err) {
      if (!isLeaseGone(err)) throw err;
    }
  }
}

/** One VaultDynamicSecret generator entry of one ExternalSecret, as every step of its lease lifecycle needs it. */
interface LeaseRun {
  ctx: ReconcileContext;
  es: EsObject;
  entry: { index: number; ref: GeneratorRef; r: Extract<Resolved, { kind: 'VaultDynamicSecret' }> };
  controllerClass: string;
  now: number;
  /** The generator's Vault session, opened on first use (and tried again after a failure). */
  vault: () => Promise<VaultRequester>;
}

function leaseRun(deps: GeneratorDeps, ctx: ReconcileContext, es: EsObject, entry: LeaseRun['entry']): LeaseRun {
  let vault: VaultRequester | undefined;
  return {
    ctx,
    es,
    entry,
    controllerClass: deps.controllerClass,
    now: deps.now(),
    vault: async () => (vault ??= await session(deps, es, entry.r.spec.provider, entry.r.label)),
  };
}

/** The entry's state Secret, if it is this ExternalSecret's: the kept credential and its leases. */
interface KeptCredential {
  name: string;
  state?: StateSecret;
  data?: Map<string, Buffer>;
  kept: KeptLeases;
}

/** The current credential after acting: its keys and lease; `unleased`: Vault's answer had no lease to keep. */
interface Current {
  data?: Map<string, Buffer>;
  lease?: LeaseState;
  changed: boolean;
  unleased?: boolean;
}

/**
 * The generator's credential, observe → plan → act: the state Secret read, planGeneratorCredential
 * decides, the replaced leases are settled, the current credential minted, renewed or kept, and the state
 * Secret rewritten if anything changed. `maintain` mints nothing and returns no keys.
 */
async function keepCredential(run: LeaseRun, mode: GeneratorCredentialObserved['mode']): Promise<GeneratorRun> {
  const { r, index } = run.entry;
  if (!isOurClass({ controller: r.spec.controller, provider: {} }, run.controllerClass))
    throw new ReconcileError('SecretSyncedError', `generator ${r.label} belongs to another controller class`, NEVER);
  const seen = await observeCredential(run);
  const source = sourceOf(r.spec, run.entry.ref);
  const generator = { index, label: r.label };
  const observed = { mode, now: run.now, generator, source, kept: seen.kept, stored: !!seen.state };
  const plan = planGeneratorCredential(observed);
  const settled = await settlePrevious(run, plan.lifecycle.previous, seen.kept.previous);
  const current = await actOnCurrent(run, seen, plan.step, settled.previous);
  if (current.unleased) return { ...(current.data ? { data: current.data } : {}), syncNeeded: false }; // ESO's behaviour
  const changed = settled.changed || current.changed;
  const kept: KeptLeases = { ...(current.lease ? { lease: current.lease } : {}), previous: settled.previous };
  if (changed) await writeState(run, seen, current.data ?? new Map<string, Buffer>(), kept);
  if (plan.step.op === 'leave-to-sync')
    return { syncNeeded: plan.step.syncNeeded, ...requeueAfter(plan.lifecycle.requeueAfterMs) };
  // When to look again: as the leases now are (a replacement still due: soon).
  const again = generatorLookAgainMs(observed, plan.lifecycle, changed ? kept : undefined);
  return { ...(mode === 'generate' ? { data: current.data } : {}), syncNeeded: false, ...requeueAfter(again) };
}

const requeueAfter = (ms: number | undefined): { requeueAfterMs?: number } =>
  ms !== undefined ? { requeueAfterMs: ms } : {};

async function observeCredential(run: LeaseRun): Promise<KeptCredential> {
  const name = stateSecretName(run.es, run.entry.index);
  const stored = await run.ctx.client.get<StateSecret>(SECRETS, name, run.es.metadata.namespace ?? '');
  if (!isStateOf(stored, run.es.metadata.uid)) return { name, kept: keptLeasesOf(undefined) };
  return { name, state: stored, data: stateDataOf(stored), kept: keptLeasesOf(stored) };
}

/** The replaced leases' steps as planned: forgotten, marked settled, revoked or renewed (gone: forgotten). */
async function settlePrevious(
  run: LeaseRun,
  steps: LifecyclePlan['previous'],
  kept: readonly PreviousLease[],
): Promise<{ previous: PreviousLease[]; changed: boolean }> {
  const previous = [...kept];
  let changed = false;
  for (const step of steps) {
    const i = previous.findIndex((p) => p.id === step.id);
    if (i < 0) continue;
    changed = true;
    if (step.op === 'forget') previous.splice(i, 1);
    else if (step.op === 'settled') previous[i] = { ...previous[i]!, rolloutSettledAt: run.now };
    else {
      try {
        if (step.op === 'revoke') {
          await revokeLease(await run.vault(), step.id);
          previous.splice(i, 1);
        } else {
          const got = await renewLease(await run.vault(), step.id, step.incrementSeconds);
          previous[i] = { ...previous[i]!, renewedAt: run.now, expiresAt: run.now + got.durationSeconds * 1000 };
        }
      } catch (err) {
        if (isLeaseGone(err)) previous.splice(i, 1);
        else
          run.ctx.log.warn(
            {
              key: `${run.es.metadata.namespace ?? ''}/${run.es.metadata.name}`,
              op: step.op,
              reason: reasonOf(err, 'VaultError'),
            },
            'generator: replaced lease not kept',
          );
      }
    }
  }
  return { previous, changed };
}

/** The current credential as planned: minted (a sync only), renewed, or kept as it is. */
async function actOnCurrent(
  run: LeaseRun,
  seen: KeptCredential,
  step: GeneratorCredentialStep,
  previous: PreviousLease[],
): Promise<Current> {
  const lease = seen.kept.lease;
  if (step.op === 'mint') return mint(run, step, lease, previous);
  if (step.op === 'renew' && lease)
    return { ...dataOf(seen), lease: await renew(run, lease, step.incrementSeconds), changed: true };
  return { ...dataOf(seen), ...(lease ? { lease } : {}), changed: false };
}

const dataOf = (seen: KeptCredential): { data?: Map<string, Buffer> } => (seen.data ? { data: seen.data } : {});

/** A new credential from Vault; the one it replaces (appended to `previous`) waits its grace. */
async function mint(
  run: LeaseRun,
  step: Extract<GeneratorCredentialStep, { op: 'mint' }>,
  lease: LeaseState | undefined,
  previous: PreviousLease[],
): Promise<Current> {
  const { r } = run.entry;
  const s = await run.vault();
  const generated = generatedFrom(r.spec, await requestVaultGenerator(s, r.spec));
  if (!generated.lease) return { data: generated.data, changed: false, unleased: true };
  // The minting token's end: Vault revokes the lease with it, so the planner replaces it before then.
  const token = await currentTokenLease(s).catch(() => undefined);
  if (lease && step.retire) previous.push(replacedLease(lease, run.now, step.reason));
  const source = sourceOf(r.spec, run.entry.ref);
  const minted: LeaseState = {
    id: generated.lease.id,
    durationSeconds: generated.lease.durationSeconds,
    renewable: generated.lease.renewable,
    issuedAt: run.now,
    expiresAt: run.now + generated.lease.durationSeconds * 1000,
    ...inheritedMaxTTL(lease, { source, durationSeconds: generated.lease.durationSeconds }),
    ...(token?.accessor ? { tokenAccessor: token.accessor } : {}),
    ...(token?.expireTime !== undefined ? { tokenExpiresAt: token.expireTime } : {}),
    source,
  };
  run.ctx.events.record(run.es, step.event);
  return { data: generated.data, lease: minted, changed: true };
}

async function renew(run: LeaseRun, lease: LeaseState, incrementSeconds: number): Promise<LeaseState> {
  try {
    const got = await renewLease(await run.vault(), lease.id, incrementSeconds);
    return renewedLease(lease, got, incrementSeconds, run.now);
  } catch (err) {
    if (!isLeaseGone(err)) throw err;
    return { ...lease, expiresAt: run.now }; // gone: the next plan replaces it (LeaseLost)
  }
}

/** Creates or rewrites the state Secret: owned by the ExternalSecret (gone with it), never labelled as a target. */
async function writeState(
  run: LeaseRun,
  seen: KeptCredential,
  data: Map<string, Buffer>,
  kept: KeptLeases,
): Promise<void> {
  const { ctx, es } = run;
  const name = seen.name;
  const body = stateSecret(es, name, data, kept, run.entry.r.spec.provider);
  if (seen.state) {
    await ctx.client.apply(SECRETS, body, { force: true });
    return;
  }
  try {
    await ctx.client.create(SECRETS, body);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    throw new ReconcileError('SecretSyncedError', `generator state Secret ${name} appeared meanwhile; looking again`);
  }
}
