// ExternalSecret → Secret, with ESO's semantics (its v1 ExternalSecret spec): data/dataFrom from Vault through the
// store's own identity, target.template (engine v2), creationPolicy Owner/Orphan/Merge/CreateOrMerge/None,
// deletionPolicy Retain/Delete/Merge, refreshInterval/refreshPolicy/force-sync, the managed label and
// the data-hash annotation, ClusterSecretStore conditions, ESO's condition reasons.
//
// observe → plan → act: `observe` gathers what is (the target Secret and whose it is, the refresh clock,
// then the provider's data and the rendered Secret as the plan asks for them), `planExternalSecret`
// (externalsecret-plan.ts, pure) decides, `act` carries it out. Level-triggered and write-avoiding: the
// Secret is written only when it differs from what it should be (a hand-edited one is repaired: its data
// no longer matches its hash). If Vault fails, the Secret keeps its last good data: nothing is written,
// Ready=False/SecretSyncedError says what failed (never a value).
import type { ExternalSecretSpec, SecretStoreRef } from '../../schemas/types.ts';
import { getCondition, setCondition, timestamp } from '../../kube/conditions.ts';
import { isAlreadyExists, isNotFound } from '../../kube/errors.ts';
import { controllerReference } from '../../kube/apply.ts';
import type { Condition, KubeObject } from '../../kube/objects.ts';
import type { OwnWrites } from '../../kube/own-writes.ts';
import { storedSecretData, type CachedSecret } from '../../kube/cache-transform.ts';
import { BACKOFF, NEVER, ReconcileError } from '../../kube/reconcile-error.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { NAMESPACES, SECRETS } from '../../kube/resources.ts';
import { CLUSTER_SECRET_STORES, EXTERNAL_SECRETS, SECRET_STORES } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings } from './common.ts';
import { errorPolicy } from './error-policy.ts';
import {
  ADOPT_SECRET_ANNOTATION,
  GENERATOR_FINALIZER,
  GENERATOR_REVOKE_ATTEMPTS,
  LABEL_CREATED_FOR,
  planExternalSecret,
  planGeneratorLeases,
  planStepFailure,
  writePolicyOf,
  type EsDesired,
  type EsObserved,
  type EsPlan,
  type EsSettings,
  type EsStep,
  type Failed,
  type GeneratorLeasesObserved,
  type GeneratorLeasesPlan,
  type WritePolicy,
} from './externalsecret-plan.ts';
import type { CoalescingKvReader } from './kv-reader.ts';
import { providerSecretData, type SecretSource } from '../../eso/provider-data.ts';
import {
  nextRefreshInMs,
  refreshIntervalMs,
  shouldRefresh,
  syncedResourceVersion,
  type RefreshInput,
} from '../../eso/refresh.ts';
import { storeAllowsNamespace } from '../../eso/store-conditions.ts';
import {
  ANNOTATION_DATA_HASH,
  ANNOTATION_FORCE_SYNC,
  createdByLabel,
  dataHash,
  LABEL_CREATED_BY,
  LABEL_MANAGED,
  type DesiredSecret,
} from '../../eso/target.ts';
import { inProcessRenderer, type SecretRenderer } from './render-pool.ts';
import { isOurClass, tryCache } from './lookups.ts';
import type { StoreConnector, StoreKind, StoreObject } from './store-connector.ts';
import { readTemplateSources, RenderedSourceVersions, type ReadTemplateSources } from './template-sources.ts';
import { TemplateSourceMissingError } from '../../eso/target-template.ts';
import { withoutSecrets } from './secret-forms.ts';
import { createGenerators, generatorRefOf, type ExternalSecretGenerators } from './externalsecret-generators.ts';
import { hasFinalizer, withFinalizer } from '../../kube/finalizer.ts';

export { ADOPT_SECRET_ANNOTATION, LABEL_CREATED_FOR };

export interface ExternalSecretObject extends KubeObject {
  spec: ExternalSecretSpec;
}

// From the cache without its values (`dataDigest`, main.ts), or read with a GET (`data`): storedSecretData reads both.
interface SecretObject extends CachedSecret {
  type?: string;
  data?: Record<string, string>;
  immutable?: boolean;
}

/** Index on ExternalSecrets: every store they read from, `SecretStore/<ns>/<name>` or `ClusterSecretStore/<name>`. */
export const STORE_INDEX = 'store';
/** Index on ExternalSecrets: `namespace/targetSecretName`, so a Secret event finds its ExternalSecret whatever the creationPolicy. */
export const TARGET_INDEX = 'target';

export function storeKey(ref: SecretStoreRef | undefined, namespace: string): string {
  const kind = ref?.kind ?? 'SecretStore';
  return kind === 'ClusterSecretStore'
    ? `ClusterSecretStore/${ref?.name ?? ''}`
    : `SecretStore/${namespace}/${ref?.name ?? ''}`;
}

