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
import type { Condition, KubeObject } from '../../kube/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { listAll } from '../../kube/kube-client.ts';
import { NAMESPACES, SECRETS } from '../../kube/resources.ts';
import { CLUSTER_SECRET_STORES, PUSH_SECRETS, SECRET_STORES, VAULT_GUARDRAILS } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import { timestamp } from '../../kube/conditions.ts';
import { selectorMatches, type LabelSelectorLike } from '../../kube/label-selector.ts';
import { createKvApi, resolveKvPath } from '../../vault/kv.ts';
import type { KvApi } from '../../vault/types.ts';
import { isVaultError } from '../../vault/errors.ts';
import { vaultPathProblems } from '../../vault/paths.ts';
import { parseGoDuration } from '../../golang/index.ts';
import { syncedResourceVersion } from '../../eso/refresh.ts';
import { storeAllowsNamespace } from '../../eso/store-conditions.ts';
import { inProcessRenderer, RenderLimitError, type SecretRenderer } from './render-pool.ts';
import {
  MANAGED_BY_KEY, MANAGED_BY_VALUE, PUSH_FINALIZER, PUSHED_BY_KEY, plannedPushes, pushValue, remoteAfterDelete, remoteAfterPush,
  statusRef, storeStatusKey, type RemoteState, type StoreIdentity,
} from '../../eso/push.ts';
import { guardrailsFor, policyRuleGuardrailFindings } from '../../webhook/rules/guardrails.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings, safeMessage, SafeError, type VaultWriteObserver } from './common.ts';
import { isOurClass } from './secretstore.ts';
import type { StoreConnector, StoreKind, StoreObject } from './store-connector.ts';
import { readTemplateSources } from './template-sources.ts';
import { withoutSecrets } from './externalsecret.ts';
import { tryCache } from './vaultpolicy.ts';

export interface PushSecretObject extends KubeObject {
  spec: PushSecretSpec;
}

type Synced = Record<string, Record<string, PushSecretData>>;
interface PsStatus { refreshTime?: string; syncedResourceVersion?: string; syncedPushSecrets?: Synced; conditions?: Condition[] }

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

interface ResolvedStore extends StoreIdentity { store: StoreObject }

/** Reports one Vault write of this PushSecret to the audit observer (its owner filled in). */
type KvWriteRecorder = (write: { action: 'create' | 'update' | 'delete'; object: 'kv-secret' | 'kv-metadata'; vaultName: string; reason: string; content?: Record<string, unknown>; kvVersion?: number }) => void;

