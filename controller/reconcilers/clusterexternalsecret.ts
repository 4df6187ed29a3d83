// ClusterExternalSecret → an ExternalSecret in each selected namespace (eso/cluster-external-secret.ts),
// with ESO v0.16.2's status (externalSecretName, provisionedNamespaces, failedNamespaces, Ready).
//
// A cluster admin's object, but what it creates is a tenant's ordinary ExternalSecret: each one is
// checked with the ExternalSecret admission rules for its namespace before it is written, then admitted
// by the webhook like any other, and synced by the ExternalSecret reconciler with that namespace's store,
// identity and guardrails. A namespace already holding an ExternalSecret of that name that is not this
// object's is left alone and listed as failed (ESO's rule). Level-triggered: the ExternalSecrets this
// object controls are found in the cache (not only in status), so a lost status or a crash between
// writes never leaves one behind; only ExternalSecrets it controls are ever updated or deleted.
import type { ClusterExternalSecretSpec, ClusterExternalSecretStatus, ExternalSecretSpec, SecretStoreRef, SecretStoreSpec } from '../../schemas/types.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { NAMESPACES } from '../../kube/resources.ts';
import { CLUSTER_EXTERNAL_SECRETS, CLUSTER_SECRET_STORES, EXTERNAL_SECRETS, SECRET_STORES } from '../../schemas/resources.ts';
import { controllerReference } from '../../kube/apply.ts';
import { applyStatus } from '../../kube/status.ts';
import { parseGoDuration } from '../../golang/index.ts';
import { ALREADY_EXISTS, asEsoWritesIt, clusterExternalSecretStatus, externalSecretNameOf, targetNamespaces, type NamespaceOutcome } from '../../eso/cluster-external-secret.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings, safeMessage } from './common.ts';
import { isOurClass } from './secretstore.ts';
import { tryCache } from './vaultpolicy.ts';

export interface ClusterExternalSecretObject extends KubeObject {
  spec: ClusterExternalSecretSpec;
  status?: ClusterExternalSecretStatus;
}

export interface ClusterExternalSecretDeps {
  controllerClass: string;
  namePrefix: string;
  /** Namespace re-check period when spec.refreshTime is unset (ESO's default requeue interval). Default 1 h. */
  defaultRefreshMs?: number;
}

const DEFAULT_REFRESH_MS = 3_600_000;

/** Controlled by the ClusterExternalSecret `name` (ESO's isExternalSecretOwnedBy: group, kind and name). */
function controlledBy(es: KubeObject, name: string): boolean {
  return (es.metadata.ownerReferences ?? []).some((r) => r.controller && r.kind === 'ClusterExternalSecret' && r.apiVersion.split('/')[0] === 'external-secrets.io' && r.name === name);
}

/** Store references of the ExternalSecrets it creates: the spec's and every entry's own. */
function storeRefs(spec: ExternalSecretSpec): SecretStoreRef[] {
  return [spec.secretStoreRef, ...(spec.data ?? []).map((d) => d.sourceRef?.storeRef), ...(spec.dataFrom ?? []).map((d) => d.sourceRef?.storeRef)]
    .filter((r): r is SecretStoreRef => r?.name !== undefined && r.name !== '');
}

