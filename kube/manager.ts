// Ties the runtime together, as controller-runtime's manager:
// - one informer per resource, shared by every controller that watches it, started once;
// - caches synced before any worker starts;
// - leader election gates the workers only: informers and event handlers run on standbys too, so a new
//   leader starts with a warm cache and a filled queue;
// - losing the lease aborts in-flight reconciles and stops workers at once, then campaigns again;
// - leader tasks (controller-runtime's leader-election runnables, e.g. the webhook cert keeper) run only
//   while leading: started on election, their signal aborted on lost leadership or shutdown;
// - graceful shutdown: stop taking work, finish in-flight reconciles, release the lease, stop informers.
import { setMaxListeners } from 'node:events';
import type { Logger } from '../observability/log.ts';
import { silentLogger } from '../observability/log.ts';
import { ControllerBuilder, type ControllerHost, type ControllerSpec } from './builder.ts';
import type { IndexFn, Store } from './cache.ts';
import type { CacheTransform } from './cache-transform.ts';
import { systemClock, type Clock } from './clock.ts';
import { Controller } from './controller.ts';
import { KubeEventRecorder, nullRecorder, type EventRecorder } from './events.ts';
import { Informer, type InformerLifecycleEvent, type InformerOptions, type WatchSelectors } from './informer.ts';
import type { KubeClient } from './kube-client.ts';
import { LeaderElector, type LeaderElectionConfig } from './leader.ts';
import { RuntimeMetrics } from './metrics.ts';
import type { KubeObject } from './objects.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { NAMESPACES, resourceId, type ResourceRef } from './resources.ts';

export interface ManagerOptions {
  client: KubeClient;
  log?: Logger;
  metrics?: RuntimeMetrics;
  clock?: Clock;
  /** Watch namespaced resources in this namespace only (default: all namespaces). */
  namespace?: string;
  /**
   * Watch namespaced resources in these namespaces only, and of the Namespace objects only these (a
   * namespaced install: Roles in each, no cluster-wide list). Wins over `namespace`.
   */
  namespaces?: readonly string[];
  /** Informer tuning shared by every informer (resync period, page size, watchdog...). */
  informer?: Omit<InformerOptions, 'resource' | 'namespace' | 'namespaces' | 'names' | 'clock'>;
  /**
   * Resources whose CRD may be missing (kinds added after a cluster's CRDs were installed): their informers
   * treat a 404 as synced and empty and look again every 30 s, so the process gets Ready without them.
   */
  optionalResources?: readonly ResourceRef[];
  /**
   * What the cache keeps of a resource's objects, instead of the informer's default (kube/cache-transform.ts),
   * e.g. Secrets without their values.
   */
  cacheTransforms?: readonly { resource: ResourceRef; transform: CacheTransform }[];
  /** Off when omitted (single replica, tests). */
  leaderElection?: LeaderElectionConfig;
  /** An EventRecorder, or what's needed to build the Kubernetes one. Default: a recorder that drops events. */
  events?: EventRecorder | { controller: string; instance: string };
  /** Per-controller rate limiter factory (tests); default client-go's controller rate limiter. */
  rateLimiter?: () => RateLimiter;
}

export type LeaderState = 'disabled' | 'leader' | 'standby';

/** Work that only the leader does; resolves once `signal` aborts (leadership lost or shutdown). */
export type LeaderTask = (signal: AbortSignal) => Promise<void>;

export interface ManagerStatus {
  /** Every informer has listed its resource at least once. */
  synced: boolean;
  leader: LeaderState;
  informers: { resource: string; labelSelector?: string; synced: boolean; phase: string }[];
  controllers: { name: string; running: boolean; queued: number; inFlight: number }[];
}

export class Manager implements ControllerHost {
  readonly client: KubeClient;
  readonly metrics: RuntimeMetrics;
  readonly events: EventRecorder;
  readonly log: Logger;
  private readonly clock: Clock;
  private readonly informers = new Map<string, Informer>();
  private readonly controllers: Controller[] = [];
  private readonly leaderTasks: { name: string; run: LeaderTask }[] = [];
  private runningTasks: { abort: AbortController; done: Promise<void> }[] = [];
  /** Settles when every leader task stopped so far has returned (stop() waits for it). */
  private tasksSettled: Promise<void> = Promise.resolve();
  private elector?: LeaderElector;
  private state: 'new' | 'started' | 'stopped' = 'new';
  private readonly stopController = new AbortController();

  constructor(private readonly opts: ManagerOptions) {
    // Every informer waits on the stop signal (one listener each): more than Node's default of 10 is no leak.
    setMaxListeners(0, this.stopController.signal);
    this.client = opts.client;
    this.log = opts.log ?? silentLogger;
    this.metrics = opts.metrics ?? new RuntimeMetrics();
    this.clock = opts.clock ?? systemClock;
    const ev = opts.events;
    this.events = !ev
      ? nullRecorder
      : 'record' in ev
        ? ev
        : new KubeEventRecorder({
            client: opts.client,
            controller: ev.controller,
            instance: ev.instance,
            log: this.log,
            clock: this.clock,
          });
  }