export function createPushSecretReconciler(deps: PushSecretDeps): Reconciler {
  const now = deps.now ?? (() => new Date());
  const renderer = deps.renderer ?? inProcessRenderer();
  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const ps = ctx.cache<PushSecretObject>(PUSH_SECRETS).get(key);
    if (!ps) return DONE;
    const ns = ps.metadata.namespace ?? '';
    const id = `${ns}/${ps.metadata.name}`;
    const spec = ps.spec;
    const status = (ps.status ?? {}) as PsStatus;
    const t = now();
    const owner = { kind: 'PushSecret', namespace: ns, name: ps.metadata.name, ...(ps.metadata.uid ? { uid: ps.metadata.uid } : {}) };
    const recordWrite: KvWriteRecorder = (w) => deps.onVaultWrite?.({ ...w, owner });
    const actx = {
      ...admissionContext({ guardrails: tryCache(ctx, VAULT_GUARDRAILS), namespaces: tryCache(ctx, NAMESPACES), namePrefix: deps.namePrefix, controllerClass: deps.controllerClass }),
    };

    // Stores first: a PushSecret whose stores are all another controller's is that controller's.
    let stores: ResolvedStore[];
    try {
      stores = resolveStores(ctx, spec.secretStoreRefs, ns);
    } catch (err) {
      return fail(err);
    }
    const ours = stores.filter((s) => isOurClass(s.store.spec as SecretStoreSpec | undefined, deps.controllerClass));
    if (stores.length > 0 && ours.length === 0) return DONE;

    const secretTexts: string[] = [];
    async function writeStatus(next: PsStatus): Promise<void> {
      await applyStatus(ctx.client, PUSH_SECRETS, ps!, next as Record<string, unknown>);
    }
    function condition(statusValue: 'True' | 'False', reason: string, message: string): Condition[] {
      const prev = (status.conditions ?? []).find((c) => c.type === 'Ready');
      const same = prev?.status === statusValue;
      return [{ type: 'Ready', status: statusValue, reason, message, lastTransitionTime: same && prev?.lastTransitionTime ? prev.lastTransitionTime : timestamp(t) }];
    }
    async function fail(err: unknown, synced?: Synced): Promise<Result> {
      const message = withoutSecrets(safeMessage(err), secretTexts);
      await writeStatus({ ...status, ...(synced ? { syncedPushSecrets: synced } : {}), conditions: condition('False', 'Errored', message) });
      ctx.events.record(ps!, { type: 'Warning', reason: 'Errored', note: message });
      // A Vault outage, or a render stopped by the pool's deadline or heap limit: the work queue's backoff.
      if ((isVaultError(err) && err.retryable) || err instanceof RenderLimitError) throw err;
      return requeueAfter(Math.min(refreshMs(spec), 300_000) || 60_000);
    }

    // Deleted: remove what it pushed (deletionPolicy Delete, behind the finalizer), then let it go.
    if (ps.metadata.deletionTimestamp) {
      if (!(ps.metadata.finalizers ?? []).includes(PUSH_FINALIZER)) return DONE;
      try {
        const left = await deleteRemote(ctx, deps, ours, ns, id, status.syncedPushSecrets ?? {}, {}, actx, recordWrite, 'PushSecret deleted (deletionPolicy Delete)');
        if (Object.keys(left).length > 0) return await fail(new SafeError('Errored', 'Failed to Delete Secrets from Provider: some remote secrets could not be deleted'), left);
      } catch (err) {
        return fail(new SafeError('Errored', `Failed to Delete Secrets from Provider: ${safeMessage(err)}`));
      }
      await setFinalizer(ctx, ps, false);
      return DONE;
    }

    const denials = admissionDenials(ps, actx);
    if (denials.length > 0) return fail(new SafeError('InvalidSpec', `refused: ${describeFindings(denials)}`));

    // The finalizer follows the deletion policy (ESO: added for Delete, removed for None).
    const wantsFinalizer = spec.deletionPolicy === 'Delete';
    if (wantsFinalizer !== (ps.metadata.finalizers ?? []).includes(PUSH_FINALIZER)) await setFinalizer(ctx, ps, wantsFinalizer);

    const currentRv = syncedResourceVersion(ps.metadata.generation ?? 0, ps.metadata.labels, ps.metadata.annotations);
    const interval = refreshMs(spec);
    const last = status.refreshTime ? Date.parse(status.refreshTime) : NaN;
    // ESO's shouldRefresh: a spec or metadata change, never synced, or the interval passed ("0s": once).
    const due = status.syncedResourceVersion !== currentRv || (interval > 0 && (Number.isNaN(last) || last + interval < t.getTime()));
    if (!due) return interval > 0 ? requeueAfter(last + interval - t.getTime() + 5000) : DONE;

    let sources: Array<{ name: string; data: Map<string, Buffer> }>;
    try {
      sources = await resolveSources(ctx, spec, ns);
    } catch (err) {
      return fail(err instanceof SafeError ? err : new SafeError('Errored', `could not get source secret: ${safeMessage(err)}`));
    }
    for (const s of sources) for (const v of s.data.values()) secretTexts.push(v.toString('utf8'));

    const synced: Synced = {};
    try {
      const templateSources = spec.template ? await readTemplateSources(ctx, ns, { template: spec.template }) : undefined;
      secretTexts.push(...(templateSources?.secretTexts ?? []));
      for (const source of sources) {
        // ESO's PushSecret template: rendered over the Secret's data, keys it does not template kept.
        const data = spec.template
          ? (await renderer.desiredSecret(ns, { template: { ...spec.template, mergePolicy: 'Merge' } }, source.data, {}, templateSources?.sources)).data
          : source.data;
        for (const v of data.values()) secretTexts.push(v.toString('utf8'));
        // Filled push by push, so a failure still records what was pushed before it (as ESO does).
        for (const store of ours) await pushToStore(deps, store, ns, id, spec, data, actx, (synced[storeStatusKey(store)] ??= {}), recordWrite);
      }
    } catch (err) {
      // ESO's errFailedSetSecret wrapping (a Vault outage keeps its own error: it is retried with backoff).
      if ((isVaultError(err) && err.retryable) || err instanceof RenderLimitError) return fail(err, mergeSynced(synced, status.syncedPushSecrets));
      return fail(new SafeError(err instanceof SafeError && err.reason === 'InvalidSpec' ? 'InvalidSpec' : 'Errored', `set secret failed: ${safeMessage(err)}`), mergeSynced(synced, status.syncedPushSecrets));
    }

    // deletionPolicy Delete: what it pushed before and no longer pushes is removed (only what it pushed).
    let kept = synced;
    if (spec.deletionPolicy === 'Delete') {
      try {
        kept = mergeSynced(synced, await deleteRemote(ctx, deps, ours, ns, id, status.syncedPushSecrets ?? {}, synced, actx, recordWrite, 'no longer pushed (deletionPolicy Delete)'));
      } catch (err) {
        return fail(new SafeError('Errored', `Failed to Delete Secrets from Provider: ${safeMessage(err)}`), mergeSynced(synced, status.syncedPushSecrets));
      }
    }
    const message = `PushSecret synced successfully${spec.updatePolicy === 'IfNotExists' ? '. Existing secrets in providers unchanged.' : ''}`;
    await writeStatus({ refreshTime: timestamp(t), syncedResourceVersion: currentRv, syncedPushSecrets: kept, conditions: condition('True', 'Synced', message) });
    return interval > 0 ? requeueAfter(interval) : DONE;
  };
}