export function storeIndex(obj: KubeObject): string[] {
  const es = obj as ExternalSecretObject;
  const ns = obj.metadata.namespace ?? '';
  const refs = [
    es.spec?.secretStoreRef,
    ...(es.spec?.data ?? []).map((d) => d.sourceRef?.storeRef),
    ...(es.spec?.dataFrom ?? []).map((d) => d.sourceRef?.storeRef),
  ];
  return [...new Set(refs.filter((r): r is SecretStoreRef => r !== undefined).map((r) => storeKey(r, ns)))];
}

export function targetIndex(obj: KubeObject): string[] {
  const es = obj as ExternalSecretObject;
  return [`${obj.metadata.namespace}/${es.spec?.target?.name ?? obj.metadata.name}`];
}

export interface ExternalSecretDeps {
  connector: StoreConnector;
  reader: CoalescingKvReader;
  controllerClass: string;
  namePrefix: string;
  /** Reads younger than this are shared between ExternalSecrets syncing for a new or changed spec. Default 30 s. */
  coalesceWindowMs?: number;
  /** Periodic refreshes accept reads up to this fraction of their interval old (the jitter window). Default 0.2. */
  refreshWindowFraction?: number;
  /** Upper bound on that age. Default 15 min. */
  maxRefreshWindowMs?: number;
  /** Retry delay when the target Secret of creationPolicy Merge does not exist yet. Default 30 s. */
  missingTargetRetryMs?: number;
  /** Each target Secret write, so the Secret watch drops its own event (kube/own-writes.ts). */
  ownSecretWrites?: OwnWrites;
  /**
   * The connector for dataFrom[].sourceRef.generatorRef's VaultDynamicSecret generators: its TokenCache must
   * not revoke a token it replaces (Vault revokes the token's leases with it). Default: `connector`.
   */
  generatorConnector?: StoreConnector;
  /** Renders target.template (the controller's render pool: worker threads, a deadline). Default: in process. */
  renderer?: SecretRenderer;
  now?: () => Date;
}

type EsStatus = {
  refreshTime?: string | null;
  syncedResourceVersion?: string;
  binding?: { name?: string };
  conditions?: Condition[];
};

/** What one reconcile saw: the plan's facts (`observed`) and what acting needs besides (the objects, the data). */
interface Seen {
  es: ExternalSecretObject;
  key: string;
  t: Date;
  observed: EsObserved;
  existing?: SecretObject;
  templateSources?: ReadTemplateSources;
  refreshIn: RefreshInput;
  /** Every value read from Vault or rendered in this reconcile: no status, Event or log line may contain one. */
  secretTexts: string[];
  data?: Map<string, Buffer>;
  desired?: DesiredSecret;
}

/** What every step of a reconcile reads: the deps with their defaults, and what is kept between reconciles. */
interface EsContext {
  deps: ExternalSecretDeps;
  settings: EsSettings;
  generators: ExternalSecretGenerators;
  renderer: SecretRenderer;
  /** The templateFrom sources each ExternalSecret was last rendered from. */
  sourceVersions: RenderedSourceVersions;
  now: () => Date;
}

export function createExternalSecretReconciler(deps: ExternalSecretDeps): Reconciler {
  const c = esContext(deps);
  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const es = ctx.cache<ExternalSecretObject>(EXTERNAL_SECRETS).get(key);
    if (!es) return DONE;
    const finalizer = hasFinalizer(es, GENERATOR_FINALIZER);
    // Owner Secrets go with it by garbage collection; without our finalizer nothing of it is left to revoke.
    if (es.metadata.deletionTimestamp && !finalizer) return DONE;
    const deleting = es.metadata.deletionTimestamp !== undefined;
    const d = deleting ? undefined : desiredOf(es, ctx, deps);
    const seen = d ? await observe(c, ctx, es, d, key) : undefined;
    const leases = await observeGeneratorLeases(c, ctx, es, seen && d ? { d, seen } : undefined);
    // Neither a generator's lease nor our finalizer: the plain sync (every ExternalSecret without generators).
    if (d && seen && !finalizer && leases.leased.length === 0) return sync(c, ctx, d, seen);
    let lp = planGeneratorLeases(leases);
    if (lp.list) lp = planGeneratorLeases({ ...leases, states: await c.generators.states(ctx, es) });
    const apply = async (o: ExternalSecretObject): Promise<Result> => {
      const result = await sync(c, ctx, d!, { ...seen!, es: o });
      if (lp.revoke.length === 0) return result;
      await revokeGeneratorLeases(c, ctx, o, lp, true);
      return lp.again ? requeueAfter(Math.min(result.requeueAfterMs ?? Infinity, 1_000)) : result;
    };
    const cleanup = (o: ExternalSecretObject): Promise<void> => revokeGeneratorLeases(c, ctx, o, lp, false);
    return withFinalizer(
      ctx.client,
      EXTERNAL_SECRETS,
      es,
      { apply, cleanup },
      { name: GENERATOR_FINALIZER, wanted: lp.finalizer },
    );
  };
}

