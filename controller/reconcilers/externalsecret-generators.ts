// ESO's generators behind an ExternalSecret's dataFrom[].sourceRef.generatorRef (Password,
// VaultDynamicSecret, ClusterGenerator of either), as ESO's handleGenerateSecrets: the generator runs
// when the ExternalSecret syncs (its refreshInterval, a spec change, a force-sync, a target Secret to
// repair), and its keys go through the entry's rewrite.
//
// Password: a new password at every sync, as ESO (its Cleanup does nothing and it keeps no state).
// VaultDynamicSecret: where ESO asks Vault again at every sync, logging in afresh, and never renews or
// revokes (its Cleanup returns nil: credentials die between two refreshes, ESO #2198, #2812), a leased
// answer is kept: renewed at a fraction of its lease, replaced only before Vault's max TTL (or the
// minting token's end), the replaced lease revoked after a grace. The decisions are the VaultDynamicSecret
// kind's planner (vaultdynamicsecret-plan.ts planLifecycle), on state kept in a Secret owned by the
// ExternalSecret (`esgen-<uid>-<i>`: the credential as data, the lease ids and times in an annotation;
// ESO's ExternalSecret status has no field for them and status must hold nothing about a credential).
// A sync returns the kept credential; renewals happen between syncs, at the lease's own pace.
import { createHash } from 'node:crypto';
import { controllerReference } from '../../kube/apply.ts';
import { isAlreadyExists } from '../../kube/errors.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { NEVER, ReconcileError } from '../../kube/reconcile-error.ts';
import type { ReconcileContext } from '../../kube/reconciler.ts';
import { SECRETS } from '../../kube/resources.ts';
import {
  CLUSTER_GENERATORS,
  EXTERNAL_SECRETS,
  PASSWORD_GENERATORS,
  VAULT_DYNAMIC_SECRET_GENERATORS,
} from '../../schemas/resources.ts';
import { CLUSTER_GENERATOR_SPECS, GENERATOR_API_VERSION } from '../../schemas/generator-kinds.ts';
import type { ExternalSecretSpec } from '../../schemas/types.ts';
import type { PasswordSpec, VaultDynamicSecretGeneratorSpec } from '../../schemas/types.generated.ts';
import { generatePassword } from '../../eso/generators/password.ts';
import { generatedFrom, requestVaultGenerator } from '../../eso/generators/vault.ts';
import { currentTokenLease, isLeaseGone, renewLease, revokeLease } from '../../vault/leases.ts';
import type { VaultRequester } from '../../vault/types.ts';
import { VDS_DEFAULTS } from '../../webhook/rules/vaultdynamicsecret.ts';
import { parseGoDuration } from '../../golang/index.ts';
import { reasonOf } from './common.ts';
import { isOurClass } from './lookups.ts';
import type { StoreConnector, StoreObject } from './store-connector.ts';
import type { GeneratorStateFacts } from './externalsecret-plan.ts';
import {
  planLifecycle,
  replacedLease,
  type LeasePolicy,
  type LeaseState,
  type LifecyclePlan,
  type PreviousLease,
} from './vaultdynamicsecret-plan.ts';

/** Annotation on the state Secret: `{lease, previous}` (ids and times only, never a value). */
export const ANNOTATION_GENERATOR_LEASE = 'vaultgate.io/generator-lease';
/** Label on the state Secret: the uid of the ExternalSecret it keeps a credential for. */
export const LABEL_GENERATOR_STATE = 'vaultgate.io/generator-state-for';
/**
 * Annotation on the state Secret: the provider block that minted the lease, so it can be revoked when the
 * generator is gone first (a namespace deleted, a manifest file deleted with kubectl).
 */
export const ANNOTATION_GENERATOR_PROVIDER = 'vaultgate.io/generator-provider';

const ms = (d: string): number => (parseGoDuration(d) as { ok: true; ms: number }).ms;
/**
 * ESO's manifest states no lease policy: the VaultDynamicSecret kind's defaults (renew at 67 % + up to
 * 10 % of the lease, replace 2 min before the max TTL). ExternalSecrets name no rollout targets to wait
 * for: a replaced lease is revoked 1 min after its replacement was written, time for the kubelet to
 * update the Secret in the pods' volumes (its sync period), within the 2 min it had left.
 */
