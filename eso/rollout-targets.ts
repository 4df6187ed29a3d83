// vaultgate's opt-in for ExternalSecrets (the reason ESO users install stakater/Reloader, ESO #1865,
// #3218): the annotation lists the workloads of the ExternalSecret's own namespace to restart when its
// target Secret's data changes. Read by admission (refused with field and rule) and by the rollout
// coordinator (controller/rollouts/), which ignores an unreadable list rather than guess.
import { parseWorkloadRefs, type ParsedRefs } from '../kube/workloads.ts';

/** `deployment/app,statefulset/db`: kubectl's kind/name, in the ExternalSecret's namespace. */
export const ROLLOUT_TARGETS_ANNOTATION = 'vaultgate.io/rollout-restart-targets';

export function externalSecretRolloutTargets(es: { metadata: { annotations?: Record<string, string> } }): ParsedRefs {
  const value = es.metadata.annotations?.[ROLLOUT_TARGETS_ANNOTATION];
  return value === undefined ? { refs: [], problems: [] } : parseWorkloadRefs(value);
}