function esContext(deps: ExternalSecretDeps): EsContext {
  const now = deps.now ?? (() => new Date());
  return {
    deps,
    settings: {
      missingTargetRetryMs: deps.missingTargetRetryMs ?? 30_000,
      coalesceWindowMs: deps.coalesceWindowMs ?? 30_000,
      refreshWindowFraction: deps.refreshWindowFraction ?? 0.2,
      maxRefreshWindowMs: deps.maxRefreshWindowMs ?? 900_000,
    },
    generators: createGenerators({
      connector: deps.generatorConnector ?? deps.connector,
      controllerClass: deps.controllerClass,
      now: () => now().getTime(),
    }),
    renderer: deps.renderer ?? inProcessRenderer(),
    sourceVersions: new RenderedSourceVersions(),
    now,
  };
}

/**
 * One sync, observe → plan → act: the generators' leases kept (a replacement makes the sync due), then
 * planned again as the provider is read and the Secret rendered, then acted on.
 */
async function sync(c: EsContext, ctx: ReconcileContext, d: EsDesired, seen: Seen): Promise<Result> {
  // Generators' leases are kept between syncs, at their own pace; a replacement makes the sync due.
  const kept =
    d.refused === undefined && !seen.observed.anotherControllersStore && usesGenerators(seen.es)
      ? await c.generators.maintain(ctx, seen.es)
      : undefined;
  if (kept?.syncNeeded) seen.observed.refresh.due = true;
  let plan = planExternalSecret(d, seen.observed, c.settings);
  const read = plan.steps.find((s): s is Extract<EsStep, { read: unknown }> => typeof s === 'object' && 'read' in s);
  if (read) {
    await readProvider(c, ctx, seen, read.read);
    plan = planExternalSecret(d, seen.observed, c.settings);
  }
  if (plan.steps.includes('render')) {
    await render(c, ctx, seen, d);
    plan = planExternalSecret(d, seen.observed, c.settings);
  }
  const result = await act(c, ctx, seen, d, plan);
  // The read may have minted (a first credential, a replacement): when its lease needs attention comes from
  // the leases as they are now; before, the sync asked only for its refresh, and a lease minted by it went
  // unrenewed until some other event (test/real/dynamic-secret-pods.test.ts: dead 60 s after a rotation).
  // Only then: a maintain pass that already said when (a kept lease, nothing to mint) is not repeated.
  const minted = kept !== undefined && read !== undefined && (kept.syncNeeded || kept.requeueAfterMs === undefined);
  const leases = minted ? await c.generators.maintain(ctx, seen.es) : kept;
  if (leases?.requeueAfterMs === undefined) return result;
  return requeueAfter(Math.min(result.requeueAfterMs ?? Infinity, leases.requeueAfterMs));
}

/** What planGeneratorLeases needs before the state Secrets are listed (a deleted ExternalSecret: `live` absent). */
async function observeGeneratorLeases(
  c: EsContext,
  ctx: ReconcileContext,
  es: ExternalSecretObject,
  live: { d: EsDesired; seen: Seen } | undefined,
): Promise<GeneratorLeasesObserved> {
  const observed: GeneratorLeasesObserved = {
    deleting: live === undefined,
    serving: false,
    finalizer: hasFinalizer(es, GENERATOR_FINALIZER),
    leased: [],
    syncDue: false,
    retries: ctx.retries,
  };
  if (!live) return observed;
  return {
    ...observed,
    serving: live.d.refused === undefined && !live.seen.observed.anotherControllersStore,
    leased: await c.generators.leased(ctx, es),
    syncDue: live.seen.observed.refresh.due,
  };
}

/**
 * The planned revocations: after a sync (`live`: each state Secret deleted once its leases are revoked)
 * or before the finalizer goes. A failure is retried while attempts last, then left to expire (a Warning).
 */