  /** Start declaring a controller: `mgr.controller('name').for(RES)....complete(reconciler)`. */
  controller(name: string): ControllerBuilder {
    if (this.controllers.some((c) => c.name === name))
      throw new Error(`manager: controller "${name}" already registered`);
    return new ControllerBuilder(this, name);
  }

  /** ControllerHost: called by ControllerBuilder.complete(). */
  addController(spec: ControllerSpec): void {
    if (this.state !== 'new') throw new Error('manager: controllers must be registered before start()');
    const controller = new Controller(spec, {
      client: this.client,
      informerFor: (r, sel) => this.informer(r, sel ?? {}),
      cacheFor: (r) => this.cache(r),
      events: this.events,
      log: this.log,
      metrics: this.metrics,
      clock: this.clock,
      rateLimiter: this.opts.rateLimiter?.(),
    });
    controller.wire();
    this.controllers.push(controller);
  }

  /**
   * The shared informer of a resource (created on first use; started by start()). `selectors` restrict
   * what it lists and watches (e.g. only Secrets labelled as managed): there is one informer per
   * resource, so every declaration of a resource must agree on them. Without `selectors` an existing
   * informer is returned whatever it selects (lookups); a new one selects everything.
   */
  informer<T extends KubeObject = KubeObject>(res: ResourceRef, selectors?: WatchSelectors): Informer<T> {
    const id = resourceId(res);
    let inf = this.informers.get(id);
    if (inf && selectors && selectorsKey(selectors) !== selectorsKey(inf.opts)) {
      throw new Error(
        `manager: ${id} is already watched with ${describeSelectors(inf.opts)}; cannot also watch it with ${describeSelectors(selectors)}`,
      );
    }
    if (!inf) {
      inf = new Informer(this.client, {
        ...this.opts.informer,
        resource: res,
        ...this.scopeOf(res),
        clock: this.clock,
        ...(this.opts.optionalResources?.some((r) => resourceId(r) === id) ? { optional: true } : {}),
        ...transformOf(this.opts.cacheTransforms, id),
        ...(selectors?.labelSelector ? { labelSelector: selectors.labelSelector } : {}),
        ...(selectors?.fieldSelector ? { fieldSelector: selectors.fieldSelector } : {}),
      });
      inf.onLifecycle((ev) => this.observeInformer(id, ev));
      this.informers.set(id, inf);
      if (this.state === 'started') inf.start();
    }
    return inf as unknown as Informer<T>;
  }

  /** What an informer of `res` may see: the manager's namespaces (and of Namespaces, those objects only). */
  private scopeOf(res: ResourceRef): Pick<InformerOptions, 'namespace' | 'namespaces' | 'names'> {
    const namespaces = this.opts.namespaces?.length
      ? this.opts.namespaces
      : this.opts.namespace
        ? [this.opts.namespace]
        : undefined;
    if (!namespaces) return {};
    if (res.namespaced) return { namespaces };
    return resourceId(res) === resourceId(NAMESPACES) ? { names: namespaces } : {};
  }

  /** Run `task` only while this replica leads (always, without leader election). Register before start(). */
  addLeaderTask(name: string, task: LeaderTask): void {
    if (this.state !== 'new') throw new Error('manager: leader tasks must be registered before start()');
    if (this.leaderTasks.some((t) => t.name === name))
      throw new Error(`manager: leader task "${name}" already registered`);
    this.leaderTasks.push({ name, run: task });
  }

  /** The cache of a watched resource. Throws if nothing watches it (a wiring bug). */
  cache<T extends KubeObject = KubeObject>(res: ResourceRef): Store<T> {
    const inf = this.informers.get(resourceId(res));
    if (!inf) throw new Error(`manager: no informer for ${resourceId(res)}; declare it with for/owns/watches`);
    return inf.cache as unknown as Store<T>;
  }

  /** Add an index to a resource's cache (e.g. for a reconciler's byIndex lookups on a watched kind). */
  addIndex<T extends KubeObject = KubeObject>(res: ResourceRef, name: string, fn: IndexFn<T>): void {
    this.informer<T>(res).cache.addIndex(name, fn);
  }

