// PushSecret → Vault KV v1/v2, with ESO's semantics (pkg/controllers/pushsecret and the Vault
// provider's PushSecret/DeleteSecret, eso/push.ts): source Secrets of the PushSecret's own namespace
// (by name, or by label selector within that namespace: ESO lists them cluster-wide), the template,
// data[] and dataTo, updatePolicy Replace/IfNotExists, KV v2 check-and-set when the store requires it,
// deletionPolicy Delete (a finalizer; remote secrets it stops pushing are removed), refreshInterval,
// status.syncedPushSecrets and Ready Synced/Errored.
//
// Tenancy: every write goes through the store's own identity (the StoreConnector, as ExternalSecrets
// read), and before it, the Vault paths it writes (data and KV v2 metadata) are checked with the
// namespace's guardrails as a VaultPolicy granting create/update there would be: outside the
// namespace's subtree of secret/ only where an enforce guardrail says so. A remote secret without ESO's
// managed-by marker is never overwritten, and one is deleted only when vaultgate's marker says this
// PushSecret pushed it. Secret values never reach a status, an Event or a log line.
import type { PushSecretData, PushSecretSpec, PushSecretStoreRef, SecretStoreSpec } from '../../schemas/types.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { ReconcileError } from '../../kube/reconcile-error.ts';
import { withFinalizer } from '../../kube/finalizer.ts';
import { listAll } from '../../kube/kube-client.ts';
import { NAMESPACES, SECRETS } from '../../kube/resources.ts';
import { CLUSTER_SECRET_STORES, PUSH_SECRETS, SECRET_STORES, VAULT_GUARDRAILS } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import { selectorMatches, type LabelSelectorLike } from '../../kube/label-selector.ts';
import { createKvApi, resolveKvPath } from '../../vault/kv.ts';
import type { KvApi } from '../../vault/types.ts';
import { isVaultError } from '../../vault/errors.ts';
import { vaultPathProblems } from '../../vault/paths.ts';
import { parseGoDuration } from '../../golang/index.ts';
import { syncedResourceVersion } from '../../eso/refresh.ts';
import { storeAllowsNamespace } from '../../eso/store-conditions.ts';
import {
  PUSH_FINALIZER,
  plannedPushes,
  pushValue,
  remoteAfterDelete,
  statusRef,
  storeStatusKey,
  type RemoteState,
  type StoreIdentity,
} from '../../eso/push.ts';
import { guardrailsFor, policyRuleGuardrailFindings } from '../../webhook/rules/guardrails.ts';
import { inProcessRenderer, RenderLimitError, type SecretRenderer } from './render-pool.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings, type VaultWriteObserver } from './common.ts';
import { errorPolicy } from './error-policy.ts';
import { isOurClass, tryCache } from './lookups.ts';
import { withoutSecrets } from './secret-forms.ts';
import type { StoreConnector, StoreKind, StoreObject } from './store-connector.ts';
import { readTemplateSources } from './template-sources.ts';
import {
  failedStatus,
  mergeSynced,
  planPushSecret,
  planRemotePush,
  pushRetry,
  syncedStatus,
  wantsFinalizer,
  type PushObserved,
  type PushStatus,
  type RemotePush,
  type Synced,
} from './pushsecret-plan.ts';

/** Index on PushSecrets: each store they name, `SecretStore/<ns>/<name>` or `ClusterSecretStore/<name>`; a ref by label selector as `<kind>/<ns>/*` or `ClusterSecretStore/*`. */
export const PUSH_STORE_INDEX = 'push-store';

export function pushStoreIndex(obj: KubeObject): string[] {
  const ns = obj.metadata.namespace ?? '';
  const refs = (obj as PushSecretObject).spec?.secretStoreRefs ?? [];
  return [
    ...new Set(
      refs.map((r) => {
        const name = r.labelSelector ? '*' : (r.name ?? '');
        return r.kind === 'ClusterSecretStore' ? `ClusterSecretStore/${name}` : `SecretStore/${ns}/${name}`;
      }),
    ),
  ];
}

/** The index values a store event wakes: the PushSecrets naming it, and those selecting stores of its kind. */
export function pushStoreKeys(store: KubeObject): string[] {
  return store.metadata.namespace
    ? [`SecretStore/${store.metadata.namespace}/${store.metadata.name}`, `SecretStore/${store.metadata.namespace}/*`]
    : [`ClusterSecretStore/${store.metadata.name}`, 'ClusterSecretStore/*'];
}