async function revokeGeneratorLeases(
  c: EsContext,
  ctx: ReconcileContext,
  o: ExternalSecretObject,
  lp: GeneratorLeasesPlan,
  live: boolean,
): Promise<void> {
  for (const r of lp.revoke) {
    try {
      await c.generators.revoke(ctx, o, r);
    } catch (err) {
      const why = errorPolicy(err, 'VaultError');
      // A ReconcileError: withFinalizer takes a thrown NotFound (a ServiceAccount gone with its
      // namespace, the TokenRequest's 404) for the object gone, and would stop retrying.
      if (lp.onRevokeFailure === 'retry') throw new ReconcileError(why.reason, why.message, BACKOFF, { cause: err });
      ctx.events.record(o, {
        type: 'Warning',
        reason: 'LeaseNotRevoked',
        note: `could not revoke ${r.leaseIds.length} lease(s) of generator state ${r.name} after ${GENERATOR_REVOKE_ATTEMPTS} attempts (${why.reason}: ${why.message}); they expire unrenewed`,
        action: live ? 'Revoke' : 'Delete',
      });
    }
    if (live)
      await ctx.client.delete(SECRETS, r.name, o.metadata.namespace).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }
}

function usesGenerators(es: ExternalSecretObject): boolean {
  return (es.spec.dataFrom ?? []).some((e) => generatorRefOf(e) !== undefined);
}

/** What the spec asks for, or why it is refused (admission's re-check; an unreadable refreshInterval). */
function desiredOf(es: ExternalSecretObject, ctx: ReconcileContext, deps: ExternalSecretDeps): EsDesired {
  const spec = es.spec;
  const denials = admissionDenials(
    es,
    admissionContext({
      namespaces: tryCache(ctx, NAMESPACES),
      namePrefix: deps.namePrefix,
      controllerClass: deps.controllerClass,
    }),
  );
  let refused = denials.length > 0 ? `refused: ${describeFindings(denials)}` : undefined;
  let intervalMs = 0;
  try {
    intervalMs = refreshIntervalMs(spec.refreshInterval);
  } catch (e) {
    refused ??= errorPolicy(e).message;
  }
  return {
    namespace: es.metadata.namespace ?? '',
    targetName: spec.target?.name ?? es.metadata.name,
    creationPolicy: spec.target?.creationPolicy ?? 'Owner',
    deletionPolicy: spec.target?.deletionPolicy ?? 'Retain',
    intervalMs,
    ...(refused !== undefined ? { refused } : {}),
    adopt: wantsSecretAdoption(es),
  };
}

/**
 * The target Secret, whose it is, and the refresh clock. The target and the templateFrom sources are
 * looked up only for an ExternalSecret that is ours and admitted: the plan's first two questions need neither.
 */
async function observe(
  c: EsContext,
  ctx: ReconcileContext,
  es: ExternalSecretObject,
  d: EsDesired,
  key: string,
): Promise<Seen> {
  const t = c.now();
  const status = (es.status ?? {}) as EsStatus;
  const generation = es.metadata.generation ?? 0;
  const refreshIn: RefreshInput = {
    uid: es.metadata.uid ?? '',
    generation,
    labels: es.metadata.labels,
    annotations: es.metadata.annotations,
    refreshInterval: es.spec.refreshInterval,
    refreshPolicy: es.spec.refreshPolicy,
    syncedResourceVersion: status.syncedResourceVersion,
    refreshTime: status.refreshTime,
    ...(es.spec.syncWindows ? { syncWindows: es.spec.syncWindows } : {}),
  };
  const syncedThisGeneration = status.syncedResourceVersion?.split('-')[0] === String(generation);
  const observed: EsObserved = {
    anotherControllersStore: anotherControllersStore(ctx, es, c.deps.controllerClass),
    refresh: {
      due: shouldRefresh(refreshIn, t.getTime()),
      nextMs: nextRefreshInMs(refreshIn, t.getTime()),
      readyThisGeneration: getCondition(status.conditions, 'Ready')?.status === 'True' && syncedThisGeneration,
      ...(status.syncedResourceVersion !== undefined ? { syncedRv: status.syncedResourceVersion } : {}),
      generation,
      currentRv: syncedResourceVersion(generation, es.metadata.labels, es.metadata.annotations),
      ...(es.metadata.annotations?.[ANNOTATION_FORCE_SYNC] !== undefined
        ? { forceSyncValue: es.metadata.annotations[ANNOTATION_FORCE_SYNC] }
        : {}),
    },
  };
  const seen: Seen = { es, key, t, observed, refreshIn, secretTexts: [] };
  if (observed.anotherControllersStore || d.refused !== undefined) return seen;

  // The cache holds only Secrets labelled as managed (main.ts); one we have not labelled (yet), or whose
  // label was removed, needs a GET.
  seen.existing = ctx.cache<SecretObject>(SECRETS).get(`${d.namespace}/${d.targetName}`);
  if (!seen.existing && d.creationPolicy !== 'None')
    seen.existing = await ctx.client.get<SecretObject>(SECRETS, d.targetName, d.namespace);
  // templateFrom ConfigMaps/Secrets as they are now: a changed one makes the Secret out of date.
  seen.templateSources = await readTemplateSources(ctx, d.namespace, es.spec.target);
  seen.secretTexts.push(...seen.templateSources.secretTexts);
  if (seen.existing)
    observed.target = targetFacts(seen.existing, es, c.sourceVersions.current(key, seen.templateSources));
  return seen;
}

