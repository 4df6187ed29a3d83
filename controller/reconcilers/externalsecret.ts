// ExternalSecret → Secret, with ESO's semantics (its v1 ExternalSecret spec): data/dataFrom from Vault through the
// store's own identity, target.template (engine v2), creationPolicy Owner/Orphan/Merge/CreateOrMerge/None,
// deletionPolicy Retain/Delete/Merge, refreshInterval/refreshPolicy/force-sync, the managed label and
// the data-hash annotation, ClusterSecretStore conditions, ESO's condition reasons.
//
// Level-triggered and write-avoiding: the Secret is compared with what it should be and written only
// when different (an unchanged Secret is never rewritten; a hand-edited one is repaired: its data no
// longer matches its hash). If Vault fails, the Secret keeps its last good data: nothing is written,
// Ready=False/SecretSyncedError says what failed (never a value).
import type { ExternalSecretSpec, SecretStoreRef } from '../../schemas/types.ts';
import { getCondition, setCondition, timestamp } from '../../kube/conditions.ts';
import { isAlreadyExists, isNotFound, KubeApiError } from '../../kube/errors.ts';
import { controllerReference } from '../../kube/apply.ts';
import type { Condition, KubeObject } from '../../kube/objects.ts';
import type { OwnWrites } from '../../kube/own-writes.ts';
import { storedSecretData, type CachedSecret } from '../../kube/cache-transform.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { NAMESPACES, SECRETS } from '../../kube/resources.ts';
import { CLUSTER_SECRET_STORES, EXTERNAL_SECRETS, SECRET_STORES } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import { isVaultError } from '../../vault/errors.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings, reasonOf, safeMessage, SafeError } from './common.ts';
import type { CoalescingKvReader } from './kv-reader.ts';
import { providerSecretData, type SecretSource } from '../../eso/provider-data.ts';
import { nextRefreshInMs, refreshIntervalMs, shouldRefresh, syncedResourceVersion, type RefreshInput } from '../../eso/refresh.ts';
import { storeAllowsNamespace } from '../../eso/store-conditions.ts';
import { ANNOTATION_DATA_HASH, ANNOTATION_FORCE_SYNC, createdByLabel, dataHash, LABEL_CREATED_BY, LABEL_MANAGED, type DesiredSecret } from '../../eso/target.ts';
import { inProcessRenderer, RenderLimitError, type SecretRenderer } from './render-pool.ts';
import { isOurClass } from './secretstore.ts';
import type { StoreConnector, StoreKind, StoreObject } from './store-connector.ts';
import { tryCache } from './vaultpolicy.ts';
import { readTemplateSources, RenderedSourceVersions } from './template-sources.ts';
import { TemplateSourceMissingError } from '../../eso/target-template.ts';
import { holdsSecretForm } from './secret-forms.ts';

/**
 * Label on a Secret vaultgate wrote with creationPolicy Orphan (which leaves no owner reference): the uid of
 * the ExternalSecret it was written for, so the next sync knows the Secret is its own.
 */
export const LABEL_CREATED_FOR = 'vaultgate.io/created-for';

/**
 * Annotation on an ExternalSecret that lets it take over a target Secret vaultgate did not create (with
 * creationPolicy Owner or Orphan). Without it such a Secret is left untouched: Ready=False, reason
 * SecretNotOwned. With it the Secret becomes this ExternalSecret's: keys it does not produce are removed
 * and, with Owner, it is garbage-collected with the ExternalSecret.
 */
export const ADOPT_SECRET_ANNOTATION = 'vaultgate.io/adopt-secret';

/** Shown instead of an error message that would have quoted secret data. */
export const WITHHELD_MESSAGE = 'the error message is withheld because it would contain secret data';

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
  return kind === 'ClusterSecretStore' ? `ClusterSecretStore/${ref?.name ?? ''}` : `SecretStore/${namespace}/${ref?.name ?? ''}`;
}

