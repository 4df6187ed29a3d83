// Runs one ControllerSpec: maps informer events to keys in a WorkQueue and runs N workers that call the
// reconciler, as controller-runtime's internal controller. Workers run only while started (i.e. while
// this replica leads); event handlers run always, so a new leader starts from a warm queue and cache.
// Keys are queued with a priority (kube/event-priority.ts): new objects and changes before metadata-only
// changes of the primary (a force-sync), before the initial list, resyncs and requeue-after (the periodic
// refresh); a retry keeps the priority its key was handed out with.
import { setMaxListeners } from 'node:events';
import type { Logger } from '../observability/log.ts';
import type { ControllerSpec, IndexMapping, MapFn, Predicate } from './builder.ts';
import type { Store } from './cache.ts';
import type { Clock } from './clock.ts';
import { isConflict, KubeApiError } from './errors.ts';
import { eventPriority, primaryEventPriority } from './event-priority.ts';
import type { EventRecorder } from './events.ts';
import type { Informer, ObjectEvent, WatchSelectors } from './informer.ts';
import type { KubeClient } from './kube-client.ts';
import type { RuntimeMetrics, ReconcileOutcome } from './metrics.ts';
import { objectKey, type KubeObject } from './objects.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { type ReconcileContext } from './reconciler.ts';
import { isTerminal, ReconcileError } from './reconcile-error.ts';
import { redactSecrets } from './redact.ts';
import type { ResourceRef } from './resources.ts';
import { namespaceOfKey, Priority, WorkQueue } from './workqueue.ts';

export interface ControllerDeps {
  client: KubeClient;
  /** The shared informer of `res`; `selectors` must match what the resource is already watched with. */
  informerFor: (res: ResourceRef, selectors?: WatchSelectors) => Informer;
  cacheFor: (res: ResourceRef) => Store;
  events: EventRecorder;
  log: Logger;
  metrics: RuntimeMetrics;
  clock: Clock;
  rateLimiter?: RateLimiter;
}

