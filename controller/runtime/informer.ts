// A supervised list-then-watch informer for one resource, written as a small explicit state machine
// (kube-rs's watcher.rs) instead of client-node 1.4's makeInformer, which dies silently on any non-410
// error, never requests bookmarks or pages, and has no client-side watch timeout (ecosystem.md §1.4).
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
import { Backoff, type BackoffOptions } from './backoff.ts';
import { Cache } from './cache.ts';
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { isGone, errorFromResponse, toKubeError, type KubeApiError } from './errors.ts';
import type { KubeClient } from './kube-client.ts';
import { objectKey, type KubeObject, type Status } from './objects.ts';
import type { ResourceRef } from './resources.ts';

/** A change to a cached object, delivered to handlers (which only enqueue keys). */
export type ObjectEvent<T extends KubeObject = KubeObject> =
  | { type: 'add'; obj: T }
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
  /** LIST page size (`limit`). Default 500, as client-go's pager. */
  pageSize?: number;
  /** Re-deliver every key this often; 0 = never. Default 10 min. */
  resyncMs?: number;
  /** Server-side `timeoutSeconds` per watch. Default random in [300, 600) as client-go's reflector. */
  watchTimeoutSeconds?: number;
  /** Restart a watch after this long without any event or bookmark. Default timeoutSeconds + 30 s. */
  watchdogMs?: number;
  /** A clean close sooner than this after connecting, with no events, counts as a failure (backoff). */
  minWatchMs?: number;
  backoff?: BackoffOptions;
  clock?: Clock;
  random?: () => number;
}

type Client = Pick<KubeClient, 'list' | 'watch'>;

class WatchEnd extends Error {
  constructor(readonly kind: 'watchdog' | 'stop') {
    super(kind);
  }
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly cache = new Cache<T>();
  private state: InformerState = { phase: 'Empty' };
  private readonly handlers: ((ev: ObjectEvent<T>) => void)[] = [];
  private readonly listeners: ((ev: InformerLifecycleEvent) => void)[] = [];
  private readonly backoff: Backoff;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly stopController = new AbortController();
  private running?: Promise<void>;
  private resyncTimer?: TimerHandle;
  private syncedFlag = false;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(private readonly client: Client, readonly opts: InformerOptions) {
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.backoff = new Backoff({ random: this.random, ...opts.backoff });
  }

  get resource(): ResourceRef {
    return this.opts.resource;
  }

  /** True once the first LIST is in the cache (stays true across relists). */
  get synced(): boolean {
    return this.syncedFlag;
  }

  get phase(): InformerState['phase'] {
    return this.state.phase;
  }

  /** Handlers run synchronously per event and should only enqueue; a throw is caught and reported. */
  addHandler(fn: (ev: ObjectEvent<T>) => void): void {
    this.handlers.push(fn);
    // A late handler still hears about what is already cached (client-go's AddEventHandler does the same).
    if (this.syncedFlag) for (const obj of this.cache.list()) this.safeCall(fn, { type: 'add', obj });
  }

  onLifecycle(fn: (ev: InformerLifecycleEvent) => void): void {
    this.listeners.push(fn);
  }

  /** Start the loop (idempotent). It runs until stop(); it never gives up on errors. */
  start(): void {
    if (this.running) return;
    this.running = this.loop();
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

  private async loop(): Promise<void> {
    while (this.state.phase !== 'Stopped') {
      this.state = await this.step(this.state);
      if (this.stopController.signal.aborted) this.state = { phase: 'Stopped' };
    }
    this.emit({ type: 'STOPPED' });
  }

  /** One transition. Every error becomes a state: nothing escapes, so the informer never dies silently. */
  private async step(state: InformerState): Promise<InformerState> {
    switch (state.phase) {
      case 'Empty':
        try {
          return { phase: 'Watching', rv: await this.relist() };
        } catch (err) {
          const error = toKubeError(err);
          if (isGone(error)) return { phase: 'Empty' }; // `continue` token expired mid-pages: start over
          this.emit({ type: 'LIST_ERROR', error });
          return this.backoffThen({ phase: 'Empty' });
        }
      case 'Watching':
        return this.watchOnce(state.rv);
      case 'Backoff':
        this.emit({ type: 'BACKOFF', delayMs: state.delayMs, attempt: this.backoff.attempts });
        await this.clock.sleep(state.delayMs, this.stopController.signal);
        return state.then;
      case 'Stopped':
        return state;
    }
  }

  private backoffThen(then: InformerState): InformerState {
    return { phase: 'Backoff', delayMs: this.backoff.next(), then };
  }

  /** LIST every page, then swap the cache in one step and emit the differences. Returns the list RV. */
  private async relist(): Promise<string> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    let pages = 0;
    do {
      const page = await this.client.list<T>(this.opts.resource, {
        namespace: this.opts.namespace, labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector,
        limit: this.opts.pageSize ?? 500, continue: cont,
      });
      pages++;
      items.push(...page.items);
      rv = page.resourceVersion;
      cont = page.continue || undefined;
    } while (cont && !this.stopController.signal.aborted);
    const delta = this.cache.replaceAll(items);
    for (const obj of delta.added) this.dispatch({ type: 'add', obj });
    for (const { old, obj } of delta.updated) this.dispatch({ type: 'update', old, obj });
    for (const obj of delta.deleted) this.dispatch({ type: 'delete', obj });
    this.emit({ type: 'LIST', items: items.length, pages, added: delta.added.length, updated: delta.updated.length, deleted: delta.deleted.length });
    if (!this.syncedFlag) {
      this.syncedFlag = true;
      this.emit({ type: 'SYNCED' });
      for (const w of this.syncWaiters.splice(0)) w();
    }
    return rv;
  }

  /** One WATCH from `rv` until it ends; returns the next state. */
  private async watchOnce(rv: string): Promise<InformerState> {
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
        namespace: this.opts.namespace, labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector,
        resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds, signal: abort.signal,
      });
      for await (const ev of stream) {
        armWatchdog();
        if (ev.type === 'ERROR') throw errorFromResponse((ev.object as unknown as Status).code ?? 500, ev.object);
        events++;
        this.backoff.reset();
        lastRv = ev.object.metadata?.resourceVersion || lastRv;
        this.apply(ev.type, ev.object);
      }
      if (abort.signal.aborted) throw abort.signal.reason;
      this.emit({ type: 'WATCH_CLOSED', events });
      // A server that closes every watch at once would otherwise make this a hot loop.
      if (events === 0 && this.clock.now() - startedAt < (this.opts.minWatchMs ?? 1000)) {
        return this.backoffThen({ phase: 'Watching', rv: lastRv });
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
      this.emit({ type: 'WATCH_ERROR', error });
      return this.backoffThen({ phase: 'Watching', rv: lastRv });
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
        else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.dispatch({ type: 'update', old, obj });
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
    const every = this.opts.resyncMs ?? 10 * 60_000;
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