export function createClusterExternalSecretReconciler(deps: ClusterExternalSecretDeps): Reconciler {
  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const ces = ctx.cache<ClusterExternalSecretObject>(CLUSTER_EXTERNAL_SECRETS).get(key);
    // Deleted: its ExternalSecrets go with it (owner references, garbage collection), as with ESO.
    if (!ces || ces.metadata.deletionTimestamp) return DONE;
    const name = ces.metadata.name;
    const spec = ces.spec;
    const refreshMs = refreshIntervalMs(spec.refreshTime) ?? deps.defaultRefreshMs ?? DEFAULT_REFRESH_MS;
    const nsCache = tryCache(ctx, NAMESPACES);
    const esCache = ctx.cache<KubeObject & { spec?: ExternalSecretSpec }>(EXTERNAL_SECRETS);
    const namespaces = targetNamespaces(spec, (nsCache?.list() ?? []).map((n) => ({ name: n.metadata.name, labels: n.metadata.labels ?? {} })));

    // Another controller's stores make it another controller's (as for an ExternalSecret): a
    // ClusterSecretStore of another class, or that SecretStore of another class in a selected namespace.
    const refs = storeRefs(spec.externalSecretSpec);
    const foreign = refs.some((ref) => {
      if (ref.kind === 'ClusterSecretStore') {
        const s = tryCache(ctx, CLUSTER_SECRET_STORES)?.get(ref.name ?? '');
        return s !== undefined && !isOurClass(s.spec as SecretStoreSpec | undefined, deps.controllerClass);
      }
      return namespaces.some((ns) => {
        const s = tryCache(ctx, SECRET_STORES)?.get(`${ns}/${ref.name ?? ''}`);
        return s !== undefined && !isOurClass(s.spec as SecretStoreSpec | undefined, deps.controllerClass);
      });
    });
    if (foreign) return DONE;

    const status = ces.status ?? {};
    const writeStatus = async (next: ClusterExternalSecretStatus): Promise<void> => {
      await applyStatus(ctx.client, CLUSTER_EXTERNAL_SECRETS, ces, next as Record<string, unknown>);
    };

    // The object itself, re-checked as the webhook checks it: a refused spec creates and changes nothing.
    const actx = admissionContext({ namespaces: nsCache, namePrefix: deps.namePrefix, controllerClass: deps.controllerClass });
    const refused = admissionDenials(ces, actx);
    if (refused.length > 0) {
      await writeStatus({ ...status, conditions: [{ type: 'Ready', status: 'False', message: `refused: ${describeFindings(refused)}` }] });
      ctx.events.record(ces, { type: 'Warning', reason: 'InvalidSpec', note: `refused: ${describeFindings(refused)}` });
      return DONE;
    }

    const esName = externalSecretNameOf(ces);
    const wanted = new Set(namespaces);
    // What it controls now and should not: another name (externalSecretName changed) or a namespace no
    // longer selected. Deleted with a uid precondition, so a replacement made meanwhile is never hit.
    const outcomes: NamespaceOutcome[] = [];
    for (const es of esCache.list().filter((e) => controlledBy(e, name))) {
      const ns = es.metadata.namespace ?? '';
      if (es.metadata.name === esName && wanted.has(ns)) continue;
      try {
        await ctx.client.delete(EXTERNAL_SECRETS, es.metadata.name, ns, { preconditions: { uid: es.metadata.uid } });
      } catch (err) {
        outcomes.push({ namespace: ns, error: `external secret in non matching namespace could not be deleted: ${safeMessage(err)}` });
      }
    }

    for (const ns of namespaces) {
      const existing = esCache.get(`${ns}/${esName}`);
      if (existing && !controlledBy(existing, name)) {
        outcomes.push({ namespace: ns, error: ALREADY_EXISTS });
        continue;
      }
      const desired = desiredExternalSecret(ces, ns, esName);
      // The namespace's own admission of that ExternalSecret (the webhook decides again on the write).
      const denials = admissionDenials({ ...desired, metadata: { ...desired.metadata, ...(existing?.metadata.uid ? { uid: existing.metadata.uid } : {}) } }, actx);
      if (denials.length > 0) {
        outcomes.push({ namespace: ns, error: `refused in namespace ${ns}: ${describeFindings(denials)}` });
        continue;
      }
      if (existing && upToDate(existing, desired)) {
        outcomes.push({ namespace: ns });
        continue;
      }
      try {
        await ctx.client.apply(EXTERNAL_SECRETS, desired, { force: true });
        outcomes.push({ namespace: ns });
      } catch (err) {
        outcomes.push({ namespace: ns, error: `could not create or update ExternalSecret: ${safeMessage(err)}` });
      }
    }

    await writeStatus(clusterExternalSecretStatus(esName, outcomes));
    return requeueAfter(refreshMs);
  };
}

function refreshIntervalMs(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const d = parseGoDuration(text);
  return d.ok && d.ms > 0 ? d.ms : undefined;
}

/** The ExternalSecret as the ClusterExternalSecret wants it in `ns` (ESO's createOrUpdateExternalSecret). */
export function desiredExternalSecret(ces: ClusterExternalSecretObject, ns: string, esName: string): KubeObject & { spec: ExternalSecretSpec } {
  const meta = ces.spec.externalSecretMetadata;
  return {
    apiVersion: 'external-secrets.io/v1', kind: 'ExternalSecret',
    metadata: {
      name: esName, namespace: ns,
      ...(meta?.labels && Object.keys(meta.labels).length ? { labels: meta.labels as Record<string, string> } : {}),
      ...(meta?.annotations && Object.keys(meta.annotations).length ? { annotations: meta.annotations as Record<string, string> } : {}),
      ownerReferences: [controllerReference(CLUSTER_EXTERNAL_SECRETS, ces)],
    },
    spec: asEsoWritesIt(ces.spec.externalSecretSpec),
  };
}

function upToDate(existing: KubeObject & { spec?: unknown }, desired: KubeObject & { spec: unknown }): boolean {
  const sub = (want: Record<string, string> | undefined, have: Record<string, string> | undefined): boolean => Object.entries(want ?? {}).every(([k, v]) => have?.[k] === v);
  return JSON.stringify(canonical(existing.spec)) === JSON.stringify(canonical(desired.spec))
    && sub(desired.metadata.labels, existing.metadata.labels) && sub(desired.metadata.annotations, existing.metadata.annotations)
    && controlledBy(existing, desired.metadata.ownerReferences?.[0]?.name ?? '');
}

/** Key order does not matter when comparing specs. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, canonical(x)]));
  return v;
}
