// A supervised list-then-watch informer for one resource, written as a small explicit state machine
// (kube-rs's watcher.rs) instead of client-node 1.4's makeInformer, which dies silently on any non-410
// error, never requests bookmarks or pages, and has no client-side watch timeout, so a half-open connection stops it with no error
// (kubernetes-client/javascript#596, #958).
//
//   Empty ──LIST pages ok──▶ Watching(rv) ──clean close / watchdog──▶ Watching(last rv)   (no relist)
//     ▲                         │ 410 (HTTP or in-stream ERROR)
//     └────────────RELIST_410───┘
//   any other error ──▶ Backoff(jittered, growing) ──▶ the state that failed
//
// A relist swaps the cache atomically once every page is in (Cache.replaceAll), so deletes are emitted
// only for objects really gone, never mid-relist. Transport: the KubeClient's watch (raw node:http(s)
// with the KubeConfig's agent and auth headers), so a per-watch AbortController cancels both on
// watchdog and on stop.
//
// Scopes: an informer restricted to several namespaces (`namespaces`), or to several named cluster-scoped
// objects (`names`, e.g. the Namespace objects of a namespaced install), runs one such state machine per
// namespace or name, all feeding one cache. A namespaced install has no right to list cluster-wide, and
// the apiserver has no "namespace in (a, b)" selector; a relist of one scope replaces only its own part.
import { Backoff, type BackoffOptions } from './backoff.ts';
import { Cache } from './cache.ts';
import { stripBookkeeping, type CacheTransform } from './cache-transform.ts';
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { isGone, isNotFound, errorFromResponse, toKubeError, type KubeApiError } from './errors.ts';
import type { KubeClient } from './kube-client.ts';
import { objectKey, type KubeObject, type Status } from './objects.ts';
import type { ResourceRef } from './resources.ts';

/** A change to a cached object, delivered to handlers (which only enqueue keys). */
export type ObjectEvent<T extends KubeObject = KubeObject> =
  /** `initial`: from a scope's first LIST, or replayed to a late handler (client-go's isInInitialList). */
  | { type: 'add'; obj: T; initial?: boolean }
  | { type: 'update'; old: T; obj: T }
  | { type: 'delete'; obj: T }
  /** Periodic re-delivery of every cached object (controller-runtime's SyncPeriod). */
  | { type: 'resync'; obj: T };

/** What the informer is doing, for logs and metrics. */
export type InformerLifecycleEvent =
  | { type: 'LIST'; items: number; pages: number; added: number; updated: number; deleted: number }
  | { type: 'LIST_ERROR'; error: KubeApiError }
  | { type: 'CONNECT'; resourceVersion: string }
  | { type: 'WATCH_CLOSED'; events: number }
  | { type: 'WATCH_ERROR'; error: KubeApiError }
  | { type: 'RELIST_410'; resourceVersion: string }
  | { type: 'BACKOFF'; delayMs: number; attempt: number }
  | { type: 'WATCHDOG_RESTART'; quietMs: number }
  | { type: 'BOOKMARK'; resourceVersion: string }
  | { type: 'SYNCED' }
  /** An optional resource the API server does not serve (404: its CRD is not installed). */
  | { type: 'NOT_SERVED'; retryMs: number }
  | { type: 'RESYNC'; objects: number }
  | { type: 'HANDLER_ERROR'; error: string }
  | { type: 'STOPPED' };

export type InformerState =
  | { phase: 'Empty' }
  | { phase: 'Watching'; rv: string }
  | { phase: 'Backoff'; delayMs: number; then: InformerState }
  | { phase: 'Stopped' };