export function storeIndex(obj: KubeObject): string[] {
  const es = obj as ExternalSecretObject;
  const ns = obj.metadata.namespace ?? '';
  const refs = [es.spec?.secretStoreRef, ...(es.spec?.data ?? []).map((d) => d.sourceRef?.storeRef), ...(es.spec?.dataFrom ?? []).map((d) => d.sourceRef?.storeRef)];
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
  /** Renders target.template (the controller's render pool: worker threads, a deadline). Default: in process. */
  renderer?: SecretRenderer;
  now?: () => Date;
}

type EsStatus = { refreshTime?: string | null; syncedResourceVersion?: string; binding?: { name?: string }; conditions?: Condition[] };

export function createExternalSecretReconciler(deps: ExternalSecretDeps): Reconciler {
  const now = deps.now ?? (() => new Date());
  const sourceVersions = new RenderedSourceVersions();
  const renderer = deps.renderer ?? inProcessRenderer();

  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const es = ctx.cache<ExternalSecretObject>(EXTERNAL_SECRETS).get(key);
    if (!es || es.metadata.deletionTimestamp) return DONE; // Owner Secrets go with it by garbage collection
    const ns = es.metadata.namespace ?? '';
    const spec = es.spec;
    const status = (es.status ?? {}) as EsStatus;
    const targetName = spec.target?.name ?? es.metadata.name;
    const creationPolicy = spec.target?.creationPolicy ?? 'Owner';
    const deletionPolicy = spec.target?.deletionPolicy ?? 'Retain';
    const t = now();
    const currentRv = syncedResourceVersion(es.metadata.generation ?? 0, es.metadata.labels, es.metadata.annotations);

    const writeStatus = async (ready: { status: Condition['status']; reason: string; message: string }, refreshed: boolean): Promise<void> => {
      // Only fields ESO's CRD declares: with ESO's own CRDs installed, the apiserver refuses any other
      // field in an apply (no observedGeneration here; syncedResourceVersion carries the generation).
      const conditions = setCondition(status.conditions, { type: 'Ready', ...ready }, undefined, t);
      const next: Record<string, unknown> = {
        refreshTime: refreshed ? timestamp(t) : status.refreshTime ?? null,
        syncedResourceVersion: refreshed ? currentRv : status.syncedResourceVersion,
        binding: { name: creationPolicy === 'None' ? '' : targetName },
        conditions,
      };
      if (next.syncedResourceVersion === undefined) delete next.syncedResourceVersion;
      await applyStatus(ctx.client, EXTERNAL_SECRETS, es, next);
    };
    // Every value read from Vault or rendered by a template in this reconcile: no status, Event or log
    // line may contain one (the last line of defence behind value-free error messages).
    const secretTexts: string[] = [];
    const fail = async (err: unknown, retryAfterMs?: number, reason = 'SecretSyncedError'): Promise<Result> => {
      const message = withoutSecrets(safeMessage(err), secretTexts);
      await writeStatus({ status: 'False', reason, message }, false);
      ctx.events.record(es, { type: 'Warning', reason: 'UpdateFailed', note: message });
      // Every Vault error goes back to the work queue's per-key backoff (5 ms → 1000 s), as ESO returns
      // it to controller-runtime: a role or policy applied in the same batch, or a path granted later,
      // changes Vault without any Kubernetes event that would wake this ExternalSecret. The Secret keeps
      // its last good data meanwhile. Rethrown with the status's own message (never a value).
      if (isVaultError(err)) throw err.retryable ? err : new SafeError(reason, message);
      // A render stopped by the pool's deadline or heap limit: retried with the same backoff.
      if (err instanceof RenderLimitError) throw new SafeError(reason, message);
      return retryAfterMs !== undefined ? requeueAfter(retryAfterMs) : DONE;
    };

    // Any store of another controller class makes the ExternalSecret another controller's (ESO's
    // shouldSkipUnmanagedStore: the primary store and every per-entry sourceRef.storeRef; unknown ones do not count).
    const refs = [spec.secretStoreRef, ...(spec.data ?? []).map((d) => d.sourceRef?.storeRef), ...(spec.dataFrom ?? []).map((d) => d.sourceRef?.storeRef)];
    if (refs.some((ref) => {
      const store = ref?.name ? lookupStore(ctx, ref, ns).store : undefined;
      return store !== undefined && !isOurClass(store.spec, deps.controllerClass);
    })) return DONE;

    const denials = admissionDenials(es, admissionContext({ namespaces: tryCache(ctx, NAMESPACES), namePrefix: deps.namePrefix, controllerClass: deps.controllerClass }));
    if (denials.length > 0) return fail(new SafeError('InvalidSpec', `refused: ${describeFindings(denials)}`));

    let intervalMs: number;
    try {
      intervalMs = refreshIntervalMs(spec.refreshInterval);
    } catch (e) {
      return fail(new SafeError('InvalidSpec', (e as Error).message));
    }

    // Current target Secret: the cache holds only Secrets labelled as managed (main.ts); one we have not
    // labelled (yet), or whose label was removed, needs a GET.
    let existing = ctx.cache<SecretObject>(SECRETS).get(`${ns}/${targetName}`);
    if (!existing && creationPolicy !== 'None') existing = await ctx.client.get<SecretObject>(SECRETS, targetName, ns);

    // A Secret someone else created is not ours to take (ESO users lost `argocd-secret` this way: its
    // keys nulled, then garbage-collected with the ExternalSecret). Checked before Vault is read.
    if (existing && (creationPolicy === 'Owner' || creationPolicy === 'Orphan') && !createdByUs(existing, es) && !wantsSecretAdoption(es)) {
      return fail(new SafeError('SecretNotOwned', `Secret ${ns}/${targetName} already exists and was not created by vaultgate for this ExternalSecret `
        + `(no owner reference to it, no ${LABEL_CREATED_BY} or ${LABEL_CREATED_FOR} label naming it); it is left untouched. To let this ExternalSecret take it over `
        + `(its other keys are removed${creationPolicy === 'Owner' ? ', and it is deleted with the ExternalSecret' : ''}), annotate the ExternalSecret `
        + `${ADOPT_SECRET_ANNOTATION}: "true"; to add keys to it instead, use creationPolicy Merge`), intervalMs || undefined, 'SecretNotOwned');
    }

    // templateFrom ConfigMaps/Secrets as they are now: a changed one makes the Secret out of date.
    const templateSources = await readTemplateSources(ctx, ns, spec.target);
    secretTexts.push(...templateSources.secretTexts);

    const refreshIn: RefreshInput = {
      uid: es.metadata.uid ?? '', generation: es.metadata.generation ?? 0, labels: es.metadata.labels, annotations: es.metadata.annotations,
      refreshInterval: spec.refreshInterval, refreshPolicy: spec.refreshPolicy, syncedResourceVersion: status.syncedResourceVersion, refreshTime: status.refreshTime,
      ...(spec.syncWindows ? { syncWindows: spec.syncWindows } : {}),
    };
    const due = shouldRefresh(refreshIn, t.getTime());
    // A target without the managed label is outside the Secret cache: hand edits to it would go unseen,
    // so it is not "valid" until re-labelled (ESO patches the label back the same way).
    const secretValid = creationPolicy === 'None' || (existing !== undefined && existing.metadata.labels?.[LABEL_MANAGED] === 'true'
      && existing.metadata.annotations?.[ANNOTATION_DATA_HASH] === storedSecretData(existing).hash(dataHash)
      && sourceVersions.current(key, templateSources));
    const readyNow = getCondition(status.conditions, 'Ready');
    const syncedThisGeneration = status.syncedResourceVersion?.split('-')[0] === String(es.metadata.generation ?? 0);
    if (!due && secretValid && readyNow?.status === 'True' && syncedThisGeneration) {
      const next = nextRefreshInMs(refreshIn, t.getTime());
      return next === undefined ? DONE : requeueAfter(next + 1);
    }

    // How old a shared read may be: periodic refreshes accept the jitter window, a force-sync
    // (metadata-only change) nothing but in-flight sharing, anything else a short window.
    const forceSync = status.syncedResourceVersion !== undefined && status.syncedResourceVersion !== currentRv
      && status.syncedResourceVersion.split('-')[0] === String(es.metadata.generation ?? 0);
    const maxAge = forceSync ? 0
      : status.syncedResourceVersion === currentRv && intervalMs > 0 ? Math.min(intervalMs * (deps.refreshWindowFraction ?? 0.2), deps.maxRefreshWindowMs ?? 900_000)
      : deps.coalesceWindowMs ?? 30_000;
    // ExternalSecrets force-synced by one request (the same annotation value) share its fresh reads.
    const forceValue = es.metadata.annotations?.[ANNOTATION_FORCE_SYNC];
    const shareTag = forceSync && forceValue !== undefined ? `${ANNOTATION_FORCE_SYNC}=${forceValue}` : undefined;

    let data: Map<string, Buffer>;
    let desired: DesiredSecret;
    try {
      const sources = new Map<string, Promise<SecretSource>>();
      const sourceFor = (ref: SecretStoreRef | undefined): Promise<SecretSource> => {
        const k = storeKey(ref, ns);
        let s = sources.get(k);
        if (!s) sources.set(k, (s = openSource(ctx, deps, ref, ns, maxAge, shareTag)));
        return s;
      };
      const provider = await providerSecretData(spec, sourceFor);
      data = provider.data;
      for (const v of data.values()) secretTexts.push(v.toString('utf8'));
      if (data.size === 0 && deletionPolicy === 'Delete') {
        if (existing && creationPolicy === 'Owner' && isControlledBy(existing, es)) {
          await ctx.client.delete(SECRETS, targetName, ns, { preconditions: { uid: existing.metadata.uid } });
          ctx.events.record(es, { type: 'Normal', reason: 'Deleted', note: `deleted Secret ${targetName}: the provider has no data any more (deletionPolicy Delete)` });
        }
        await writeStatus({ status: 'True', reason: 'SecretDeleted', message: 'secret deleted: the provider has no data (deletionPolicy Delete)' }, true);
        return scheduleNext(refreshIn, t);
      }
      if (data.size === 0 && deletionPolicy === 'Retain' && provider.missing.length === 0 && existing) {
        await writeStatus({ status: 'True', reason: 'SecretSynced', message: 'the provider returned no data; the existing Secret is kept (deletionPolicy Retain)' }, true);
        return scheduleNext(refreshIn, t);
      }
      desired = await renderer.desiredSecret(ns, spec.target, data, es.metadata, templateSources.sources);
      for (const v of desired.data.values()) secretTexts.push(v.toString('utf8'));
    } catch (err) {
      // A template source that does not exist yet: wait for it (the ConfigMap watch, or the retry).
      if (err instanceof TemplateSourceMissingError) return fail(err, intervalMs > 0 ? Math.min(intervalMs, 60_000) : 60_000, 'TemplateSourceNotFound');
      return fail(err, intervalMs > 0 ? intervalMs : undefined);
    }

    if (creationPolicy === 'None') {
      await writeStatus({ status: 'True', reason: 'SecretSynced', message: 'secret synced (creationPolicy None: no Secret is written)' }, true);
      return scheduleNext(refreshIn, t);
    }
    if (creationPolicy === 'Merge' && !existing) {
      return fail(new SafeError('SecretMissing', `target Secret ${targetName} does not exist; creationPolicy Merge only adds keys to an existing Secret`), deps.missingTargetRetryMs ?? 30_000, 'SecretMissing');
    }
    // CreateOrMerge (ESO v2): adds keys to an existing Secret as Merge does, or creates one without an
    // owner as Orphan does.
    const writePolicy = creationPolicy === 'CreateOrMerge' ? (existing ? 'Merge' : 'Orphan') : creationPolicy;
    if (existing && (creationPolicy === 'Owner' || creationPolicy === 'Orphan') && otherController(existing, es)) {
      return fail(new SafeError('SecretSyncedError', `Secret ${targetName} is controlled by another owner; vaultgate does not take it over`), intervalMs || undefined);
    }

    try {
      // Events are for what a user should look at: no Event for a routine create or update (ESO records
      // one per sync: 1,000 ExternalSecrets, 1,000 Events), one when a Secret edited by hand is repaired.
      const editedByHand = existing !== undefined && existing.metadata.annotations?.[ANNOTATION_DATA_HASH] !== undefined
        && existing.metadata.annotations[ANNOTATION_DATA_HASH] !== storedSecretData(existing).hash(dataHash);
      const wrote = await converge(ctx, es, targetName, writePolicy, desired, existing, deps.ownSecretWrites);
      await addTemplateFinalizers(ctx, ns, targetName, spec.target?.template?.metadata?.finalizers, existing);
      if (wrote && editedByHand) ctx.events.record(es, { type: 'Normal', reason: 'Repaired', note: `Secret ${targetName} was changed outside vaultgate; its data was restored from the provider` });
    } catch (err) {
      if (isNotFound(err) && writePolicy === 'Merge') return fail(new SafeError('SecretMissing', `target Secret ${targetName} disappeared`), deps.missingTargetRetryMs ?? 30_000, 'SecretMissing');
      if (err instanceof SafeError && err.reason === 'SecretNotOwned') return fail(err, deps.missingTargetRetryMs ?? 30_000, 'SecretNotOwned');
      return fail(new SafeError(reasonOf(err, 'SecretSyncedError'), `cannot write Secret ${targetName}: ${safeMessage(err)}`), deps.missingTargetRetryMs ?? 30_000);
    }
    await writeStatus({ status: 'True', reason: 'SecretSynced', message: 'secret synced' }, true);
    sourceVersions.remember(key, templateSources);
    return scheduleNext(refreshIn, t);
  };
}

