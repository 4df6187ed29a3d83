// The reconciler contract, as controller-runtime's pkg/reconcile: a reconciler gets a *key*, never an
// event, reads the current state (cache first), converges the world, and says when to look again.
// Informers, queueing, dedup, retries and backoff are the runtime's job.
import type { Logger } from '../observability/log.ts';
import type { Store } from './cache.ts';
import type { EventRecorder } from './events.ts';
import type { KubeClient } from './kube-client.ts';
import type { KubeObject } from './objects.ts';
import type { ResourceRef } from './resources.ts';

/**
 * `{}` = converged: nothing to do until something changes (or the periodic resync).
 * `{ requeueAfterMs }` = look again after that long (e.g. a token or lease to renew), no backoff counted.
 */
export type Result = { requeueAfterMs?: number };

export const DONE: Result = Object.freeze({});
export const requeueAfter = (ms: number): Result => ({ requeueAfterMs: ms });

/** What a reconcile gets besides its key. Everything here is replaceable by a fake in unit tests. */
export interface ReconcileContext {
  /** Name of the controller running this reconcile (for logs and metrics). */
  controller: string;
  /** Writes (and uncached reads) go to the apiserver through this. */
  client: KubeClient;
  /**
   * The informer cache of a resource this controller watches (`for`, `owns`, `watches`). Reads come from
   * here, not the apiserver; objects are frozen (structuredClone before editing). Throws for a resource
   * nobody watches: that's a wiring bug, not a runtime condition.
   */
  cache<T extends KubeObject = KubeObject>(res: ResourceRef): Store<T>;
  /** Kubernetes Events about the object (de-duplicated). */
  events: EventRecorder;
  log: Logger;
  /** Aborted when the controller stops or leadership is lost: pass it to slow calls (Vault, HTTP). */
  signal: AbortSignal;
  /** Consecutive failed attempts for this key before this one (0 = first try). */
  retries: number;
}

/**
 * One reconcile of one key (`namespace/name`, or `name` for cluster-scoped kinds). Must be idempotent.
 * Throwing retries as the error says (kube/reconcile-error.ts): with per-key exponential backoff
 * (5 ms → 1000 s) unless it is a ReconcileError whose retry is `after` (once, after that delay) or `never`
 * (not retried: the object waits for its next change). A 409 Conflict thrown from a write is a requeue
 * with backoff, not counted as a reconcile error (the cache was stale; level-triggered logic catches up).
 */
export type Reconciler = (key: string, ctx: ReconcileContext) => Promise<Result>;