/** Server-side filters of what an informer lists and watches. */
export interface WatchSelectors {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface InformerOptions extends WatchSelectors {
  resource: ResourceRef;
  namespace?: string;
  /** Namespaced resource: list and watch only these namespaces (one list/watch each; wins over `namespace`). */
  namespaces?: readonly string[];
  /** Cluster-scoped resource: list and watch only the objects of these names (fieldSelector metadata.name=, one each). */
  names?: readonly string[];
  /** LIST page size (`limit`). Default 500, as client-go's pager. */
  pageSize?: number;
  /** Re-deliver every key this often; 0 = never. Default DEFAULT_RESYNC_MS, stretched by up to 10% per informer. */
  resyncMs?: number;
  /** Server-side `timeoutSeconds` per watch. Default random in [300, 600) as client-go's reflector. */
  watchTimeoutSeconds?: number;
  /** Restart a watch after this long without any event or bookmark. Default timeoutSeconds + 30 s. */
  watchdogMs?: number;
  /** A clean close sooner than this after connecting, with no events, counts as a failure (backoff). */
  minWatchMs?: number;
  backoff?: BackoffOptions;
  /**
   * A resource whose CRD may not be installed (a kind newer than the cluster's CRDs: helm upgrade does not
   * add CRDs). A LIST answered 404 counts as synced with nothing, so the process gets Ready without it,
   * and is tried again every `notServedRetryMs` (default 30 s) until the resource is served.
   */
  optional?: boolean;
  notServedRetryMs?: number;
  /**
   * What is kept of each object, applied before it is cached or handed to handlers (kube/cache-transform.ts).
   * Default `stripBookkeeping`: no managedFields, no last-applied annotation, repeated strings shared.
   */
  transform?: CacheTransform;
  clock?: Clock;
  random?: () => number;
}

type Client = Pick<KubeClient, 'list' | 'watch'>;

/**
 * The default resync: controller-runtime's SyncPeriod (10 h, each informer's stretched by up to 10% so they
 * do not all fire at once). A resync re-runs every reconcile of every cached object; what changes is
 * already delivered by the watch (and a relist after a 410), and what is periodic (an ExternalSecret's
 * refreshInterval, a store's recheck, a VaultPolicy's drift check) is the reconciler's own requeue-after.
 * The former 10 minutes woke an idle controller to reconcile everything (issue #24.5).
 */
export const DEFAULT_RESYNC_MS = 10 * 3_600_000;

/** One list/watch of the informer: a namespace, a name, or everything the options select. */
interface Scope {
  namespace?: string;
  fieldSelector?: string;
  /** Whether a cached object belongs to this scope (a relist replaces only those). */
  owns?: (obj: KubeObject) => boolean;
  state: InformerState;
  synced: boolean;
  /** An optional resource answered 404 at the last LIST (reported once until it is served). */
  notServed?: boolean;
  backoff: Backoff;
}

class WatchEnd extends Error {
  constructor(readonly kind: 'watchdog' | 'stop') {
    super(kind);
  }
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly cache = new Cache<T>();
  private readonly scopes: Scope[];
  private readonly handlers: ((ev: ObjectEvent<T>) => void)[] = [];
  private readonly listeners: ((ev: InformerLifecycleEvent) => void)[] = [];
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly stopController = new AbortController();
  private running?: Promise<void>;
  private resyncTimer?: TimerHandle;
  private resyncEveryMs?: number;
  private syncedFlag = false;
  private readonly syncWaiters: (() => void)[] = [];
  private readonly transform: CacheTransform<T>;

  constructor(
    private readonly client: Client,
    readonly opts: InformerOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.transform = (opts.transform ?? stripBookkeeping) as unknown as CacheTransform<T>;
    const scope = (s: Omit<Scope, 'state' | 'synced' | 'backoff'>): Scope => ({
      ...s,
      state: { phase: 'Empty' },
      synced: false,
      backoff: new Backoff({ random: this.random, ...opts.backoff }),
    });
    const byName = (name: string): string => [opts.fieldSelector, `metadata.name=${name}`].filter(Boolean).join(',');
    this.scopes = opts.namespaces?.length
      ? opts.namespaces.map((ns) =>
          scope({ namespace: ns, fieldSelector: opts.fieldSelector, owns: (o) => o.metadata.namespace === ns }),
        )
      : opts.names?.length
        ? opts.names.map((name) => scope({ fieldSelector: byName(name), owns: (o) => o.metadata.name === name }))
        : [scope({ namespace: opts.namespace, fieldSelector: opts.fieldSelector })];
  }

  get resource(): ResourceRef {
    return this.opts.resource;
  }

  /** True once the first LIST is in the cache (stays true across relists). */
  get synced(): boolean {
    return this.syncedFlag;
  }

  /** The phase of the least settled scope (Empty, then Backoff, then Watching; Stopped when all are). */
  get phase(): InformerState['phase'] {
    const phases = this.scopes.map((s) => s.state.phase);
    return (['Empty', 'Backoff', 'Watching'] as const).find((p) => phases.includes(p)) ?? 'Stopped';
  }

  /** Handlers run synchronously per event and should only enqueue; a throw is caught and reported. */
  addHandler(fn: (ev: ObjectEvent<T>) => void): void {
    this.handlers.push(fn);
    // A late handler still hears about what is already cached (client-go's AddEventHandler does the same).
    if (this.syncedFlag) for (const obj of this.cache.list()) this.safeCall(fn, { type: 'add', obj, initial: true });
  }

  onLifecycle(fn: (ev: InformerLifecycleEvent) => void): void {
    this.listeners.push(fn);
  }