export const GENERATOR_LEASE_POLICY: LeasePolicy = {
  renewAtPercent: VDS_DEFAULTS.renewAtPercent,
  jitterPercent: VDS_DEFAULTS.jitterPercent,
  minValidityMs: ms(VDS_DEFAULTS.minValidity),
  onDelete: false,
  previous: 'AfterRollout',
  graceMs: 60_000,
};

export interface GeneratorDeps {
  /** A connector whose TokenCache does not revoke a token it replaces: Vault revokes the token's leases with it. */
  connector: StoreConnector;
  controllerClass: string;
  now: () => number;
}

type EsObject = KubeObject & { spec: ExternalSecretSpec };
type SecretObject = KubeObject & { data?: Record<string, string> };
type GeneratorRef = { apiVersion?: unknown; kind?: unknown; name?: unknown };
type Resolved =
  | { kind: 'Password'; spec: PasswordSpec; label: string }
  | { kind: 'VaultDynamicSecret'; spec: VaultDynamicSecretGeneratorSpec; label: string };

interface KeptState {
  lease?: LeaseState;
  previous: PreviousLease[];
}

export function generatorRefOf(entry: NonNullable<ExternalSecretSpec['dataFrom']>[number]): GeneratorRef | undefined {
  const ref = entry.sourceRef?.generatorRef as GeneratorRef | undefined;
  return ref && typeof ref === 'object' ? ref : undefined;
}

