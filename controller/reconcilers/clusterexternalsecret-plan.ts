// What the ClusterExternalSecret reconciler does, decided from what it observed. Pure: no I/O.
// Only ExternalSecrets it controls are ever updated or deleted; a namespace already holding an
// ExternalSecret of that name that is not its own is left alone and listed as failed (ESO's rule).
import { ALREADY_EXISTS, type NamespaceOutcome } from '../../eso/cluster-external-secret.ts';

export interface CesDesired {
  /** The ExternalSecret name it creates in each namespace (spec.externalSecretName, else its own). */
  esName: string;
  /** The namespaces it selects, in order. */
  namespaces: string[];
  /** Why the object itself is refused (admission's re-check): it creates and changes nothing. */
  refused?: string;
  /** Re-check period of the namespace selection. */
  refreshMs: number;
}

/** One selected namespace, as it is. */
export interface NamespaceView {
  namespace: string;
  /** The ExternalSecret `esName` there, if any: whether it is ours, whether it already is what we want. */
  existing?: { controlledByUs: boolean; upToDate: boolean };
  /** Admission's refusal of the ExternalSecret we would write there (that namespace's rules). */
  denied?: string;
}

export interface CesObserved {
  /** A store it names is another controller class's, in the cluster or a selected namespace. */
  anotherControllersStore: boolean;
  /** The ExternalSecrets it controls now, wherever they are. */
  controlled: Array<{ namespace: string; name: string; uid?: string }>;
  /** Each selected namespace (desired.namespaces, in order). */
  selected: NamespaceView[];
}

export type CesDecision = 'skip' | 'refuse' | 'sync';

export interface CesPlan {
  decision: CesDecision;
  /** ExternalSecrets it controls and should not (another name, or a namespace no longer selected): deleted with a uid precondition. */
  deletes: Array<{ namespace: string; name: string; uid?: string }>;
  /** Per selected namespace: apply ours there, or its outcome as it is (an error, or provisioned). */
  namespaces: Array<{ namespace: string; apply: boolean; error?: string }>;
  /** Ready=False with this message (refused); otherwise the status follows from the outcomes. */
  refusedMessage?: string;
  events: Array<{ type: 'Warning'; reason: string; note: string }>;
  /** undefined: wait for a change; else look again after this long. */
  requeueAfterMs?: number;
}

export function planClusterExternalSecret(d: CesDesired, o: CesObserved): CesPlan {
  if (o.anotherControllersStore) return { decision: 'skip', deletes: [], namespaces: [], events: [] };
  if (d.refused !== undefined) {
    return {
      decision: 'refuse',
      deletes: [],
      namespaces: [],
      refusedMessage: d.refused,
      events: [{ type: 'Warning', reason: 'InvalidSpec', note: d.refused }],
    };
  }
  const wanted = new Set(d.namespaces);
  const deletes = o.controlled.filter((es) => !(es.name === d.esName && wanted.has(es.namespace)));
  const namespaces = o.selected.map((v): CesPlan['namespaces'][number] => {
    if (v.existing && !v.existing.controlledByUs)
      return { namespace: v.namespace, apply: false, error: ALREADY_EXISTS };
    if (v.denied !== undefined)
      return { namespace: v.namespace, apply: false, error: `refused in namespace ${v.namespace}: ${v.denied}` };
    return { namespace: v.namespace, apply: !v.existing?.upToDate };
  });
  return { decision: 'sync', deletes, namespaces, events: [], requeueAfterMs: d.refreshMs };
}

/** The outcome of a failed delete, as ESO words it. */
export function deleteFailed(namespace: string, message: string): NamespaceOutcome {
  return { namespace, error: `external secret in non matching namespace could not be deleted: ${message}` };
}

/** The outcome of a failed apply. */
export function applyFailed(namespace: string, message: string): NamespaceOutcome {
  return { namespace, error: `could not create or update ExternalSecret: ${message}` };
}