export interface PushSecretObject extends KubeObject {
  spec: PushSecretSpec;
}

export interface PushSecretDeps {
  connector: StoreConnector;
  /** Every KV write and delete (data and custom metadata), for the audit trail: paths and versions, never a value. */
  onVaultWrite?: VaultWriteObserver;
  controllerClass: string;
  namePrefix: string;
  /** Renders spec.template (the controller's render pool: worker threads, a deadline). Default: in process. */
  renderer?: SecretRenderer;
  now?: () => Date;
}

const DEFAULT_REFRESH_MS = 3_600_000;

/** A source Secret's name and decoded data. */
interface SourceSecret {
  name: string;
  data: Map<string, Buffer>;
}

interface ResolvedStore extends StoreIdentity {
  store: StoreObject;
}

/** Reports one Vault write of this PushSecret to the audit observer (its owner filled in). */
type KvWriteRecorder = (write: {
  action: 'create' | 'update' | 'delete';
  object: 'kv-secret' | 'kv-metadata';
  vaultName: string;
  reason: string;
  content?: Record<string, unknown>;
  kvVersion?: number;
}) => void;

/** One reconcile of one PushSecret: what it reads once, and how it reports a failure. */
interface PushRun {
  deps: PushSecretDeps;
  ctx: ReconcileContext;
  ps: PushSecretObject;
  ns: string;
  id: string;
  status: PushStatus;
  t: number;
  /** ESO's syncedResourceVersion of the object now (generation, labels, annotations). */
  rv: string;
  actx: ReturnType<typeof admissionContext>;
  /** Values read or rendered in this reconcile: no message may hold one (secret-forms.ts). */
  secretTexts: string[];
  record: KvWriteRecorder;
  renderer: SecretRenderer;
}

export function createPushSecretReconciler(deps: PushSecretDeps): Reconciler {
  const now = deps.now ?? (() => new Date());
  const renderer = deps.renderer ?? inProcessRenderer();
  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const ps = ctx.cache<PushSecretObject>(PUSH_SECRETS).get(key);
    if (!ps) return DONE;
    const run = pushRun(deps, ctx, ps, now().getTime(), renderer);
    const { observed, ours } = observe(run);
    const plan = planPushSecret(observed);
    switch (plan.decision) {
      case 'ignore':
        return DONE;
      case 'fail':
      case 'refuse':
        return settle(await fail(run, plan.error));
      default:
        // Deleted: remove what it pushed (deletionPolicy Delete, behind the finalizer), then let it go.
        return withFinalizer(
          ctx.client,
          PUSH_SECRETS,
          ps,
          {
            apply: async () =>
              plan.decision === 'sync'
                ? sync(run, ours)
                : plan.decision === 'wait' && plan.requeueAfterMs !== undefined
                  ? requeueAfter(plan.requeueAfterMs)
                  : DONE,
            cleanup: async () => cleanup(run, ours),
          },
          { name: PUSH_FINALIZER, wanted: wantsFinalizer(ps.spec.deletionPolicy) },
        );
    }
  };
}

function pushRun(
  deps: PushSecretDeps,
  ctx: ReconcileContext,
  ps: PushSecretObject,
  t: number,
  renderer: SecretRenderer,
): PushRun {
  const ns = ps.metadata.namespace ?? '';
  const owner = {
    kind: 'PushSecret',
    namespace: ns,
    name: ps.metadata.name,
    ...(ps.metadata.uid ? { uid: ps.metadata.uid } : {}),
  };
  return {
    deps,
    ctx,
    ps,
    ns,
    id: `${ns}/${ps.metadata.name}`,
    status: ps.status ?? {},
    t,
    renderer,
    secretTexts: [],
    rv: syncedResourceVersion(ps.metadata.generation ?? 0, ps.metadata.labels, ps.metadata.annotations),
    actx: admissionContext({
      guardrails: tryCache(ctx, VAULT_GUARDRAILS),
      namespaces: tryCache(ctx, NAMESPACES),
      namePrefix: deps.namePrefix,
      controllerClass: deps.controllerClass,
    }),
    record: (w) => deps.onVaultWrite?.({ ...w, owner }),
  };
}