/** The state Secret of dataFrom[index] (ESO keys its GeneratorState by the index too). */
export function stateSecretName(es: KubeObject, index: number): string {
  return `esgen-${es.metadata.uid ?? es.metadata.name}-${index}`;
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

function keptStateOf(secret: SecretObject | undefined): KeptState {
  const text = secret?.metadata.annotations?.[ANNOTATION_GENERATOR_LEASE];
  if (!text) return { previous: [] };
  try {
    const parsed = JSON.parse(text) as Partial<KeptState>;
    return {
      ...(parsed.lease ? { lease: parsed.lease } : {}),
      previous: Array.isArray(parsed.previous) ? parsed.previous : [],
    };
  } catch {
    return { previous: [] };
  }
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

const b64 = (m: Map<string, Buffer>): Record<string, string> =>
  Object.fromEntries([...m].map(([k, v]) => [k, v.toString('base64')]));
const fromB64 = (d: Record<string, string> | undefined): Map<string, Buffer> =>
  new Map(Object.entries(d ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));

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
  async function runVault(
    ctx: ReconcileContext,
    es: EsObject,
    index: number,
    ref: GeneratorRef,
    r: Extract<Resolved, { kind: 'VaultDynamicSecret' }>,
    mode: 'generate' | 'maintain',
  ): Promise<GeneratorRun> {
    const ns = es.metadata.namespace ?? '';
    if (!isOurClass({ controller: r.spec.controller, provider: {} }, deps.controllerClass))
      throw new ReconcileError('SecretSyncedError', `generator ${r.label} belongs to another controller class`, NEVER);
    const name = stateSecretName(es, index);
    const stored = await ctx.client.get<SecretObject>(SECRETS, name, ns);
    const state = stored && stored.metadata.labels?.[LABEL_GENERATOR_STATE] === es.metadata.uid ? stored : undefined;
    const kept = keptStateOf(state);
    const now = deps.now();
    const planFor = (k: KeptState, present: boolean): LifecyclePlan =>
      planLifecycle({
        now,
        deleting: false,
        policy: GENERATOR_LEASE_POLICY,
        source: sourceOf(r.spec, ref),
        ...(k.lease ? { lease: k.lease } : {}),
        previous: k.previous,
        target: present ? 'current' : 'missing',
        ...(k.lease && present ? { copyLeaseId: k.lease.id } : {}),
        rollout: 'settled',
      });
    const plan = planFor(kept, state !== undefined);
    let vault: VaultRequester | undefined;
    const v = async (): Promise<VaultRequester> => (vault ??= await session(deps, es, r.spec.provider, r.label));
    let lease = kept.lease;
    const previous = [...kept.previous];
    let changed = false;
    for (const step of plan.previous) {
      const i = previous.findIndex((p) => p.id === step.id);
      if (i < 0) continue;
      if (step.op === 'forget') previous.splice(i, 1);
      else if (step.op === 'settled') previous[i] = { ...previous[i]!, rolloutSettledAt: now };
      else {
        try {
          if (step.op === 'revoke') {
            await revokeLease(await v(), step.id);
            previous.splice(i, 1);
          } else {
            const got = await renewLease(await v(), step.id, step.incrementSeconds);
            previous[i] = { ...previous[i]!, renewedAt: now, expiresAt: now + got.durationSeconds * 1000 };
          }
        } catch (err) {
          if (isLeaseGone(err)) previous.splice(i, 1);
          else
            ctx.log.warn(
              { key: `${ns}/${es.metadata.name}`, op: step.op, reason: reasonOf(err, 'VaultError') },
              'generator: replaced lease not kept',
            );
        }
      }
      changed = true;
    }
    const main = plan.main;
    let data = state ? fromB64(state.data) : undefined;
    const replace = main.type === 'mint' || !data;
    if (replace && mode === 'maintain') {
      if (changed)
        await writeState(ctx, es, name, state, data ?? new Map<string, Buffer>(), r.spec.provider, {
          ...(lease ? { lease } : {}),
          previous,
        });
      return {
        syncNeeded: lease !== undefined,
        ...(plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : {}),
      };
    }
    if (replace) {
      const s = await v();
      const generated = generatedFrom(r.spec, await requestVaultGenerator(s, r.spec));
      data = generated.data;
      if (!generated.lease) return { data, syncNeeded: false }; // nothing to keep: ESO's behaviour
      // The minting token's end: Vault revokes the lease with it, so the planner replaces it before then.
      const token = await currentTokenLease(s).catch(() => undefined);
      if (lease && !(main.type === 'mint' && main.reason === 'LeaseLost'))
        previous.push(replacedLease(lease, now, main.type === 'mint' ? main.reason : 'SecretLost'));
      lease = {
        id: generated.lease.id,
        durationSeconds: generated.lease.durationSeconds,
        renewable: generated.lease.renewable,
        issuedAt: now,
        expiresAt: now + generated.lease.durationSeconds * 1000,
        ...(token?.accessor ? { tokenAccessor: token.accessor } : {}),
        ...(token?.expireTime !== undefined ? { tokenExpiresAt: token.expireTime } : {}),
        source: sourceOf(r.spec, ref),
      };
      ctx.events.record(es, {
        type: 'Normal',
        reason: kept.lease ? 'CredentialRotated' : 'CredentialIssued',
        note: `spec.dataFrom[${index}]: generator ${r.label} issued a new leased credential${kept.lease ? ` (${main.type === 'mint' ? main.reason : 'SecretLost'})` : ''}`,
      });
      changed = true;
    } else if (main.type === 'renew' && lease) {
      try {
        const got = await renewLease(await v(), lease.id, main.incrementSeconds);
        const expiresAt = now + got.durationSeconds * 1000;
        // Vault granted less than asked: the max TTL ends the lease then (vault/leases.ts).
        const capped = got.durationSeconds < main.incrementSeconds - 1;
        lease = {
          ...lease,
          renewable: got.renewable,
          renewedAt: now,
          expiresAt,
          ...(capped ? { maxExpiresAt: expiresAt } : {}),
        };
      } catch (err) {
        if (!isLeaseGone(err)) throw err;
        lease = { ...lease, expiresAt: now }; // gone: the next plan replaces it (LeaseLost)
      }
      changed = true;
    }
    if (changed)
      await writeState(ctx, es, name, state, data ?? new Map<string, Buffer>(), r.spec.provider, {
        ...(lease ? { lease } : {}),
        previous,
      });
    // When to look again: the plan for the state as it now is (a replacement still due: soon).
    const next = changed ? planFor({ ...(lease ? { lease } : {}), previous }, true) : plan;
    const again = next.main.type === 'noop' ? next.requeueAfterMs : 1_000;
    return {
      ...(mode === 'generate' ? { data } : {}),
      syncNeeded: false,
      ...(again !== undefined ? { requeueAfterMs: again } : {}),
    };
  }

  return {
    async generate(ctx, es, index) {
      const entry = es.spec.dataFrom?.[index];
      const ref = entry ? generatorRefOf(entry) : undefined;
      const where = `spec.dataFrom[${index}].sourceRef.generatorRef`;
      if (!ref) throw new ReconcileError('InvalidSpec', `${where} is required`, NEVER);
      const r = await resolve(ctx, es.metadata.namespace ?? '', ref, where);
      if (r.kind === 'Password') {
        try {
          return new Map([['password', generatePassword(r.spec)]]);
        } catch (err) {
          throw new ReconcileError('InvalidSpec', `${where}: ${r.label}: ${(err as Error).message}`, NEVER);
        }
      }
      return (await runVault(ctx, es, index, ref, r, 'generate')).data ?? new Map();
    },
    async maintain(ctx, es) {
      let syncNeeded = false;
      let requeueAfterMs: number | undefined;
      for (const [index, entry] of (es.spec.dataFrom ?? []).entries()) {
        const ref = generatorRefOf(entry);
        if (!ref || (ref.kind !== 'VaultDynamicSecret' && ref.kind !== 'ClusterGenerator')) continue;
        try {
          const r = await resolve(
            ctx,
            es.metadata.namespace ?? '',
            ref,
            `spec.dataFrom[${index}].sourceRef.generatorRef`,
          );
          if (r.kind !== 'VaultDynamicSecret') continue;
          const run = await runVault(ctx, es, index, ref, r, 'maintain');
          syncNeeded ||= run.syncNeeded;
          if (run.requeueAfterMs !== undefined)
            requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, run.requeueAfterMs);
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
    },
    async leased(ctx, es) {
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
    },
    async states(ctx, es) {
      const uid = es.metadata.uid;
      if (!uid) return [];
      const prefix = `${stateSecretName(es, 0).slice(0, -1)}`;
      const list = await ctx.client.list<SecretObject>(SECRETS, {
        namespace: es.metadata.namespace ?? '',
        labelSelector: `${LABEL_GENERATOR_STATE}=${uid}`,
      });
      return list.items
        .filter((s) => s.metadata.name.startsWith(prefix) && /^[0-9]+$/.test(s.metadata.name.slice(prefix.length)))
        .map((s) => {
          const kept = keptStateOf(s);
          return {
            name: s.metadata.name,
            index: Number(s.metadata.name.slice(prefix.length)),
            leaseIds: [...(kept.lease ? [kept.lease.id] : []), ...kept.previous.map((p) => p.id)],
          };
        });
    },
    async revoke(ctx, es, state) {
      if (state.leaseIds.length === 0) return;
      const ns = es.metadata.namespace ?? '';
      const where = `spec.dataFrom[${state.index}].sourceRef.generatorRef`;
      const secret = await ctx.client.get<SecretObject>(SECRETS, state.name, ns);
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
    },
  };
}

function providerOf(secret: SecretObject | undefined): VaultDynamicSecretGeneratorSpec['provider'] | undefined {
  const text = secret?.metadata.annotations?.[ANNOTATION_GENERATOR_PROVIDER];
  if (!text) return undefined;
  try {
    const p = JSON.parse(text) as unknown;
    return p && typeof p === 'object' && !Array.isArray(p)
      ? (p as VaultDynamicSecretGeneratorSpec['provider'])
      : undefined;
  } catch {
    return undefined;
  }
}

/** Creates or rewrites the state Secret: owned by the ExternalSecret (gone with it), never labelled as a target. */
async function writeState(
  ctx: ReconcileContext,
  es: EsObject,
  name: string,
  existing: SecretObject | undefined,
  data: Map<string, Buffer>,
  provider: VaultDynamicSecretGeneratorSpec['provider'],
  kept: KeptState,
): Promise<void> {
  const body: SecretObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: es.metadata.namespace,
      labels: { [LABEL_GENERATOR_STATE]: es.metadata.uid ?? '' },
      annotations: {
        [ANNOTATION_GENERATOR_LEASE]: JSON.stringify(kept),
        [ANNOTATION_GENERATOR_PROVIDER]: JSON.stringify(provider),
      },
      ownerReferences: [controllerReference(EXTERNAL_SECRETS, es)],
    },
    type: 'Opaque',
    data: b64(data),
  };
  if (existing) {
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