  /**
   * Start informers, wait for their caches, then run workers (at once, or when elected). Resolves when
   * caches are synced (or `stop()` was called first).
   */
  async start(): Promise<void> {
    if (this.state === 'stopped') return; // stopped before it started (shutdown during startup)
    if (this.state !== 'new') throw new Error('manager: start() called twice');
    this.state = 'started';
    for (const inf of this.informers.values()) inf.start();
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(this.stopController.signal)));
    if (this.stopController.signal.aborted) return;
    this.log.info({ informers: this.informers.size }, 'caches synced');
    const le = this.opts.leaderElection;
    if (!le) {
      for (const c of this.controllers) c.start();
      this.startLeaderTasks();
      return;
    }
    this.metrics.leaderStatus.set({ name: le.name }, 0);
    this.elector = new LeaderElector({
      ...le,
      client: this.client,
      clock: this.clock,
      log: this.log,
      onStartedLeading: () => {
        this.metrics.leaderStatus.set({ name: le.name }, 1);
        for (const c of this.controllers) c.start();
        this.startLeaderTasks();
      },
      onStoppedLeading: () => {
        this.metrics.leaderStatus.set({ name: le.name }, 0);
        // Lost (or released): reconciles see their signal abort now; nothing new is taken.
        for (const c of this.controllers) void c.stop({ graceful: this.stopController.signal.aborted });
        void this.stopLeaderTasks();
      },
      onNewLeader: (identity) => this.log.info({ leader: identity }, 'leader observed'),
    });
    this.elector.start();
  }

  /** Graceful shutdown: no new work, in-flight reconciles finish, lease released, informers stopped. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.stopController.abort();
    await Promise.all(this.controllers.map((c) => c.shutdown()));
    await this.stopLeaderTasks(); // before the lease is released: a new leader's tasks never overlap ours
    await this.elector?.stop();
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
    if (this.events instanceof KubeEventRecorder) await this.events.flush();
  }

  status(): ManagerStatus {
    const informers = [...this.informers.entries()].map(([resource, i]) => ({
      resource,
      ...(i.opts.labelSelector ? { labelSelector: i.opts.labelSelector } : {}),
      synced: i.synced,
      phase: i.phase,
    }));
    return {
      synced: informers.every((i) => i.synced),
      leader: !this.opts.leaderElection ? 'disabled' : this.elector?.isLeader ? 'leader' : 'standby',
      informers,
      controllers: this.controllers.map((c) => ({
        name: c.name,
        running: c.running,
        queued: c.queue.length,
        inFlight: c.queue.inFlight,
      })),
    };
  }

  private startLeaderTasks(): void {
    if (this.stopController.signal.aborted) return;
    this.runningTasks = this.leaderTasks.map(({ name, run }) => {
      const abort = new AbortController();
      this.log.info({ task: name }, 'leader task starting');
      const done = Promise.resolve()
        .then(() => run(abort.signal))
        .then(
          () => {
            if (!abort.signal.aborted) this.log.warn({ task: name }, 'leader task ended before leadership did');
          },
          (err: unknown) => {
            this.log.error({ task: name, err: err instanceof Error ? err.message : String(err) }, 'leader task failed');
          },
        );
      return { abort, done };
    });
  }

  private stopLeaderTasks(): Promise<void> {
    const running = this.runningTasks;
    this.runningTasks = [];
    for (const t of running) t.abort.abort();
    this.tasksSettled = Promise.all([this.tasksSettled, ...running.map((t) => t.done)]).then(() => undefined);
    return this.tasksSettled;
  }

  private observeInformer(resource: string, ev: InformerLifecycleEvent): void {
    this.metrics.observeInformer(resource, ev);
    switch (ev.type) {
      case 'WATCH_ERROR':
      case 'LIST_ERROR':
        this.log.warn({ resource, event: ev.type, error: ev.error.toJSON() }, 'informer error, backing off');
        return;
      case 'NOT_SERVED':
        this.log.warn(
          { resource, retryMs: ev.retryMs },
          'the API server does not serve this resource (its CRD is not installed): none are reconciled until it is',
        );
        return;
      case 'RELIST_410':
      case 'WATCHDOG_RESTART':
      case 'HANDLER_ERROR':
        this.log.info({ resource, event: ev }, 'informer restart');
        return;
      case 'BOOKMARK':
      case 'CONNECT':
      case 'WATCH_CLOSED':
        return;
      default:
        this.log.debug({ resource, event: ev }, 'informer');
    }
  }
}

function selectorsKey(s: WatchSelectors): string {
  return `${s.labelSelector ?? ''}\n${s.fieldSelector ?? ''}`;
}

function describeSelectors(s: WatchSelectors): string {
  const parts = [
    s.labelSelector ? `labelSelector "${s.labelSelector}"` : '',
    s.fieldSelector ? `fieldSelector "${s.fieldSelector}"` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(' and ') : 'no selector';
}

function transformOf(transforms: ManagerOptions['cacheTransforms'], id: string): Pick<InformerOptions, 'transform'> {
  const t = transforms?.find((x) => resourceId(x.resource) === id);
  return t ? { transform: t.transform } : {};
}