  /** Start the loop (idempotent). It runs until stop(); it never gives up on errors. */
  start(): void {
    if (this.running) return;
    this.running = Promise.all(this.scopes.map((s) => this.loop(s))).then(() => this.emit({ type: 'STOPPED' }));
    this.scheduleResync();
  }

  /** Resolves once synced, or when `signal` aborts / the informer stops (check `synced`). */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.syncedFlag) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (): void => resolve(this.syncedFlag);
      this.syncWaiters.push(done);
      signal?.addEventListener('abort', done, { once: true });
      this.stopController.signal.addEventListener('abort', done, { once: true });
    });
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    this.resyncTimer?.cancel();
    await this.running;
  }

  private async loop(scope: Scope): Promise<void> {
    while (scope.state.phase !== 'Stopped') {
      scope.state = await this.step(scope, scope.state);
      if (this.stopController.signal.aborted) scope.state = { phase: 'Stopped' };
    }
  }

  /** One transition. Every error becomes a state: nothing escapes, so the informer never dies silently. */
  private async step(scope: Scope, state: InformerState): Promise<InformerState> {
    switch (state.phase) {
      case 'Empty':
        try {
          return { phase: 'Watching', rv: await this.relist(scope) };
        } catch (err) {
          const error = toKubeError(err);
          if (isGone(error)) return { phase: 'Empty' }; // `continue` token expired mid-pages: start over
          if (this.opts.optional && isNotFound(error)) return this.notServed(scope);
          this.emit({ type: 'LIST_ERROR', error });
          return this.backoffThen(scope, { phase: 'Empty' });
        }
      case 'Watching':
        return this.watchOnce(scope, state.rv);
      case 'Backoff':
        this.emit({ type: 'BACKOFF', delayMs: state.delayMs, attempt: scope.backoff.attempts });
        await this.clock.sleep(state.delayMs, this.stopController.signal);
        return state.then;
      case 'Stopped':
        return state;
    }
  }

  private backoffThen(scope: Scope, then: InformerState): InformerState {
    return { phase: 'Backoff', delayMs: scope.backoff.next(), then };
  }

  /** LIST every page, then swap the cache in one step and emit the differences. Returns the list RV. */
  private async relist(scope: Scope): Promise<string> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    let pages = 0;
    do {
      const page = await this.client.list<T>(this.opts.resource, {
        namespace: scope.namespace,
        labelSelector: this.opts.labelSelector,
        fieldSelector: scope.fieldSelector,
        limit: this.opts.pageSize ?? 500,
        continue: cont,
      });
      pages++;
      for (const obj of page.items) items.push(this.transform(obj));
      rv = page.resourceVersion;
      cont = page.continue || undefined;
    } while (cont && !this.stopController.signal.aborted);
    const delta = this.cache.replaceAll(items, scope.owns);
    // After a relist (410), an object not cached before is one created meanwhile: new, not initial.
    const initial = !scope.synced;
    for (const obj of delta.added) this.dispatch(initial ? { type: 'add', obj, initial } : { type: 'add', obj });
    for (const { old, obj } of delta.updated) this.dispatch({ type: 'update', old, obj });
    for (const obj of delta.deleted) this.dispatch({ type: 'delete', obj });
    this.emit({
      type: 'LIST',
      items: items.length,
      pages,
      added: delta.added.length,
      updated: delta.updated.length,
      deleted: delta.deleted.length,
    });
    scope.notServed = false;
    this.markSynced(scope);
    return rv;
  }

  private markSynced(scope: Scope): void {
    scope.synced = true;
    if (!this.syncedFlag && this.scopes.every((s) => s.synced)) {
      this.syncedFlag = true;
      this.emit({ type: 'SYNCED' });
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  /** An optional resource is not served: nothing of it exists (a deleted CRD took its objects), so the
   *  scope is synced and empty; LIST again later. */
  private notServed(scope: Scope): InformerState {
    const retryMs = this.opts.notServedRetryMs ?? 30_000;
    for (const obj of this.cache.replaceAll([], scope.owns).deleted) this.dispatch({ type: 'delete', obj });
    if (!scope.notServed) this.emit({ type: 'NOT_SERVED', retryMs });
    scope.notServed = true;
    this.markSynced(scope);
    return { phase: 'Backoff', delayMs: retryMs, then: { phase: 'Empty' } };
  }

  /** One WATCH from `rv` until it ends; returns the next state. */
  private async watchOnce(scope: Scope, rv: string): Promise<InformerState> {
    const timeoutSeconds = this.opts.watchTimeoutSeconds ?? Math.floor(300 * (1 + this.random()));
    const watchdogMs = this.opts.watchdogMs ?? timeoutSeconds * 1000 + 30_000;
    const abort = new AbortController();
    const onStop = (): void => abort.abort(new WatchEnd('stop'));
    this.stopController.signal.addEventListener('abort', onStop, { once: true });
    let watchdog: TimerHandle | undefined;
    const armWatchdog = (): void => {
      watchdog?.cancel();
      watchdog = this.clock.setTimer(() => abort.abort(new WatchEnd('watchdog')), watchdogMs);
    };
    const startedAt = this.clock.now();
    let lastRv = rv;
    let events = 0;
    try {
      this.emit({ type: 'CONNECT', resourceVersion: rv });
      armWatchdog();
      const stream = this.client.watch<T>(this.opts.resource, {
        namespace: scope.namespace,
        labelSelector: this.opts.labelSelector,
        fieldSelector: scope.fieldSelector,
        resourceVersion: rv,
        allowWatchBookmarks: true,
        timeoutSeconds,
        signal: abort.signal,
      });
      for await (const ev of stream) {
        armWatchdog();
        if (ev.type === 'ERROR') throw errorFromResponse((ev.object as unknown as Status).code ?? 500, ev.object);
        events++;
        scope.backoff.reset();
        lastRv = ev.object.metadata?.resourceVersion || lastRv;
        this.apply(ev.type, ev.type === 'BOOKMARK' ? ev.object : this.transform(ev.object));
      }
      if (abort.signal.aborted) throw abort.signal.reason;
      this.emit({ type: 'WATCH_CLOSED', events });
      // A server that closes every watch at once would otherwise make this a hot loop.
      if (events === 0 && this.clock.now() - startedAt < (this.opts.minWatchMs ?? 1000)) {
        return this.backoffThen(scope, { phase: 'Watching', rv: lastRv });
      }
      return { phase: 'Watching', rv: lastRv };
    } catch (err) {
      const reason: unknown = abort.signal.aborted ? abort.signal.reason : undefined;
      if (reason instanceof WatchEnd && reason.kind === 'stop') return { phase: 'Stopped' };
      if (reason instanceof WatchEnd && reason.kind === 'watchdog') {
        this.emit({ type: 'WATCHDOG_RESTART', quietMs: watchdogMs });
        return { phase: 'Watching', rv: lastRv };
      }
      const error = toKubeError(err);
      if (isGone(error)) {
        this.emit({ type: 'RELIST_410', resourceVersion: lastRv });
        return { phase: 'Empty' };
      }
      if (this.opts.optional && isNotFound(error)) return { phase: 'Empty' }; // its CRD was deleted: the LIST says so
      this.emit({ type: 'WATCH_ERROR', error });
      return this.backoffThen(scope, { phase: 'Watching', rv: lastRv });
    } finally {
      watchdog?.cancel();
      this.stopController.signal.removeEventListener('abort', onStop);
      abort.abort(new WatchEnd('stop')); // release the connection whatever happened
    }
  }

  private apply(type: string, obj: T): void {
    switch (type) {
      case 'ADDED':
      case 'MODIFIED': {
        const old = this.cache.upsert(obj);
        if (!old) this.dispatch({ type: 'add', obj });
        else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
          this.dispatch({ type: 'update', old, obj });
        return;
      }
      case 'DELETED': {
        this.cache.remove(objectKey(obj));
        this.dispatch({ type: 'delete', obj });
        return;
      }
      case 'BOOKMARK':
        this.emit({ type: 'BOOKMARK', resourceVersion: obj.metadata?.resourceVersion ?? '' });
        return;
    }
  }

  private scheduleResync(): void {
    this.resyncEveryMs ??= this.opts.resyncMs ?? DEFAULT_RESYNC_MS * (1 + this.random() / 10);
    const every = this.resyncEveryMs;
    if (every <= 0 || this.stopController.signal.aborted) return;
    this.resyncTimer = this.clock.setTimer(() => {
      if (this.syncedFlag) {
        const objs = this.cache.list();
        for (const obj of objs) this.dispatch({ type: 'resync', obj });
        this.emit({ type: 'RESYNC', objects: objs.length });
      }
      this.scheduleResync();
    }, every);
  }

  private dispatch(ev: ObjectEvent<T>): void {
    for (const h of this.handlers) this.safeCall(h, ev);
  }

  private safeCall(h: (ev: ObjectEvent<T>) => void, ev: ObjectEvent<T>): void {
    try {
      h(ev);
    } catch (err) {
      this.emit({ type: 'HANDLER_ERROR', error: err instanceof Error ? err.message : String(err) });
    }
  }

  private emit(ev: InformerLifecycleEvent): void {
    for (const l of this.listeners) {
      try {
        l(ev);
      } catch {
        // a broken listener must not stop the informer
      }
    }
  }
}