function refreshMs(spec: PushSecretSpec): number {
  if (spec.refreshInterval === undefined) return DEFAULT_REFRESH_MS;
  const d = parseGoDuration(spec.refreshInterval);
  return d.ok ? Math.max(0, d.ms) : DEFAULT_REFRESH_MS;
}

function mergeSynced(next: Synced, old: Synced | undefined): Synced {
  const out: Synced = structuredClone(next);
  for (const [store, entries] of Object.entries(old ?? {})) out[store] = { ...entries, ...out[store] };
  return out;
}

async function setFinalizer(ctx: ReconcileContext, ps: PushSecretObject, on: boolean): Promise<void> {
  const current = ps.metadata.finalizers ?? [];
  const finalizers = on ? [...current, PUSH_FINALIZER] : current.filter((f) => f !== PUSH_FINALIZER);
  await ctx.client.patch(PUSH_SECRETS, ps.metadata.name, ps.metadata.namespace, { metadata: { resourceVersion: ps.metadata.resourceVersion, finalizers } }, 'merge');
}

/** The stores named or selected (ESO's GetSecretStores), a ClusterSecretStore only where its conditions allow this namespace. */
function resolveStores(ctx: ReconcileContext, refs: PushSecretStoreRef[], ns: string): ResolvedStore[] {
  const out = new Map<string, ResolvedStore>();
  const nsObj = tryCache(ctx, NAMESPACES)?.get(ns);
  for (const ref of refs) {
    const kind: StoreKind = ref.kind === 'ClusterSecretStore' ? 'ClusterSecretStore' : 'SecretStore';
    const cache = tryCache(ctx, kind === 'SecretStore' ? SECRET_STORES : CLUSTER_SECRET_STORES);
    const candidates = ref.labelSelector
      ? (cache?.list(kind === 'SecretStore' ? ns : undefined) ?? []).filter((s) => selectorMatches(ref.labelSelector as LabelSelectorLike, s.metadata.labels))
      : [cache?.get(kind === 'SecretStore' ? `${ns}/${ref.name ?? ''}` : ref.name ?? '')].filter((s): s is KubeObject => s !== undefined);
    if (!ref.labelSelector && candidates.length === 0) {
      if (!ref.name) throw new SafeError('Errored', 'refStore Name must be provided');
      throw new SafeError('Errored', `could not get ${kind} "${ref.name}": not found`);
    }
    for (const s of candidates as StoreObject[]) {
      if (kind === 'ClusterSecretStore' && !storeAllowsNamespace(s.spec.conditions, ns, nsObj ? nsObj.metadata.labels ?? {} : undefined)) {
        throw new SafeError('Errored', `ClusterSecretStore ${s.metadata.name} does not allow namespace ${ns} (spec.conditions)`);
      }
      out.set(`${kind}/${s.metadata.name}`, { kind, name: s.metadata.name, labels: s.metadata.labels ?? {}, store: s });
    }
  }
  return [...out.values()];
}