function targetFacts(secret: SecretObject, es: KubeObject, sourcesCurrent: boolean): NonNullable<EsObserved['target']> {
  const hash = secret.metadata.annotations?.[ANNOTATION_DATA_HASH];
  const hashMatches = hash === storedSecretData(secret).hash(dataHash);
  return {
    createdByUs: createdByUs(secret, es),
    controlledByUs: isControlledBy(secret, es),
    controlledByOther: otherController(secret, es),
    // A target without the managed label is outside the Secret cache: hand edits to it would go unseen,
    // so it is not valid until re-labelled (ESO patches the label back the same way).
    valid: secret.metadata.labels?.[LABEL_MANAGED] === 'true' && hashMatches && sourcesCurrent,
    editedByHand: hash !== undefined && !hashMatches,
  };
}

/** Any store of another controller class makes the ExternalSecret another controller's (unknown stores do not count). */
function anotherControllersStore(ctx: ReconcileContext, es: ExternalSecretObject, controllerClass: string): boolean {
  const ns = es.metadata.namespace ?? '';
  return storeRefs(es.spec).some((ref) => {
    const store = ref?.name ? lookupStore(ctx, ref, ns).store : undefined;
    return store !== undefined && !isOurClass(store.spec, controllerClass);
  });
}

function storeRefs(spec: ExternalSecretSpec | undefined): Array<SecretStoreRef | undefined> {
  return [
    spec?.secretStoreRef,
    ...(spec?.data ?? []).map((d) => d.sourceRef?.storeRef),
    ...(spec?.dataFrom ?? []).map((d) => d.sourceRef?.storeRef),
  ];
}

function failedAs(err: unknown): Failed {
  return {
    failed: errorPolicy(err, 'SecretSyncedError'),
    templateSourceMissing: err instanceof TemplateSourceMissingError,
  };
}

/** The provider's data, through each store's own session (one per store, opened on first use). */
async function readProvider(
  c: EsContext,
  ctx: ReconcileContext,
  seen: Seen,
  age: { maxAgeMs: number; shareTag?: string },
): Promise<void> {
  const ns = seen.es.metadata.namespace ?? '';
  const sources = new Map<string, Promise<SecretSource>>();
  const sourceFor = (ref: SecretStoreRef | undefined): Promise<SecretSource> => {
    const k = storeKey(ref, ns);
    let s = sources.get(k);
    if (!s) sources.set(k, (s = openSource(ctx, c.deps, ref, ns, age)));
    return s;
  };
  try {
    const provider = await providerSecretData(seen.es.spec, sourceFor, (i) => c.generators.generate(ctx, seen.es, i));
    seen.data = provider.data;
    for (const v of provider.data.values()) seen.secretTexts.push(v.toString('utf8'));
    seen.observed.provider = { keys: provider.data.size, missing: provider.missing.length };
  } catch (err) {
    seen.observed.provider = failedAs(err);
  }
}

/**
 * The Secret the spec renders, and whether the target already is that Secret. A Merge target with other
 * keys is read with a GET first: the cache keeps no values, and the data-hash covers them too.
 */
async function render(c: EsContext, ctx: ReconcileContext, seen: Seen, d: EsDesired): Promise<void> {
  try {
    seen.desired = await c.renderer.desiredSecret(
      d.namespace,
      seen.es.spec.target,
      seen.data ?? new Map<string, Buffer>(),
      seen.es.metadata,
      seen.templateSources?.sources,
    );
  } catch (err) {
    seen.observed.rendered = failedAs(err);
    return;
  }
  for (const v of seen.desired.data.values()) seen.secretTexts.push(v.toString('utf8'));
  if (!seen.existing || d.creationPolicy === 'None') {
    seen.observed.rendered = { matches: false };
    return;
  }
  const policy = writePolicyOf(d, true);
  let target = targetSecret(seen.es, policy, seen.desired, seen.existing);
  if (target.needsValues) {
    const live = await ctx.client.get<SecretObject>(SECRETS, d.targetName, d.namespace);
    if (!live) {
      delete seen.existing;
      delete seen.observed.target;
      seen.observed.rendered = { matches: false };
      return;
    }
    seen.existing = live;
    target = targetSecret(seen.es, policy, seen.desired, live);
  }
  seen.observed.rendered = { matches: target.matches };
}