function scheduleNext(input: RefreshInput, t: Date): Result {
  // After a sync the refresh clock restarts now.
  const next = nextRefreshInMs({ ...input, refreshTime: timestamp(t), syncedResourceVersion: syncedResourceVersion(input.generation, input.labels, input.annotations) }, t.getTime());
  return next === undefined ? DONE : requeueAfter(next + 1);
}

function lookupStore(ctx: ReconcileContext, ref: SecretStoreRef | undefined, ns: string): { kind: StoreKind; store?: StoreObject; watched: boolean } {
  const kind: StoreKind = ref?.kind ?? 'SecretStore';
  const cache = tryCache(ctx, kind === 'SecretStore' ? SECRET_STORES : CLUSTER_SECRET_STORES);
  const store = cache?.get(kind === 'SecretStore' ? `${ns}/${ref?.name ?? ''}` : ref?.name ?? '') as StoreObject | undefined;
  return { kind, store, watched: cache !== undefined };
}

async function openSource(ctx: ReconcileContext, deps: ExternalSecretDeps, ref: SecretStoreRef | undefined, ns: string, maxAge: number, shareTag?: string): Promise<SecretSource> {
  const { kind, store, watched } = lookupStore(ctx, ref, ns);
  const label = `${kind} ${ref?.name ?? ''}`;
  if (!ref?.name) throw new SafeError('InvalidSpec', 'spec.secretStoreRef.name is required');
  // A namespaced install (--namespace) watches no ClusterSecretStore, as ESO's scoped mode: say so.
  if (!watched) throw new SafeError('SecretSyncedError', `${label} cannot be used: this controller is installed for some namespaces only (watchNamespaces) and serves no ${kind}; use a SecretStore in namespace ${ns}`);
  if (!store) throw new SafeError('SecretSyncedError', `${label} not found`);
  if (!isOurClass(store.spec, deps.controllerClass)) throw new SafeError('SecretSyncedError', `${label} belongs to another controller class`);
  const ready = getCondition((store.status as { conditions?: Condition[] } | undefined)?.conditions, 'Ready');
  if (ready?.status === 'False') throw new SafeError('SecretSyncedError', `${label} is not ready: ${ready.message}`);
  if (kind === 'ClusterSecretStore') {
    const nsObj = tryCache(ctx, NAMESPACES)?.get(ns);
    if (!storeAllowsNamespace(store.spec.conditions, ns, nsObj ? nsObj.metadata.labels ?? {} : undefined)) {
      throw new SafeError('SecretSyncedError', `${label} does not allow namespace ${ns} (spec.conditions)`);
    }
  }
  const conn = await deps.connector.connect(kind, store, ns);
  return deps.reader.source(conn, maxAge, shareTag);
}