/** Source Secrets: by name, or by label selector, in the PushSecret's own namespace only. */
async function resolveSources(ctx: ReconcileContext, spec: PushSecretSpec, ns: string): Promise<Array<{ name: string; data: Map<string, Buffer> }>> {
  const sel = spec.selector.secret;
  const toData = (s: KubeObject): Map<string, Buffer> => new Map(Object.entries((s.data ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
  if (sel?.name) {
    const s = await ctx.client.get(SECRETS, sel.name, ns);
    if (!s) throw new SafeError('Errored', `could not get source secret: Secret ${ns}/${sel.name} not found`);
    return [{ name: sel.name, data: toData(s) }];
  }
  if (sel?.selector) {
    const list = await listAll(ctx.client, SECRETS, { namespace: ns });
    return list.items.filter((s) => selectorMatches(sel.selector as LabelSelectorLike, s.metadata.labels)).map((s) => ({ name: s.metadata.name, data: toData(s) }));
  }
  throw new SafeError('InvalidSpec', 'no secret selector provided');
}

interface Target { kv: KvApi; key: string; dataPath: string; metadataPath?: string; cas: boolean }

async function target(deps: PushSecretDeps, store: ResolvedStore, ns: string, remoteKey: string): Promise<Target> {
  // Keys computed at sync (dataTo's per-key names and rewrites) were never seen by admission.
  const traversal = vaultPathProblems(remoteKey);
  if (traversal.length > 0) throw new SafeError('InvalidSpec', `remote key: ${traversal.map((p) => p.message).join('; ')} (rule eso.ps.vault-path)`);
  const conn = await deps.connector.connect(store.kind, store.store, ns);
  const r = resolveKvPath(conn.kv.storePath, conn.kv.version, remoteKey);
  const v2 = conn.kv.version === 2;
  return {
    kv: createKvApi(conn.session, r.ref), key: r.key,
    dataPath: v2 ? `${r.ref.mount}/data/${r.key}` : `${r.ref.mount}/${r.key}`,
    ...(v2 ? { metadataPath: `${r.ref.mount}/metadata/${r.key}` } : {}),
    cas: v2 && store.store.spec.provider?.vault?.checkAndSet?.required === true,
  };
}

/** The namespace's guardrails on a path, as for a VaultPolicy rule granting `capabilities` there. */
function assertPathAllowed(path: string, capabilities: string[], ns: string, actx: ReturnType<typeof admissionContext>, field: string): void {
  const refused = policyRuleGuardrailFindings({ path, capabilities }, { path: field, capabilities: field, capability: () => field }, ns, guardrailsFor(ns, actx))
    .filter((f) => f.severity === 'deny' && !f.auditOnly);
  if (refused.length > 0) throw new SafeError('GuardrailViolation', `pushing to ${path} is not allowed in namespace ${ns}: ${refused.map((f) => `${f.message} (rule ${f.rule})`).join('; ')}`);
}

async function readRemote(t: Target): Promise<RemoteState> {
  const secret = await t.kv.read(t.key);
  if (!t.metadataPath) {
    // KV v1: the markers are a custom_metadata field of the data itself (ESO's layout).
    if (!secret) return {};
    const { custom_metadata: cm, ...data } = secret.data as Record<string, unknown> & { custom_metadata?: Record<string, string> };
    return { data, customMetadata: cm && typeof cm === 'object' ? cm : {} };
  }
  const meta = await t.kv.readMetadata(t.key);
  return { ...(secret ? { data: secret.data } : {}), ...(meta ? { customMetadata: meta.customMetadata } : {}) };
}

async function pushToStore(
  deps: PushSecretDeps, store: ResolvedStore, ns: string, id: string, spec: PushSecretSpec,
  data: Map<string, Buffer>, actx: ReturnType<typeof admissionContext>, out: Record<string, PushSecretData>, record: KvWriteRecorder,
): Promise<void> {
  let pushes;
  try {
    pushes = plannedPushes(spec, data, store);
  } catch (err) {
    throw new SafeError('Errored', `failed to expand dataTo: ${(err as Error).message}`);
  }
  for (const push of pushes) {
    const remoteKey = push.data.match.remoteRef.remoteKey;
    // ESO's errSetSecretFailed names the source key.
    const where = `could not write remote ref ${push.data.match.secretKey ?? ''} to target secretstore ${store.name}`;
    const value = pushValue(push, data);
    const t = await target(deps, store, ns, remoteKey);
    for (const p of [t.dataPath, t.metadataPath].filter((x): x is string => x !== undefined)) assertPathAllowed(p, ['create', 'update'], ns, actx, `spec.data remoteKey ${remoteKey}`);
    const remote = await readRemote(t);
    if (spec.updatePolicy === 'IfNotExists' && exists(remote, push.data)) {
      out[statusRef(push.data)] = push.data;
      continue;
    }
    let next: Record<string, unknown> | undefined;
    try {
      next = remoteAfterPush(remote, push.data, value);
    } catch (err) {
      throw new SafeError('Errored', `${where}: ${(err as Error).message}`);
    }
    // Rewrite the marker naming this PushSecret also when the value is already there (taking over a
    // secret ESO pushed), so a later deletion knows it is ours.
    if (next !== undefined || remote.customMetadata?.[PUSHED_BY_KEY] !== id) {
      const markers = { ...remote.customMetadata, [MANAGED_BY_KEY]: MANAGED_BY_VALUE, [PUSHED_BY_KEY]: id };
      const body = next ?? remote.data ?? {};
      const reason = `push through ${store.kind} ${store.name}`;
      const dataAction = remote.data === undefined ? 'create' : 'update';
      try {
        if (t.metadataPath) {
          const meta = t.cas ? await t.kv.readMetadata(t.key) : undefined;
          await t.kv.writeMetadata(t.key, { customMetadata: markers });
          record({ action: remote.customMetadata === undefined ? 'create' : 'update', object: 'kv-metadata', vaultName: t.metadataPath, reason: `${reason}: ownership markers`, content: markers });
          if (next !== undefined || remote.data === undefined) {
            const written = await t.kv.write(t.key, body, t.cas ? { cas: meta?.currentVersion ?? 0 } : {});
            record({ action: dataAction, object: 'kv-secret', vaultName: t.dataPath, reason, ...(written.version !== undefined ? { kvVersion: written.version } : {}) });
          }
        } else {
          await t.kv.write(t.key, { ...body, custom_metadata: markers });
          record({ action: dataAction, object: 'kv-secret', vaultName: t.dataPath, reason });
        }
      } catch (err) {
        throw new SafeError('Errored', `${where}: ${safeMessage(err)}`);
      }
    }
    out[statusRef(push.data)] = push.data;
  }
}

/** ESO's SecretExists for IfNotExists: the remote secret (or its property) has a value. */
function exists(remote: RemoteState, push: PushSecretData): boolean {
  if (remote.data === undefined) return false;
  const p = push.match.remoteRef.property ?? '';
  return p === '' || remote.data[p] !== undefined;
}

/**
 * Delete what `old` lists and `keep` does not (ESO's DeleteSecretFromProviders), but only remote secrets
 * this PushSecret pushed. Returns the entries that could not be handled (store gone or not ours).
 */
async function deleteRemote(
  _ctx: ReconcileContext, deps: PushSecretDeps, stores: ResolvedStore[], ns: string, id: string, old: Synced, keep: Synced, actx: ReturnType<typeof admissionContext>,
  record: KvWriteRecorder, reason: string,
): Promise<Synced> {
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
      for (const p of [t.dataPath, t.metadataPath].filter((x): x is string => x !== undefined)) assertPathAllowed(p, ['delete', 'update'], ns, actx, `status.syncedPushSecrets ${storeKey} ${ref}`);
      if ('keep' in plan) {
        const written = await t.kv.write(t.key, t.metadataPath ? plan.keep : { ...plan.keep, custom_metadata: remote.customMetadata });
        record({ action: 'update', object: 'kv-secret', vaultName: t.dataPath, reason: `${reason}: property ${entry.match.remoteRef.property ?? ''} removed`, ...(written.version !== undefined ? { kvVersion: written.version } : {}) });
      } else {
        await t.kv.delete(t.key);
        record({ action: 'delete', object: 'kv-secret', vaultName: t.dataPath, reason });
        if (t.metadataPath) {
          await t.kv.deleteAll(t.key);
          record({ action: 'delete', object: 'kv-metadata', vaultName: t.metadataPath, reason: `${reason}: every version and the metadata` });
        }
      }
    }
  }
  return left;
}