/** Carry out the plan: its steps, then the status, the Events, and when to look again. */
async function act(c: EsContext, ctx: ReconcileContext, seen: Seen, d: EsDesired, plan: EsPlan): Promise<Result> {
  for (const step of plan.steps) {
    try {
      if (step === 'delete-secret')
        await ctx.client.delete(SECRETS, d.targetName, d.namespace, {
          preconditions: { uid: seen.existing?.metadata.uid },
        });
      else if (step === 'add-template-finalizers')
        await addTemplateFinalizers(
          ctx,
          d.namespace,
          d.targetName,
          seen.es.spec.target?.template?.metadata?.finalizers,
          seen.existing,
        );
      else if (typeof step === 'object' && 'write' in step)
        await writeTarget(ctx, seen, d, step.write, c.deps.ownSecretWrites);
    } catch (err) {
      const failure = {
        failed: errorPolicy(err, 'SecretSyncedError'),
        notFound: isNotFound(err),
        alreadyExists: isAlreadyExists(err),
      };
      return act(c, ctx, seen, d, planStepFailure(d, step, seen.existing !== undefined, failure, c.settings));
    }
  }
  if (plan.status)
    await writeStatus(
      ctx,
      seen,
      d,
      { ...plan.status.ready, message: withoutSecrets(plan.status.ready.message, seen.secretTexts) },
      plan.status.refreshed,
    );
  for (const e of plan.events) ctx.events.record(seen.es, { ...e, note: withoutSecrets(e.note, seen.secretTexts) });
  if (plan.steps.includes('add-template-finalizers')) c.sourceVersions.remember(seen.key, seen.templateSources!);
  return then(plan, d, seen);
}

function then(plan: EsPlan, d: EsDesired, seen: Seen): Result {
  const next = (ms: number | undefined): Result => (ms === undefined ? DONE : requeueAfter(ms + 1));
  switch (typeof plan.then === 'string' ? plan.then : plan.then.kind) {
    case 'done':
      return DONE;
    case 'next':
      return next(seen.observed.refresh.nextMs);
    // After a sync the refresh clock restarts now.
    case 'schedule':
      return next(
        nextRefreshInMs(
          { ...seen.refreshIn, refreshTime: timestamp(seen.t), syncedResourceVersion: seen.observed.refresh.currentRv },
          seen.t.getTime(),
        ),
      );
    // Rethrown with the status's own reason and message (never a value): the work queue's backoff.
    case 'backoff':
      throw new ReconcileError(
        plan.status?.ready.reason ?? 'SecretSyncedError',
        withoutSecrets(plan.status?.ready.message ?? '', seen.secretTexts),
      );
    case 'after':
      return requeueAfter((plan.then as { ms: number }).ms);
    default:
      return d.intervalMs > 0 ? requeueAfter(d.intervalMs) : DONE; // never: the periodic refresh only
  }
}

async function writeStatus(
  ctx: ReconcileContext,
  seen: Seen,
  d: EsDesired,
  ready: { status: Condition['status']; reason: string; message: string },
  refreshed: boolean,
): Promise<void> {
  const status = (seen.es.status ?? {}) as EsStatus;
  // Only fields ESO's CRD declares: with ESO's own CRDs installed, the apiserver refuses any other field in
  // an apply (no observedGeneration here; syncedResourceVersion carries the generation).
  const next: Record<string, unknown> = {
    refreshTime: refreshed ? timestamp(seen.t) : (status.refreshTime ?? null),
    syncedResourceVersion: refreshed ? seen.observed.refresh.currentRv : status.syncedResourceVersion,
    binding: { name: d.creationPolicy === 'None' ? '' : d.targetName },
    conditions: setCondition(status.conditions, { type: 'Ready', ...ready }, undefined, seen.t),
  };
  if (next.syncedResourceVersion === undefined) delete next.syncedResourceVersion;
  await applyStatus(ctx.client, EXTERNAL_SECRETS, seen.es, next);
}

function lookupStore(
  ctx: ReconcileContext,
  ref: SecretStoreRef | undefined,
  ns: string,
): { kind: StoreKind; store?: StoreObject; watched: boolean } {
  const kind: StoreKind = ref?.kind ?? 'SecretStore';
  const cache = tryCache(ctx, kind === 'SecretStore' ? SECRET_STORES : CLUSTER_SECRET_STORES);
  const store = cache?.get(kind === 'SecretStore' ? `${ns}/${ref?.name ?? ''}` : (ref?.name ?? '')) as
    StoreObject | undefined;
  return { kind, store, watched: cache !== undefined };
}