/**
 * Created by vaultgate (or ESO) for this ExternalSecret: an owner reference to its uid (ESO's Owner
 * Secrets have one too), ESO's created-by label with the hash of its namespace/name (Owner), or
 * vaultgate's created-for label with its uid (Orphan). Never the managed label: ESO and vaultgate stamp
 * it on every target, a Merge target someone else created included, so it says nothing about who made it.
 */
export function createdByUs(secret: KubeObject, es: KubeObject): boolean {
  const labels = secret.metadata.labels ?? {};
  return (secret.metadata.ownerReferences ?? []).some((r) => r.uid === es.metadata.uid)
    || labels[LABEL_CREATED_BY] === createdByLabel(es.metadata.namespace ?? '', es.metadata.name)
    || (es.metadata.uid !== undefined && labels[LABEL_CREATED_FOR] === es.metadata.uid);
}

export function wantsSecretAdoption(es: KubeObject): boolean {
  return es.metadata.annotations?.[ADOPT_SECRET_ANNOTATION] === 'true';
}

/**
 * `message`, or a fixed text when it contains one of `secrets` (or its base64), or one in another form
 * (case, reversed, split and joined, quoted, base64/hex, a long piece: secret-forms.ts): error messages
 * are built without values, and this catches one that is not. Values shorter than 4 characters cannot be
 * told apart from ordinary words and are not checked.
 */