/** Stores first: a PushSecret whose stores are all another controller's is that controller's. */
function observe(run: PushRun): { observed: PushObserved; ours: ResolvedStore[] } {
  const { ps } = run;
  let stores: ResolvedStore[] = [];
  let storesError: ReconcileError | undefined;
  try {
    stores = resolveStores(run.ctx, ps.spec.secretStoreRefs, run.ns);
  } catch (err) {
    storesError = err instanceof ReconcileError ? err : new ReconcileError('Errored', errorPolicy(err).message);
  }
  const ours = stores.filter((s) => isOurClass(s.store.spec as SecretStoreSpec | undefined, run.deps.controllerClass));
  const deleting = ps.metadata.deletionTimestamp !== undefined;
  const denials = deleting ? [] : admissionDenials(ps, run.actx);
  return {
    ours,
    observed: {
      ...(storesError ? { storesError } : {}),
      storesForeign: stores.length > 0 && ours.length === 0,
      deleting,
      ...(denials.length > 0 ? { denials: describeFindings(denials) } : {}),
      resourceVersion: run.rv,
      status: run.status,
      refreshMs: refreshMs(ps.spec),
      now: run.t,
    },
  };
}

/** Ready=False Errored and a Warning Event (no value in either), then the error with its retry rule. */
async function fail(
  run: PushRun,
  err: unknown,
  synced?: Synced,
): Promise<{ err: unknown; retry: ReturnType<typeof pushRetry> }> {
  const message = withoutSecrets(errorPolicy(err).message, run.secretTexts);
  await applyStatus(
    run.ctx.client,
    PUSH_SECRETS,
    run.ps,
    failedStatus(run.status, message, run.t, synced) as Record<string, unknown>,
  );
  run.ctx.events.record(run.ps, { type: 'Warning', reason: 'Errored', note: message });
  const retry = pushRetry(
    (isVaultError(err) && err.retryable) || err instanceof RenderLimitError,
    refreshMs(run.ps.spec),
  );
  return { err: retry.kind === 'backoff' ? err : new ReconcileError('Errored', message, retry), retry };
}

/** A failure of `apply`: the work queue's backoff (thrown), or the next refresh (a requeue). */
function settle(f: { err: unknown; retry: ReturnType<typeof pushRetry> }): Result {
  if (f.retry.kind === 'after') return requeueAfter(f.retry.ms);
  throw f.err;
}

/** The sources pushed to our stores, what it no longer pushes removed (deletionPolicy Delete), then status Synced. */
async function sync(run: PushRun, ours: ResolvedStore[]): Promise<Result> {
  let sources: SourceSecret[];
  try {
    sources = await resolveSources(run.ctx, run.ps.spec, run.ns);
  } catch (err) {
    return settle(await fail(run, sourceError(err)));
  }
  for (const s of sources) for (const v of s.data.values()) run.secretTexts.push(v.toString('utf8'));
  const synced: Synced = {};
  try {
    await pushAll(run, ours, sources, synced);
  } catch (err) {
    return settle(await fail(run, setSecretError(err), mergeSynced(synced, run.status.syncedPushSecrets)));
  }
  let kept: Synced;
  try {
    kept = await pruneUnpushed(run, ours, synced);
  } catch (err) {
    return settle(await fail(run, deleteError(err), mergeSynced(synced, run.status.syncedPushSecrets)));
  }
  const { spec } = run.ps;
  await applyStatus(
    run.ctx.client,
    PUSH_SECRETS,
    run.ps,
    syncedStatus(run.status, run.rv, kept, spec.updatePolicy === 'IfNotExists', run.t) as Record<string, unknown>,
  );
  const interval = refreshMs(spec);
  return interval > 0 ? requeueAfter(interval) : DONE;
}

/** deletionPolicy Delete: what it pushed before and no longer pushes is removed (only what it pushed). */
async function pruneUnpushed(run: PushRun, ours: ResolvedStore[], synced: Synced): Promise<Synced> {
  if (run.ps.spec.deletionPolicy !== 'Delete') return synced;
  const old = run.status.syncedPushSecrets ?? {};
  return mergeSynced(synced, await deleteRemote(run, ours, old, synced, 'no longer pushed (deletionPolicy Delete)'));
}

function sourceError(err: unknown): ReconcileError {
  return err instanceof ReconcileError
    ? err
    : new ReconcileError('Errored', `could not get source secret: ${errorPolicy(err).message}`);
}

/** ESO's errFailedSetSecret wrapping (a Vault outage keeps its own error: it is retried with backoff). */
function setSecretError(err: unknown): unknown {
  if ((isVaultError(err) && err.retryable) || err instanceof RenderLimitError) return err;
  return new ReconcileError(
    err instanceof ReconcileError && err.reason === 'InvalidSpec' ? 'InvalidSpec' : 'Errored',
    `set secret failed: ${errorPolicy(err).message}`,
  );
}

