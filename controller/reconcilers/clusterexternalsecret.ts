// ClusterExternalSecret → an ExternalSecret in each selected namespace (eso/cluster-external-secret.ts),
// with ESO v0.16.2's status (externalSecretName, provisionedNamespaces, failedNamespaces, Ready).
// observe (the cache) → planClusterExternalSecret (clusterexternalsecret-plan.ts, pure) → act.
//
// A cluster admin's object, but what it creates is a tenant's ordinary ExternalSecret: each one is
// checked with the ExternalSecret admission rules for its namespace before it is written, then admitted
// by the webhook like any other, and synced by the ExternalSecret reconciler with that namespace's store,
// identity and guardrails. A namespace already holding an ExternalSecret of that name that is not this
// object's is left alone and listed as failed (ESO's rule). Level-triggered: the ExternalSecrets this
// object controls are found in the cache (not only in status), so a lost status or a crash between
// writes never leaves one behind; only ExternalSecrets it controls are ever updated or deleted.
import type {
  ClusterExternalSecretSpec,
  ClusterExternalSecretStatus,
  ExternalSecretSpec,
  SecretStoreRef,
  SecretStoreSpec,
} from '../../schemas/types.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { NAMESPACES } from '../../kube/resources.ts';
import {
  CLUSTER_EXTERNAL_SECRETS,
  CLUSTER_SECRET_STORES,
  EXTERNAL_SECRETS,
  SECRET_STORES,
} from '../../schemas/resources.ts';
import { controllerReference } from '../../kube/apply.ts';
import { applyStatus } from '../../kube/status.ts';
import { parseGoDuration } from '../../golang/index.ts';
import {
  asEsoWritesIt,
  clusterExternalSecretStatus,
  externalSecretNameOf,
  targetNamespaces,
  type NamespaceOutcome,
} from '../../eso/cluster-external-secret.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings } from './common.ts';
import { errorPolicy } from './error-policy.ts';
import {
  applyFailed,
  deleteFailed,
  planClusterExternalSecret,
  type CesDesired,
  type CesObserved,
  type CesPlan,
  type NamespaceView,
} from './clusterexternalsecret-plan.ts';
import type { AdmissionContext } from '../../webhook/admission/context.ts';
import { isOurClass, tryCache } from './lookups.ts';

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
  return (es.metadata.ownerReferences ?? []).some(
    (r) =>
      r.controller &&
      r.kind === 'ClusterExternalSecret' &&
      r.apiVersion.split('/')[0] === 'external-secrets.io' &&
      r.name === name,
  );
}

/** Store references of the ExternalSecrets it creates: the spec's and every entry's own. */
function storeRefs(spec: ExternalSecretSpec): SecretStoreRef[] {
  return [
    spec.secretStoreRef,
    ...(spec.data ?? []).map((d) => d.sourceRef?.storeRef),
    ...(spec.dataFrom ?? []).map((d) => d.sourceRef?.storeRef),
  ].filter((r): r is SecretStoreRef => r?.name !== undefined && r.name !== '');
}

export function createClusterExternalSecretReconciler(deps: ClusterExternalSecretDeps): Reconciler {
  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const ces = ctx.cache<ClusterExternalSecretObject>(CLUSTER_EXTERNAL_SECRETS).get(key);
    // Deleted: its ExternalSecrets go with it (owner references, garbage collection), as with ESO.
    if (!ces || ces.metadata.deletionTimestamp) return DONE;
    const actx = admissionContext({
      namespaces: tryCache(ctx, NAMESPACES),
      namePrefix: deps.namePrefix,
      controllerClass: deps.controllerClass,
    });
    const d = desiredOf(ces, ctx, deps, actx);
    const plan = planClusterExternalSecret(d, observe(ctx, ces, d, deps.controllerClass, actx));
    return act(ctx, ces, d, plan);
  };
}

/** The namespaces it selects and the name it gives, or why the object itself is refused (the webhook's rules). */
function desiredOf(
  ces: ClusterExternalSecretObject,
  ctx: ReconcileContext,
  deps: ClusterExternalSecretDeps,
  actx: AdmissionContext,
): CesDesired {
  const nsCache = tryCache(ctx, NAMESPACES);
  const refused = admissionDenials(ces, actx);
  return {
    esName: externalSecretNameOf(ces),
    namespaces: targetNamespaces(
      ces.spec,
      (nsCache?.list() ?? []).map((n) => ({ name: n.metadata.name, labels: n.metadata.labels ?? {} })),
    ),
    ...(refused.length > 0 ? { refused: `refused: ${describeFindings(refused)}` } : {}),
    refreshMs: refreshIntervalMs(ces.spec.refreshTime) ?? deps.defaultRefreshMs ?? DEFAULT_REFRESH_MS,
  };
}

/**
 * The ExternalSecrets it controls, found in the cache (not only in status: a lost status or a crash between
 * writes never leaves one behind), and each selected namespace: what is there, and whether that
 * namespace's admission would take ours.
 */