export function withoutSecrets(message: string, secrets: readonly string[]): string {
  for (const s of secrets) {
    if (s.length < 4) continue;
    if (message.includes(s) || message.includes(Buffer.from(s).toString('base64'))) return WITHHELD_MESSAGE;
    for (const line of s.split('\n')) if (line.trim().length >= 8 && message.includes(line.trim())) return WITHHELD_MESSAGE;
  }
  return holdsSecretForm(message, secrets) ? WITHHELD_MESSAGE : message;
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
async function addTemplateFinalizers(ctx: ReconcileContext, ns: string, name: string, finalizers: string[] | undefined, known: SecretObject | undefined): Promise<void> {
  const lacks = (s: SecretObject | undefined): string[] => (finalizers ?? []).filter((f) => !(s?.metadata.finalizers ?? []).includes(f));
  if (lacks(known).length === 0 || known?.metadata.deletionTimestamp) return;
  const current = await ctx.client.get<SecretObject>(SECRETS, name, ns);
  const missing = lacks(current);
  if (!current || current.metadata.deletionTimestamp || missing.length === 0) return;
  await ctx.client.patch(SECRETS, name, ns, { metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: [...(current.metadata.finalizers ?? []), ...missing] } }, 'merge');
}

/** Make the Secret match `desired`; false when it already did (no write). */
async function converge(ctx: ReconcileContext, es: ExternalSecretObject, name: string, policy: string, desired: DesiredSecret, existing: SecretObject | undefined, ownWrites?: OwnWrites): Promise<boolean> {
  const ns = es.metadata.namespace ?? '';
  const ours = new Map([...desired.data].map(([k, v]) => [k, v.toString('base64')]));
  const stored = existing ? storedSecretData(existing) : undefined;
  const foreign = (stored?.keys() ?? []).filter((k) => !ours.has(k));
  // Merge: the hash covers the whole Secret as it will be, so the annotation stays consistent with its data.
  // The cache keeps no values: the other keys' values are read with a GET, only for this.
  const actualData = stored?.values ?? {};
  if (policy === 'Merge' && foreign.length > 0 && !stored?.values) {
    const live = await ctx.client.get<SecretObject>(SECRETS, name, ns);
    if (!live) throw new KubeApiError(404, 'NotFound', `secrets "${name}" not found`);
    return converge(ctx, es, name, policy, desired, live, ownWrites);
  }
  const finalData = policy === 'Merge' ? { ...actualData, ...Object.fromEntries(ours) } : Object.fromEntries(ours);
  const annotations = { ...desired.annotations, [ANNOTATION_DATA_HASH]: dataHash(finalData) };
  const owner = policy === 'Owner';
  // Who the Secret was written for: ESO's created-by label on Owner Secrets (with the owner reference; ESO
  // finds orphans by it), vaultgate's created-for label on Orphan ones; nothing on a Merge target, which
  // stays whoever made it's (ESO's managed label only tells the caches to watch it).
  const labels = {
    ...desired.labels, [LABEL_MANAGED]: 'true',
    ...(owner ? { [LABEL_CREATED_BY]: createdByLabel(ns, es.metadata.name) } : {}),
    ...(policy === 'Orphan' && es.metadata.uid ? { [LABEL_CREATED_FOR]: es.metadata.uid } : {}),
  };

  if (existing && upToDate(existing, ours, labels, annotations, desired, policy, owner ? es : undefined)) return false;

  // Keys written by someone else into a Secret that must hold exactly our data: SSA cannot remove
  // fields another manager owns, so clear them with a merge patch first.
  if (existing && policy !== 'Merge' && foreign.length > 0) {
    await ctx.client.patch(SECRETS, name, ns, { data: Object.fromEntries(foreign.map((k) => [k, null])) }, 'merge');
  }
  const body: KubeObject = {
    metadata: { name, namespace: ns, labels, annotations },
    data: Object.fromEntries(ours),
    ...(policy !== 'Merge' && (desired.type || !existing) ? { type: desired.type ?? 'Opaque' } : {}),
    ...(desired.immutable ? { immutable: true } : {}),
  };
  // ESO's bookkeeping (reconcile.external-secrets.io/*) as ESO writes it; vaultgate's own label only on an
  // Orphan Secret (created-for), where nothing of ESO's says which ExternalSecret it belongs to.
  if (owner) body.metadata.ownerReferences = [controllerReference(EXTERNAL_SECRETS, es)];
  // A new Secret is created (POST), never applied: an apply would silently take over one someone else
  // created since we looked; a create fails on it, and the next sync finds it and checks whose it is.
  const written = existing
    ? await ctx.client.apply(SECRETS, { apiVersion: 'v1', kind: 'Secret', ...body }, { force: true })
    : await ctx.client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', ...body }).catch((err: unknown) => {
      if (isAlreadyExists(err)) throw new SafeError('SecretNotOwned', `Secret ${ns}/${name} was created by someone else while this ExternalSecret was creating it; it is left untouched`);
      throw err;
    });
  ownWrites?.record(written);
  return true;
}

function upToDate(existing: SecretObject, ours: Map<string, string>, labels: Record<string, string>, annotations: Record<string, string>, desired: DesiredSecret, policy: string, owner: KubeObject | undefined): boolean {
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
