// ClusterExternalSecret → one ExternalSecret per selected namespace, as ESO v0.16.2's controller
// (pkg/controllers/clusterexternalsecret): the namespaces are the union of `namespaces` (matched by the
// kubernetes.io/metadata.name label, so only existing ones) and every selector (the deprecated
// namespaceSelector and namespaceSelectors; an empty selector selects every namespace). Each
// ExternalSecret is named externalSecretName (default the object's name), carries
// externalSecretMetadata's labels and annotations and the spec, and is controlled by the
// ClusterExternalSecret. Pure: the reconciler (controller/reconcilers/clusterexternalsecret.ts) does the I/O.
import type { ClusterExternalSecretSpec, ClusterExternalSecretStatus } from '../schemas/types.ts';
import type { ExternalSecretSpec } from '../schemas/types.ts';
import { selectorMatches, type LabelSelectorLike } from '../kube/label-selector.ts';
import { parseGoDuration, formatGoDuration } from '../golang/index.ts';

export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';
/** ESO's errNamespacesFailed, the Ready=False message. */
export const NAMESPACES_FAILED = 'one or more namespaces failed';
/** ESO's reason for a namespace whose ExternalSecret of that name is not this object's. */
export const ALREADY_EXISTS = 'external secret already exists in namespace';

export interface NamespaceView {
  name: string;
  labels?: Record<string, string>;
}

/** The selected namespaces, sorted, each once (ESO's GetTargetNamespaces). */
export function targetNamespaces(
  spec: Pick<ClusterExternalSecretSpec, 'namespaces' | 'namespaceSelector' | 'namespaceSelectors'>,
  namespaces: readonly NamespaceView[],
): string[] {
  const selectors: LabelSelectorLike[] = [
    ...(spec.namespaces ?? []).map((n) => ({ matchLabels: { [NAMESPACE_NAME_LABEL]: n } })),
    ...(spec.namespaceSelector ? [spec.namespaceSelector] : []),
    ...(spec.namespaceSelectors ?? []).filter((s): s is NonNullable<typeof s> => s !== null && s !== undefined),
  ];
  const out = new Set<string>();
  for (const ns of namespaces) if (selectors.some((s) => selectorMatches(s, ns.labels))) out.add(ns.name);
  return [...out].sort();
}

export function externalSecretNameOf(ces: {
  metadata: { name: string };
  spec: Pick<ClusterExternalSecretSpec, 'externalSecretName'>;
}): string {
  return ces.spec.externalSecretName || ces.metadata.name;
}

/**
 * The spec as ESO writes it: ESO copies it through its Go types, so its metav1.Duration fields come out
 * in Go's canonical form ("1h" becomes "1h0m0s"), which is what a user then sees on the ExternalSecret.
 */
export function asEsoWritesIt(spec: ExternalSecretSpec): ExternalSecretSpec {
  const canonical = (d: string): string => {
    const parsed = parseGoDuration(d);
    return parsed.ok ? formatGoDuration(Math.round(parsed.ms * 1e6)) : d;
  };
  const out = structuredClone(spec);
  if (out.refreshInterval !== undefined) out.refreshInterval = canonical(out.refreshInterval);
  for (const w of out.syncWindows?.windows ?? []) w.duration = canonical(w.duration);
  return out;
}

export interface NamespaceOutcome {
  namespace: string;
  error?: string;
}

/** ESO's status: failed namespaces sorted with their reason, provisioned ones sorted, Ready. */
export function clusterExternalSecretStatus(
  esName: string,
  outcomes: readonly NamespaceOutcome[],
): ClusterExternalSecretStatus {
  const failed = outcomes
    .filter((o) => o.error !== undefined)
    .map((o) => ({ namespace: o.namespace, reason: o.error ?? '' }))
    .sort((a, b) => (a.namespace < b.namespace ? -1 : 1));
  const provisioned = outcomes
    .filter((o) => o.error === undefined)
    .map((o) => o.namespace)
    .sort();
  return {
    externalSecretName: esName,
    ...(failed.length ? { failedNamespaces: failed } : {}),
    ...(provisioned.length ? { provisionedNamespaces: provisioned } : {}),
    conditions: [
      failed.length
        ? { type: 'Ready', status: 'False', message: NAMESPACES_FAILED }
        : { type: 'Ready', status: 'True' },
    ],
  };
}
