// apps/v1 workloads as a rollout sees them: references `kind/name` (parsed from an annotation or a spec
// list), the pod template's annotations, and whether the last change of the template has rolled out.
// "Rolled out" follows `kubectl rollout status` for each kind (kubernetes/kubectl
// pkg/polymorphichelpers/rollout_status.go): the controller has observed the latest generation and every
// replica is updated, ready (available where the kind has it) and no old replica remains.
import type { KubeObject } from './objects.ts';
import { DAEMONSETS, DEPLOYMENTS, STATEFULSETS, type ResourceRef } from './resources.ts';

export type WorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet';
export const WORKLOAD_KINDS: readonly WorkloadKind[] = ['Deployment', 'StatefulSet', 'DaemonSet'];

/** How vaultgate paces the restarts it causes (controller/rollouts/); admission weighs credential timings against it. */
export interface RolloutPolicy {
  /** A change waits this long for its siblings (other Secrets of the same workload) before it restarts. */
  coalesceMs: number;
  /** At least this long between two restarts of one workload. */
  cooldownMs: number;
  /** Workloads of one namespace rolling at once because of vaultgate. */
  maxConcurrent: number;
}

export const DEFAULT_ROLLOUT_POLICY: Readonly<RolloutPolicy> = Object.freeze({
  coalesceMs: 10_000,
  cooldownMs: 60_000,
  maxConcurrent: 3,
});

export interface WorkloadRef {
  kind: WorkloadKind;
  name: string;
}

export const WORKLOAD_RESOURCES: Readonly<Record<WorkloadKind, ResourceRef>> = {
  Deployment: DEPLOYMENTS,
  StatefulSet: STATEFULSETS,
  DaemonSet: DAEMONSETS,
};

/** `Deployment/ns/name`: one key for a workload across the three kinds. */
export function workloadKey(kind: WorkloadKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

// A DNS-1123 subdomain (the name rule of the three kinds), at most 253 characters.
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Bound on a tenant's list (hostile input: bounded work). */
export const MAX_WORKLOAD_REFS = 32;

const KIND_WORDS: Readonly<Record<string, WorkloadKind>> = {
  deployment: 'Deployment',
  deployments: 'Deployment',
  deploy: 'Deployment',
  statefulset: 'StatefulSet',
  statefulsets: 'StatefulSet',
  sts: 'StatefulSet',
  daemonset: 'DaemonSet',
  daemonsets: 'DaemonSet',
  ds: 'DaemonSet',
};

/** A kind word as kubectl accepts it (`deployment`, `deploy`, `Deployment` …), or undefined. */
export function workloadKind(word: string): WorkloadKind | undefined {
  return KIND_WORDS[word.toLowerCase()];
}

/** Why a name cannot name a workload, or undefined when it can. */
export function workloadNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > 253) return 'is longer than 253 characters';
  if (!NAME.test(name)) return 'is not a DNS-1123 subdomain (lowercase letters, digits, "-" and ".")';
  return undefined;
}

export type ParsedRefs = { refs: WorkloadRef[]; problems: string[] };

/**
 * Parse `deployment/app,statefulset/db` (kubectl's `kind/name`; spaces around items allowed). A name with
 * a `/` in it (`deployment/other-ns/app`) is refused: targets are in the object's own namespace.
 * Duplicates are kept once.
 */
export function parseWorkloadRefs(text: string): ParsedRefs {
  const refs: WorkloadRef[] = [];
  const problems: string[] = [];
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length > MAX_WORKLOAD_REFS)
    return { refs: [], problems: [`lists ${items.length} workloads, more than ${MAX_WORKLOAD_REFS}`] };
  for (const item of items) {
    const parts = item.split('/');
    if (parts.length > 2) {
      problems.push(
        `"${item.slice(0, 80)}" names another namespace or has a "/" in its name: a target is kind/name in the object's own namespace`,
      );
      continue;
    }
    if (parts.length < 2) {
      problems.push(`"${item.slice(0, 80)}" is not kind/name (kind: deployment, statefulset or daemonset)`);
      continue;
    }
    const kind = workloadKind(parts[0]!);
    if (!kind) {
      problems.push(
        `"${item.slice(0, 80)}": kind "${parts[0]!.slice(0, 40)}" is not deployment, statefulset or daemonset`,
      );
      continue;
    }
    const bad = workloadNameProblem(parts[1]!);
    if (bad) {
      problems.push(`"${item.slice(0, 80)}": the name ${bad}`);
      continue;
    }
    if (!refs.some((r) => r.kind === kind && r.name === parts[1])) refs.push({ kind, name: parts[1]! });
  }
  return { refs, problems };
}

