// ClusterSecretStore `spec.conditions`: which namespaces may use the store (ESO's
// ClusterSecretStore conditions, checked at reconcile time in esutils/store validation). No conditions →
// every namespace; otherwise a namespace is allowed if ANY condition matches it, and a condition matches
// if its namespaceSelector, its namespaces list or one of its namespaceRegexes matches.
import type { ClusterSecretStoreCondition } from '../schemas/types.ts';
import { selectorMatches } from '../kube/label-selector.ts';
import { compileGoRegexp } from '../golang/index.ts';

export function storeAllowsNamespace(
  conditions: readonly ClusterSecretStoreCondition[] | undefined,
  namespace: string,
  namespaceLabels: Record<string, string> | undefined,
): boolean {
  if (!conditions || conditions.length === 0) return true;
  return conditions.some((c) => conditionMatches(c, namespace, namespaceLabels));
}

function conditionMatches(
  c: ClusterSecretStoreCondition,
  namespace: string,
  labels: Record<string, string> | undefined,
): boolean {
  if (c.namespaceSelector && labels !== undefined && selectorMatches(c.namespaceSelector, labels)) return true;
  if (c.namespaces?.includes(namespace)) return true;
  for (const src of c.namespaceRegexes ?? []) {
    try {
      if (compileGoRegexp(src).test(namespace)) return true;
    } catch {
      // A regexp that does not compile matches nothing (admission refuses it; fail closed here).
    }
  }
  return false;
}