async function openSource(
  ctx: ReconcileContext,
  deps: ExternalSecretDeps,
  ref: SecretStoreRef | undefined,
  ns: string,
  age: { maxAgeMs: number; shareTag?: string },
): Promise<SecretSource> {
  const { kind, store, watched } = lookupStore(ctx, ref, ns);
  const label = `${kind} ${ref?.name ?? ''}`;
  if (!ref?.name) throw new ReconcileError('InvalidSpec', 'spec.secretStoreRef.name is required', NEVER);
  // A namespaced install (--namespace) watches no ClusterSecretStore, as ESO's scoped mode: say so.
  if (!watched)
    throw new ReconcileError(
      'SecretSyncedError',
      `${label} cannot be used: this controller is installed for some namespaces only (watchNamespaces) and serves no ${kind}; use a SecretStore in namespace ${ns}`,
      NEVER,
    );
  if (!store) throw new ReconcileError('SecretSyncedError', `${label} not found`, NEVER);
  if (!isOurClass(store.spec, deps.controllerClass))
    throw new ReconcileError('SecretSyncedError', `${label} belongs to another controller class`, NEVER);
  const ready = getCondition((store.status as { conditions?: Condition[] } | undefined)?.conditions, 'Ready');
  if (ready?.status === 'False')
    throw new ReconcileError('SecretSyncedError', `${label} is not ready: ${ready.message}`, NEVER);
  if (kind === 'ClusterSecretStore') {
    const nsObj = tryCache(ctx, NAMESPACES)?.get(ns);
    if (!storeAllowsNamespace(store.spec.conditions, ns, nsObj ? (nsObj.metadata.labels ?? {}) : undefined)) {
      throw new ReconcileError('SecretSyncedError', `${label} does not allow namespace ${ns} (spec.conditions)`, NEVER);
    }
  }
  const conn = await deps.connector.connect(kind, store, ns);
  return deps.reader.source(conn, age.maxAgeMs, age.shareTag);
}

/**
 * Created by vaultgate (or ESO) for this ExternalSecret: an owner reference to its uid (ESO's Owner
 * Secrets have one too), ESO's created-by label with the hash of its namespace/name (Owner), or
 * vaultgate's created-for label with its uid (Orphan). Never the managed label: ESO and vaultgate stamp
 * it on every target, a Merge target someone else created included, so it says nothing about who made it.
 */
export function createdByUs(secret: KubeObject, es: KubeObject): boolean {
  const labels = secret.metadata.labels ?? {};
  return (
    (secret.metadata.ownerReferences ?? []).some((r) => r.uid === es.metadata.uid) ||
    labels[LABEL_CREATED_BY] === createdByLabel(es.metadata.namespace ?? '', es.metadata.name) ||
    (es.metadata.uid !== undefined && labels[LABEL_CREATED_FOR] === es.metadata.uid)
  );
}

export function wantsSecretAdoption(es: KubeObject): boolean {
  return es.metadata.annotations?.[ADOPT_SECRET_ANNOTATION] === 'true';
}

function isControlledBy(secret: KubeObject, es: KubeObject): boolean {
  return (secret.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === es.metadata.uid);
}

function otherController(secret: KubeObject, es: KubeObject): boolean {
  return (secret.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid !== es.metadata.uid);
}

/**
 * template.metadata.finalizers, as ESO's setMetadata: each is added when missing (not while the Secret is
 * being deleted) and never removed: whoever gives a finalizer its meaning removes it. Written apart from
 * the server-side apply (a merge patch of the whole list at the resourceVersion just read, so a
 * concurrent change is a 409 and a retry), so dropping one from the template does not remove it either.
 */
async function addTemplateFinalizers(
  ctx: ReconcileContext,
  ns: string,
  name: string,
  finalizers: string[] | undefined,
  known: SecretObject | undefined,
): Promise<void> {
  const lacks = (s: SecretObject | undefined): string[] =>
    (finalizers ?? []).filter((f) => !(s?.metadata.finalizers ?? []).includes(f));
  if (lacks(known).length === 0 || known?.metadata.deletionTimestamp) return;
  const current = await ctx.client.get<SecretObject>(SECRETS, name, ns);
  const missing = lacks(current);
  if (!current || current.metadata.deletionTimestamp || missing.length === 0) return;
  await ctx.client.patch(
    SECRETS,
    name,
    ns,
    {
      metadata: {
        resourceVersion: current.metadata.resourceVersion,
        finalizers: [...(current.metadata.finalizers ?? []), ...missing],
      },
    },
    'merge',
  );
}

/**
 * The target as it should be: the body to write, the keys someone else wrote into a Secret that must hold
 * exactly our data, and whether `existing` already is it. `needsValues`: a Merge over a cached Secret with
 * other keys, whose hash cannot be computed without their values (kube/cache-transform.ts keeps none).
 */