function deleteError(err: unknown): ReconcileError {
  return new ReconcileError('Errored', `Failed to Delete Secrets from Provider: ${errorPolicy(err).message}`);
}

/** Each source (rendered through spec.template) pushed to each of our stores, `synced` filled push by push. */
async function pushAll(run: PushRun, ours: ResolvedStore[], sources: SourceSecret[], synced: Synced): Promise<void> {
  const { spec } = run.ps;
  const templateSources = spec.template
    ? await readTemplateSources(run.ctx, run.ns, { template: spec.template })
    : undefined;
  run.secretTexts.push(...(templateSources?.secretTexts ?? []));
  for (const source of sources) {
    // ESO's PushSecret template: rendered over the Secret's data, keys it does not template kept.
    const data = spec.template
      ? (
          await run.renderer.desiredSecret(
            run.ns,
            { template: { ...spec.template, mergePolicy: 'Merge' } },
            source.data,
            {},
            templateSources?.sources,
          )
        ).data
      : source.data;
    for (const v of data.values()) run.secretTexts.push(v.toString('utf8'));
    // Filled push by push, so a failure still records what was pushed before it (as ESO does).
    for (const store of ours) await pushToStore(run, store, data, (synced[storeStatusKey(store)] ??= {}));
  }
}

/** The finalizer's cleanup: what it pushed is deleted; a failure keeps the finalizer (thrown). */
async function cleanup(run: PushRun, ours: ResolvedStore[]): Promise<void> {
  let left: Synced;
  try {
    left = await deleteRemote(
      run,
      ours,
      run.status.syncedPushSecrets ?? {},
      {},
      'PushSecret deleted (deletionPolicy Delete)',
    );
  } catch (err) {
    throw (await fail(run, deleteError(err))).err;
  }
  if (Object.keys(left).length > 0)
    throw (
      await fail(
        run,
        new ReconcileError(
          'Errored',
          'Failed to Delete Secrets from Provider: some remote secrets could not be deleted',
        ),
        left,
      )
    ).err;
}

function refreshMs(spec: PushSecretSpec): number {
  if (spec.refreshInterval === undefined) return DEFAULT_REFRESH_MS;
  const d = parseGoDuration(spec.refreshInterval);
  return d.ok ? Math.max(0, d.ms) : DEFAULT_REFRESH_MS;
}

/** The stores named or selected (ESO's GetSecretStores), a ClusterSecretStore only where its conditions allow this namespace. */
function resolveStores(ctx: ReconcileContext, refs: PushSecretStoreRef[], ns: string): ResolvedStore[] {
  const out = new Map<string, ResolvedStore>();
  const nsObj = tryCache(ctx, NAMESPACES)?.get(ns);
  for (const ref of refs) {
    const kind: StoreKind = ref.kind === 'ClusterSecretStore' ? 'ClusterSecretStore' : 'SecretStore';
    const cache = tryCache(ctx, kind === 'SecretStore' ? SECRET_STORES : CLUSTER_SECRET_STORES);
    const candidates = ref.labelSelector
      ? (cache?.list(kind === 'SecretStore' ? ns : undefined) ?? []).filter((s) =>
          selectorMatches(ref.labelSelector as LabelSelectorLike, s.metadata.labels),
        )
      : [cache?.get(kind === 'SecretStore' ? `${ns}/${ref.name ?? ''}` : (ref.name ?? ''))].filter(
          (s): s is KubeObject => s !== undefined,
        );
    if (!ref.labelSelector && candidates.length === 0) {
      if (!ref.name) throw new ReconcileError('Errored', 'refStore Name must be provided');
      throw new ReconcileError('Errored', `could not get ${kind} "${ref.name}": not found`);
    }
    for (const s of candidates as StoreObject[]) {
      if (
        kind === 'ClusterSecretStore' &&
        !storeAllowsNamespace(s.spec.conditions, ns, nsObj ? (nsObj.metadata.labels ?? {}) : undefined)
      ) {
        throw new ReconcileError(
          'Errored',
          `ClusterSecretStore ${s.metadata.name} does not allow namespace ${ns} (spec.conditions)`,
        );
      }
      out.set(`${kind}/${s.metadata.name}`, { kind, name: s.metadata.name, labels: s.metadata.labels ?? {}, store: s });
    }
  }
  return [...out.values()];
}