/** Keys of the primaries that control `obj`, from its controller ownerReference (EnqueueRequestForOwner). */
export function ownerKeys(primary: ResourceRef, obj: KubeObject): string[] {
  const group = primary.group;
  return (obj.metadata.ownerReferences ?? [])
    .filter(
      (r) =>
        r.controller &&
        r.kind === primary.kind &&
        (r.apiVersion.includes('/') ? r.apiVersion.split('/')[0] : '') === group,
    )
    .map((r) => (primary.namespaced && obj.metadata.namespace ? `${obj.metadata.namespace}/${r.name}` : r.name));
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  /** `stop` ends the workers' loops; `reconcile` is the signal reconciles see (aborted on lost leadership). */
  private run?: { stop: AbortController; reconcile: AbortController; workers: Promise<void>[] };

  constructor(
    private readonly spec: ControllerSpec,
    private readonly deps: ControllerDeps,
  ) {
    this.name = spec.name;
    // One namespace holds at most half the workers while another namespace's key waits (see WorkQueue).
    const fairness = spec.primary.namespaced
      ? { partition: namespaceOfKey, maxInFlight: Math.max(1, Math.floor(spec.workers / 2)) }
      : undefined;
    this.queue = new WorkQueue({
      clock: deps.clock,
      rateLimiter: deps.rateLimiter,
      metrics: deps.metrics.queueMetrics(spec.name),
      fairness,
    });
    deps.metrics.maxConcurrent.set({ controller: spec.name }, spec.workers);
    deps.metrics.activeWorkers.set({ controller: spec.name }, 0);
  }

  get primary(): ResourceRef {
    return this.spec.primary;
  }

  /** Register indexes and event handlers on the (shared) informers. Call before the informers start. */
  wire(): void {
    const { spec, deps } = this;
    const primary = deps.informerFor(spec.primary, spec.primarySelectors);
    for (const idx of spec.indexes) primary.cache.addIndex(idx.name, idx.fn);
    primary.addHandler(this.handler(spec.primaryPredicate, (obj) => [objectKey(obj)], primaryEventPriority));
    for (const o of spec.owns)
      deps
        .informerFor(o.resource, o.selectors)
        .addHandler(this.handler(o.predicate, (obj) => ownerKeys(spec.primary, obj), eventPriority));
    for (const w of spec.watches)
      deps
        .informerFor(w.resource, w.selectors)
        .addHandler(this.handler(w.predicate, this.mapper(w.map), eventPriority));
  }

  /** Start the workers (on becoming leader). */
  start(): void {
    if (this.run) return;
    const stop = new AbortController();
    // Each idle worker waits on `stop` in queue.get (one listener, removed when it takes a key): up to
    // `workers` listeners, past Node's warning at 10 with the default 16. Warn only beyond that bound.
    setMaxListeners(this.spec.workers, stop.signal);
    const reconcile = new AbortController();
    const workers = Array.from({ length: this.spec.workers }, () => this.worker(stop.signal, reconcile.signal));
    this.run = { stop, reconcile, workers };
  }

  /**
   * Stop the workers. `graceful`: take no new keys and let in-flight reconciles finish (shutdown).
   * Otherwise also abort the reconciles' signal at once (leadership lost).
   */
  async stop(opts: { graceful: boolean }): Promise<void> {
    const run = this.run;
    if (!run) return;
    this.run = undefined;
    if (!opts.graceful) run.reconcile.abort();
    run.stop.abort();
    await Promise.all(run.workers);
  }

  /** Stop for good: workers drained, queue closed. */
  async shutdown(): Promise<void> {
    await this.stop({ graceful: true });
    await this.queue.shutDown();
  }

  get running(): boolean {
    return this.run !== undefined;
  }

  private handler(
    predicate: Predicate | undefined,
    map: (obj: KubeObject) => string[],
    priorityOf: (ev: ObjectEvent) => number,
  ): (ev: ObjectEvent) => void {
    return (ev) => {
      if (predicate && !predicate(ev)) return;
      const keys = new Set(map(ev.obj));
      if (ev.type === 'update') for (const k of map(ev.old)) keys.add(k); // also whoever the old version pointed at
      const priority = priorityOf(ev);
      for (const k of keys) this.queue.add(k, priority);
    };
  }

  private mapper(map: MapFn | IndexMapping): (obj: KubeObject) => string[] {
    if (typeof map === 'function') return map;
    const primaryCache = this.deps.informerFor(this.spec.primary).cache;
    return (obj) => map.values(obj).flatMap((v) => primaryCache.keysByIndex(map.index, v));
  }

  private async worker(stop: AbortSignal, reconcile: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get(stop);
      if (key === undefined) return;
      try {
        await this.process(key, reconcile);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async process(key: string, signal: AbortSignal): Promise<void> {
    const { deps, spec } = this;
    const log = deps.log.child({ controller: spec.name, key });
    const ctx: ReconcileContext = {
      controller: spec.name,
      client: deps.client,
      cache: deps.cacheFor as ReconcileContext['cache'],
      events: deps.events,
      log,
      signal,
      retries: this.queue.retries(key),
    };
    const started = deps.clock.now();
    deps.metrics.activeWorkers.inc({ controller: spec.name });
    let outcome: ReconcileOutcome;
    try {
      const result = await spec.reconciler(key, ctx);
      this.queue.forget(key);
      if (result.requeueAfterMs !== undefined && result.requeueAfterMs >= 0) {
        this.queue.addAfter(key, result.requeueAfterMs, Priority.Low); // the periodic look again
        outcome = 'requeue_after';
      } else outcome = 'success';
    } catch (err) {
      outcome = this.onError(key, err, signal, log);
    } finally {
      deps.metrics.activeWorkers.dec({ controller: spec.name });
    }
    deps.metrics.reconcileTotal.inc({ controller: spec.name, result: outcome });
    deps.metrics.reconcileTime.observe({ controller: spec.name }, (deps.clock.now() - started) / 1000);
  }

  private onError(key: string, err: unknown, signal: AbortSignal, log: Logger): ReconcileOutcome {
    const { metrics } = this.deps;
    const controller = this.spec.name;
    const message = redactSecrets(err instanceof Error ? err.message : String(err));
    if (signal.aborted) {
      this.queue.add(key, this.queue.inFlightPriority(key)); // interrupted by lost leadership: pick it up again if we lead again
      return 'requeue';
    }
    if (isTerminal(err)) {
      this.queue.forget(key);
      metrics.reconcileErrors.inc({ controller });
      metrics.terminalErrors.inc({ controller });
      log.warn({ reason: err.reason, error: message }, 'reconcile failed (terminal, not retried)');
      return 'error';
    }
    if (isConflict(err)) {
      // A stale cache read: not a failure. Retry with backoff; the watch brings the newer version.
      this.queue.addRateLimited(key);
      log.debug({ error: message }, 'conflict, requeued');
      return 'requeue';
    }
    if (err instanceof ReconcileError && err.retry.kind === 'after') {
      this.queue.forget(key);
      this.queue.addAfter(key, err.retry.ms, Priority.Low);
      metrics.reconcileErrors.inc({ controller });
      log.warn(
        { reason: err.reason, error: message, retryAfterMs: err.retry.ms },
        'reconcile failed, will retry after a delay',
      );
      return 'error';
    }
    this.queue.addRateLimited(key);
    metrics.reconcileErrors.inc({ controller });
    const reason =
      err instanceof ReconcileError
        ? err.reason
        : err instanceof KubeApiError
          ? err.reason
          : (err as { name?: string })?.name;
    log.error({ reason, error: message, retries: this.queue.retries(key) }, 'reconcile failed, will retry');
    return 'error';
  }
}