function targetSecret(
  es: ExternalSecretObject,
  policy: WritePolicy,
  desired: DesiredSecret,
  existing: SecretObject | undefined,
): { body: KubeObject; foreign: string[]; matches: boolean; needsValues: boolean } {
  const ns = es.metadata.namespace ?? '';
  const name = es.spec.target?.name ?? es.metadata.name;
  const ours = new Map([...desired.data].map(([k, v]) => [k, v.toString('base64')]));
  const stored = existing ? storedSecretData(existing) : undefined;
  const foreign = (stored?.keys() ?? []).filter((k) => !ours.has(k));
  const needsValues = policy === 'Merge' && foreign.length > 0 && !stored?.values;
  // Merge: the hash covers the whole Secret as it will be, so the annotation stays consistent with its data.
  const finalData =
    policy === 'Merge' ? { ...(stored?.values ?? {}), ...Object.fromEntries(ours) } : Object.fromEntries(ours);
  const annotations = { ...desired.annotations, [ANNOTATION_DATA_HASH]: dataHash(finalData) };
  const owner = policy === 'Owner';
  // Who the Secret was written for: ESO's created-by label on Owner Secrets (with the owner reference; ESO
  // finds orphans by it), vaultgate's created-for label on Orphan ones; nothing on a Merge target, which
  // stays whoever made it's (ESO's managed label only tells the caches to watch it).
  const labels = {
    ...desired.labels,
    [LABEL_MANAGED]: 'true',
    ...(owner ? { [LABEL_CREATED_BY]: createdByLabel(ns, es.metadata.name) } : {}),
    ...(policy === 'Orphan' && es.metadata.uid ? { [LABEL_CREATED_FOR]: es.metadata.uid } : {}),
  };
  const body: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns, labels, annotations },
    data: Object.fromEntries(ours),
    ...(policy !== 'Merge' && (desired.type || !existing) ? { type: desired.type ?? 'Opaque' } : {}),
    ...(desired.immutable ? { immutable: true } : {}),
  };
  // ESO's bookkeeping (reconcile.external-secrets.io/*) as ESO writes it; vaultgate's own label only on an
  // Orphan Secret (created-for), where nothing of ESO's says which ExternalSecret it belongs to.
  if (owner) body.metadata.ownerReferences = [controllerReference(EXTERNAL_SECRETS, es)];
  const matches =
    existing !== undefined &&
    !needsValues &&
    upToDate(existing, { ours, labels, annotations, desired, policy, ...(owner ? { owner: es } : {}) });
  return { body, foreign, matches, needsValues };
}

/** Write the target: a new Secret is created (POST), an existing one of ours applied. */
async function writeTarget(
  ctx: ReconcileContext,
  seen: Seen,
  d: EsDesired,
  policy: WritePolicy,
  ownWrites?: OwnWrites,
): Promise<void> {
  const { body, foreign } = targetSecret(seen.es, policy, seen.desired!, seen.existing);
  // Keys written by someone else into a Secret that must hold exactly our data: SSA cannot remove
  // fields another manager owns, so clear them with a merge patch first.
  if (seen.existing && policy !== 'Merge' && foreign.length > 0) {
    await ctx.client.patch(
      SECRETS,
      d.targetName,
      d.namespace,
      { data: Object.fromEntries(foreign.map((k) => [k, null])) },
      'merge',
    );
  }
  // Never applied when new: an apply would silently take over one someone else created since we looked;
  // a create fails on it (AlreadyExists: SecretNotOwned), and the next sync finds it and checks whose it is.
  const written = seen.existing
    ? await ctx.client.apply(SECRETS, body, { force: true })
    : await ctx.client.create(SECRETS, body);
  ownWrites?.record(written);
}

/** The target as written: our keys (base64), its labels and annotations, and the controller owner (Owner). */
interface WantedSecret {
  ours: Map<string, string>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  desired: DesiredSecret;
  policy: string;
  owner?: KubeObject;
}

function upToDate(
  existing: SecretObject,
  { ours, labels, annotations, desired, policy, owner }: WantedSecret,
): boolean {
  const stored = storedSecretData(existing);
  for (const [k, v] of ours) if (!stored.holds(k, v)) return false;
  if (policy !== 'Merge') {
    if (stored.keys().some((k) => !ours.has(k))) return false;
    if ((existing.type ?? 'Opaque') !== (desired.type ?? 'Opaque')) return false;
  }
  for (const [k, v] of Object.entries(labels)) if (existing.metadata.labels?.[k] !== v) return false;
  for (const [k, v] of Object.entries(annotations)) if (existing.metadata.annotations?.[k] !== v) return false;
  if (owner && !isControlledBy(existing, owner)) return false;
  if (Boolean(desired.immutable) !== Boolean(existing.immutable)) return false;
  return true;
}