/** Source Secrets: by name, or by label selector, in the PushSecret's own namespace only. */
async function resolveSources(ctx: ReconcileContext, spec: PushSecretSpec, ns: string): Promise<SourceSecret[]> {
  const sel = spec.selector.secret;
  const toData = (s: KubeObject): Map<string, Buffer> =>
    new Map(Object.entries((s.data ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
  if (sel?.name) {
    const s = await ctx.client.get(SECRETS, sel.name, ns);
    if (!s) throw new ReconcileError('Errored', `could not get source secret: Secret ${ns}/${sel.name} not found`);
    return [{ name: sel.name, data: toData(s) }];
  }
  if (sel?.selector) {
    const list = await listAll(ctx.client, SECRETS, { namespace: ns });
    return list.items
      .filter((s) => selectorMatches(sel.selector as LabelSelectorLike, s.metadata.labels))
      .map((s) => ({ name: s.metadata.name, data: toData(s) }));
  }
  throw new ReconcileError('InvalidSpec', 'no secret selector provided');
}

interface Target {
  kv: KvApi;
  key: string;
  dataPath: string;
  metadataPath?: string;
  cas: boolean;
}

async function target(deps: PushSecretDeps, store: ResolvedStore, ns: string, remoteKey: string): Promise<Target> {
  // Keys computed at sync (dataTo's per-key names and rewrites) were never seen by admission.
  const traversal = vaultPathProblems(remoteKey);
  if (traversal.length > 0)
    throw new ReconcileError(
      'InvalidSpec',
      `remote key: ${traversal.map((p) => p.message).join('; ')} (rule eso.ps.vault-path)`,
    );
  const conn = await deps.connector.connect(store.kind, store.store, ns);
  const r = resolveKvPath(conn.kv.storePath, conn.kv.version, remoteKey);
  const v2 = conn.kv.version === 2;
  return {
    kv: createKvApi(conn.session, r.ref),
    key: r.key,
    dataPath: v2 ? `${r.ref.mount}/data/${r.key}` : `${r.ref.mount}/${r.key}`,
    ...(v2 ? { metadataPath: `${r.ref.mount}/metadata/${r.key}` } : {}),
    cas: v2 && store.store.spec.provider?.vault?.checkAndSet?.required === true,
  };
}

/** The namespace's guardrails on a path, as for a VaultPolicy rule granting `capabilities` there. */
function assertPathAllowed(
  path: string,
  capabilities: string[],
  ns: string,
  actx: ReturnType<typeof admissionContext>,
  field: string,
): void {
  const refused = policyRuleGuardrailFindings(
    { path, capabilities },
    { path: field, capabilities: field, capability: () => field },
    ns,
    guardrailsFor(ns, actx),
  ).filter((f) => f.severity === 'deny' && !f.auditOnly);
  if (refused.length > 0)
    throw new ReconcileError(
      'GuardrailViolation',
      `pushing to ${path} is not allowed in namespace ${ns}: ${refused.map((f) => `${f.message} (rule ${f.rule})`).join('; ')}`,
    );
}

async function readRemote(t: Target): Promise<RemoteState> {
  const secret = await t.kv.read(t.key);
  if (!t.metadataPath) {
    // KV v1: the markers are a custom_metadata field of the data itself (ESO's layout).
    if (!secret) return {};
    const { custom_metadata: cm, ...data } = secret.data as Record<string, unknown> & {
      custom_metadata?: Record<string, string>;
    };
    return { data, customMetadata: cm && typeof cm === 'object' ? cm : {} };
  }
  const meta = await t.kv.readMetadata(t.key);
  return { ...(secret ? { data: secret.data } : {}), ...(meta ? { customMetadata: meta.customMetadata } : {}) };
}

async function pushToStore(
  run: PushRun,
  store: ResolvedStore,
  data: Map<string, Buffer>,
  out: Record<string, PushSecretData>,
): Promise<void> {
  const { spec } = run.ps;
  let pushes;
  try {
    pushes = plannedPushes(spec, data, store);
  } catch (err) {
    throw new ReconcileError('Errored', `failed to expand dataTo: ${errorPolicy(err).message}`);
  }
  for (const push of pushes) {
    const remoteKey = push.data.match.remoteRef.remoteKey;
    // ESO's errSetSecretFailed names the source key.
    const where = `could not write remote ref ${push.data.match.secretKey ?? ''} to target secretstore ${store.name}`;
    const value = pushValue(push, data);
    const t = await target(run.deps, store, run.ns, remoteKey);
    for (const p of [t.dataPath, t.metadataPath].filter((x): x is string => x !== undefined))
      assertPathAllowed(p, ['create', 'update'], run.ns, run.actx, `spec.data remoteKey ${remoteKey}`);
    const remote = await readRemote(t);
    let planned: RemotePush;
    try {
      planned = planRemotePush(remote, push.data, value, run.id, spec.updatePolicy === 'IfNotExists');
    } catch (err) {
      throw new ReconcileError('Errored', `${where}: ${errorPolicy(err).message}`);
    }
    if (planned.kind === 'write') {
      try {
        await writeRemote(run, t, planned, `push through ${store.kind} ${store.name}`);
      } catch (err) {
        throw new ReconcileError('Errored', `${where}: ${errorPolicy(err).message}`);
      }
    }
    out[statusRef(push.data)] = push.data;
  }
}

/** A planned push: KV v2 markers in custom metadata, then the data (check-and-set when required); v1 both in one write. */
async function writeRemote(
  run: PushRun,
  t: Target,
  w: Extract<RemotePush, { kind: 'write' }>,
  reason: string,
): Promise<void> {
  if (!t.metadataPath) {
    await t.kv.write(t.key, { ...w.body, custom_metadata: w.markers });
    run.record({ action: w.dataAction, object: 'kv-secret', vaultName: t.dataPath, reason });
    return;
  }
  const meta = t.cas ? await t.kv.readMetadata(t.key) : undefined;
  await t.kv.writeMetadata(t.key, { customMetadata: w.markers });
  run.record({
    action: w.markersAction,
    object: 'kv-metadata',
    vaultName: t.metadataPath,
    reason: `${reason}: ownership markers`,
    content: w.markers,
  });
  if (!w.writeData) return;
  const written = await t.kv.write(t.key, w.body, t.cas ? { cas: meta?.currentVersion ?? 0 } : {});
  run.record({
    action: w.dataAction,
    object: 'kv-secret',
    vaultName: t.dataPath,
    reason,
    ...(written.version !== undefined ? { kvVersion: written.version } : {}),
  });
}

/**
 * Delete what `old` lists and `keep` does not (ESO's DeleteSecretFromProviders), but only remote secrets
 * this PushSecret pushed. Returns the entries that could not be handled (store gone or not ours).
 */
async function deleteRemote(
  run: PushRun,
  stores: ResolvedStore[],
  old: Synced,
  keep: Synced,
  reason: string,
): Promise<Synced> {
  const { deps, ns, id, actx, record } = run;
  const left: Synced = {};
  for (const [storeKey, entries] of Object.entries(old)) {
    const store = stores.find((s) => storeStatusKey(s) === storeKey);
    for (const [ref, entry] of Object.entries(entries)) {
      if (keep[storeKey]?.[ref]) continue;
      if (!store) {
        (left[storeKey] ??= {})[ref] = entry;
        continue;
      }
      // A key that does not name itself was never pushed by vaultgate: nothing of ours is there to delete.
      if (vaultPathProblems(entry.match.remoteRef.remoteKey).length > 0) continue;
      const t = await target(deps, store, ns, entry.match.remoteRef.remoteKey);
      const remote = await readRemote(t);
      const plan = remoteAfterDelete(remote, entry, id);
      if (!plan) continue; // not there, or not ours to delete
      for (const p of [t.dataPath, t.metadataPath].filter((x): x is string => x !== undefined))
        assertPathAllowed(p, ['delete', 'update'], ns, actx, `status.syncedPushSecrets ${storeKey} ${ref}`);
      if ('keep' in plan) {
        const written = await t.kv.write(
          t.key,
          t.metadataPath ? plan.keep : { ...plan.keep, custom_metadata: remote.customMetadata },
        );
        record({
          action: 'update',
          object: 'kv-secret',
          vaultName: t.dataPath,
          reason: `${reason}: property ${entry.match.remoteRef.property ?? ''} removed`,
          ...(written.version !== undefined ? { kvVersion: written.version } : {}),
        });
      } else {
        await t.kv.delete(t.key);
        record({ action: 'delete', object: 'kv-secret', vaultName: t.dataPath, reason });
        if (t.metadataPath) {
          await t.kv.deleteAll(t.key);
          record({
            action: 'delete',
            object: 'kv-metadata',
            vaultName: t.metadataPath,
            reason: `${reason}: every version and the metadata`,
          });
        }
      }
    }
  }
  return left;
}