function observe(
  ctx: ReconcileContext,
  ces: ClusterExternalSecretObject,
  d: CesDesired,
  controllerClass: string,
  actx: AdmissionContext,
): CesObserved {
  const name = ces.metadata.name;
  const esCache = ctx.cache<KubeObject & { spec?: ExternalSecretSpec }>(EXTERNAL_SECRETS);
  const selected = d.namespaces.map((ns): NamespaceView => {
    const existing = esCache.get(`${ns}/${d.esName}`);
    const view: NamespaceView = {
      namespace: ns,
      ...(existing ? { existing: { controlledByUs: controlledBy(existing, name), upToDate: false } } : {}),
    };
    if (existing && !view.existing!.controlledByUs) return view;
    const desired = desiredExternalSecret(ces, ns, d.esName);
    // The namespace's own admission of that ExternalSecret (the webhook decides again on the write).
    const denials = admissionDenials(
      {
        ...desired,
        metadata: { ...desired.metadata, ...(existing?.metadata.uid ? { uid: existing.metadata.uid } : {}) },
      },
      actx,
    );
    if (denials.length > 0) view.denied = describeFindings(denials);
    if (existing) view.existing!.upToDate = upToDate(existing, desired);
    return view;
  });
  return {
    anotherControllersStore: anotherControllersStore(ctx, ces.spec.externalSecretSpec, d.namespaces, controllerClass),
    controlled: esCache
      .list()
      .filter((e) => controlledBy(e, name))
      .map((e) => ({ namespace: e.metadata.namespace ?? '', name: e.metadata.name, uid: e.metadata.uid })),
    selected,
  };
}

/**
 * Another controller's stores make it another controller's (as for an ExternalSecret): a
 * ClusterSecretStore of another class, or that SecretStore of another class in a selected namespace.
 */
function anotherControllersStore(
  ctx: ReconcileContext,
  spec: ExternalSecretSpec,
  namespaces: string[],
  controllerClass: string,
): boolean {
  const foreign = (s: KubeObject | undefined): boolean =>
    s !== undefined && !isOurClass(s.spec as SecretStoreSpec | undefined, controllerClass);
  return storeRefs(spec).some((ref) =>
    ref.kind === 'ClusterSecretStore'
      ? foreign(tryCache(ctx, CLUSTER_SECRET_STORES)?.get(ref.name ?? ''))
      : namespaces.some((ns) => foreign(tryCache(ctx, SECRET_STORES)?.get(`${ns}/${ref.name ?? ''}`))),
  );
}

/** Deletes (with a uid precondition, so a replacement made meanwhile is never hit), applies, then the status. */
async function act(
  ctx: ReconcileContext,
  ces: ClusterExternalSecretObject,
  d: CesDesired,
  plan: CesPlan,
): Promise<Result> {
  for (const e of plan.events) ctx.events.record(ces, e);
  if (plan.decision === 'skip') return DONE;
  if (plan.refusedMessage !== undefined) {
    await writeStatus(ctx, ces, {
      ...(ces.status ?? {}),
      conditions: [{ type: 'Ready', status: 'False', message: plan.refusedMessage }],
    });
    return DONE;
  }
  const outcomes: NamespaceOutcome[] = [];
  for (const es of plan.deletes) {
    await ctx.client
      .delete(EXTERNAL_SECRETS, es.name, es.namespace, { preconditions: { uid: es.uid } })
      .catch((err: unknown) => outcomes.push(deleteFailed(es.namespace, errorPolicy(err).message)));
  }
  for (const n of plan.namespaces) {
    if (!n.apply) outcomes.push({ namespace: n.namespace, ...(n.error !== undefined ? { error: n.error } : {}) });
    else {
      await ctx.client.apply(EXTERNAL_SECRETS, desiredExternalSecret(ces, n.namespace, d.esName), { force: true }).then(
        () => outcomes.push({ namespace: n.namespace }),
        (err: unknown) => outcomes.push(applyFailed(n.namespace, errorPolicy(err).message)),
      );
    }
  }
  await writeStatus(ctx, ces, clusterExternalSecretStatus(d.esName, outcomes));
  return plan.requeueAfterMs !== undefined ? requeueAfter(plan.requeueAfterMs) : DONE;
}

async function writeStatus(
  ctx: ReconcileContext,
  ces: ClusterExternalSecretObject,
  next: ClusterExternalSecretStatus,
): Promise<void> {
  await applyStatus(ctx.client, CLUSTER_EXTERNAL_SECRETS, ces, next as Record<string, unknown>);
}

function refreshIntervalMs(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const d = parseGoDuration(text);
  return d.ok && d.ms > 0 ? d.ms : undefined;
}

/** The ExternalSecret as the ClusterExternalSecret wants it in `ns` (ESO's createOrUpdateExternalSecret). */
export function desiredExternalSecret(
  ces: ClusterExternalSecretObject,
  ns: string,
  esName: string,
): KubeObject & { spec: ExternalSecretSpec } {
  const meta = ces.spec.externalSecretMetadata;
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: {
      name: esName,
      namespace: ns,
      ...(meta?.labels && Object.keys(meta.labels).length ? { labels: meta.labels as Record<string, string> } : {}),
      ...(meta?.annotations && Object.keys(meta.annotations).length
        ? { annotations: meta.annotations as Record<string, string> }
        : {}),
      ownerReferences: [controllerReference(CLUSTER_EXTERNAL_SECRETS, ces)],
    },
    spec: asEsoWritesIt(ces.spec.externalSecretSpec),
  };
}

function upToDate(existing: KubeObject & { spec?: unknown }, desired: KubeObject & { spec: unknown }): boolean {
  const sub = (want: Record<string, string> | undefined, have: Record<string, string> | undefined): boolean =>
    Object.entries(want ?? {}).every(([k, v]) => have?.[k] === v);
  return (
    JSON.stringify(canonical(existing.spec)) === JSON.stringify(canonical(desired.spec)) &&
    sub(desired.metadata.labels, existing.metadata.labels) &&
    sub(desired.metadata.annotations, existing.metadata.annotations) &&
    controlledBy(existing, desired.metadata.ownerReferences?.[0]?.name ?? '')
  );
}

/** Key order does not matter when comparing specs. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, x]) => [k, canonical(x)]),
    );
  return v;
}