/** The pod template's annotations (a copy's worth: read only). */
export function podTemplateAnnotations(workload: KubeObject): Readonly<Record<string, string>> {
  const spec = workload.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined;
  return spec?.template?.metadata?.annotations ?? {};
}

/**
 * `stalled`: a Deployment past its progressDeadlineSeconds (Progressing=False, ProgressDeadlineExceeded).
 * `unready`: a workload whose template rolled out (every pod of the current template; a Deployment's
 * Progressing reason NewReplicaSetAvailable, a StatefulSet's currentRevision = updateRevision) but whose
 * pods are not all ready now, e.g. because the credential they started with died: no rollout is in
 * progress, so a restart stacks nothing and is what brings them the new credential.
 */
export type RolloutState = 'complete' | 'rolling' | 'stalled' | 'unready';

/** A paused Deployment rolls no template change until `kubectl rollout resume`. */
export function isPaused(kind: WorkloadKind, workload: KubeObject): boolean {
  return kind === 'Deployment' && (workload.spec as { paused?: boolean } | undefined)?.paused === true;
}

type Num = number | undefined;
const n = (v: Num): number => (typeof v === 'number' ? v : 0);

/**
 * Has the workload's current template rolled out? (A paused Deployment is judged the same: complete when
 * its pods run its template.) A StatefulSet with updateStrategy OnDelete stays `rolling` until its pods
 * are deleted: until then they run the old template.
 */
export function rolloutState(kind: WorkloadKind, workload: KubeObject): RolloutState {
  const spec = (workload.spec ?? {}) as { replicas?: number };
  const status = (workload.status ?? {}) as Record<string, Num | string>;
  const observed = n(status.observedGeneration as Num);
  if (observed < n(workload.metadata.generation)) return 'rolling';
  if (kind === 'DaemonSet') {
    const desired = n(status.desiredNumberScheduled as Num);
    if (n(status.updatedNumberScheduled as Num) < desired) return 'rolling';
    return n(status.numberReady as Num) >= desired && n(status.numberAvailable as Num) >= desired
      ? 'complete'
      : 'unready';
  }
  const want = spec.replicas ?? 1;
  const updated = n(status.updatedReplicas as Num);
  const ready = n(status.readyReplicas as Num);
  const total = n(status.replicas as Num);
  if (kind === 'Deployment') {
    if (updated >= want && ready >= want && total <= updated && n(status.availableReplicas as Num) >= want)
      return 'complete';
    const conditions =
      (workload.status as { conditions?: { type?: string; status?: string; reason?: string }[] } | undefined)
        ?.conditions ?? [];
    if (
      conditions.some(
        (c) => c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded',
      )
    )
      return 'stalled';
    // The Deployment controller leaves NewReplicaSetAvailable in place once a rollout completed, until the next
    // template (kubernetes/kubernetes pkg/controller/deployment/progress.go, syncRolloutStatus: isCompleteDeployment).
    const rolledOut = conditions.some(
      (c) => c.type === 'Progressing' && c.status === 'True' && c.reason === 'NewReplicaSetAvailable',
    );
    return rolledOut && updated >= want && total <= updated ? 'unready' : 'rolling';
  }
  if (updated < want || total > updated) return 'rolling';
  // StatefulSet: every pod at the update revision (OnDelete: only once its pods were deleted). The controller
  // sets currentRevision to updateRevision when a rolling update completes, and keeps it when pods go
  // unready afterwards (kubernetes/kubernetes pkg/controller/statefulset/stateful_set_utils.go,
  // completeRollingUpdate).
  const cur = status.currentRevision;
  const upd = status.updateRevision;
  if (typeof upd === 'string' && typeof cur === 'string' && cur !== upd) return 'rolling';
  return ready < want ? 'unready' : 'complete';
}
