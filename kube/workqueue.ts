// A key work queue with client-go's guarantees (util/workqueue):
// - a key is queued once however many times it is added while waiting (dirty set);
// - a key being processed is never handed to a second worker; if it is added meanwhile it runs again
//   after done() (processing set);
// - addRateLimited() retries with the rate limiter's delay, forget() clears the failure history;
// - addAfter() delays an add; shutDown() stops handing out work and resolves when in-flight items are done.
// And controller-runtime's priority queue (pkg/controller/priorityqueue, on by default since v0.22): every
// add has a priority, higher first, first in first out within one. A waiting key added again with a higher
// priority moves up; one added while in flight runs again with the highest priority it was added with.
// So an ExternalSecret created during a refresh of 10,000 waits for one free worker, not for the 10,000.
// And a fair share between partitions (namespaces), work-conserving: with `fairness`, a partition holds at
// most `maxInFlight` workers while another partition's key waits; a key of a partition at its share is set
// aside (keeping its priority and order) and handed out when its partition frees a worker, or when nothing
// else waits. So one namespace's slow reconciles (hostile templates at their deadline, a slow Vault) cannot
// hold every worker while other namespaces wait.
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.ts';

/**
 * The priorities the runtime uses (any integer works; higher first). High: a new object, a spec change, a
 * deletion, a change of something it depends on. Refresh: a change of a primary's metadata only (labels,
 * annotations: ESO's force-sync annotation). Low: the initial list, a resync, a requeue-after (the periodic
 * refresh), as controller-runtime's LowPriority.
 */
export const Priority = Object.freeze({ High: 0, Refresh: -50, Low: -100 });

/** Hooks for workqueue_* metrics (metrics.ts implements them with prom-client). */
export interface QueueMetrics {
  depth(n: number): void;
  added(): void;
  /** Seconds between add and get. */
  queueLatency(seconds: number): void;
  /** Seconds between get and done. */
  workDuration(seconds: number): void;
  retried(): void;
}

export interface WorkQueueOptions {
  clock?: Clock;
  rateLimiter?: RateLimiter;
  metrics?: QueueMetrics;
  fairness?: Fairness;
}

/** A fair share of the workers per partition (the namespace of a key), while other partitions wait. */
export interface Fairness {
  /** The key's partition; undefined: not limited (cluster-scoped keys). */
  partition(key: string): string | undefined;
  /** Workers one partition may hold while a key of another partition waits. */
  maxInFlight: number;
}

/** The namespace of a `namespace/name` key; undefined for a cluster-scoped `name`. */
export function namespaceOfKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  return slash < 0 ? undefined : key.slice(0, slash);
}

interface Fifo {
  entries: { key: string; seq: number }[];
  head: number;
}

/**
 * One FIFO per priority, plus the entries set aside because their partition was at its share (per
 * partition, in order). An entry is live while `queued` maps its key to the entry's sequence number.
 */
interface Level extends Fifo {
  deferred: Map<string, Fifo>;
}

export class WorkQueue {
  /** Waiting keys (in a level, not in flight) → the sequence number of their live entry. */
  private readonly queued = new Map<string, number>();
  private readonly levels = new Map<number, Level>();
  /** Priorities that have a level, highest first. */
  private order: number[] = [];
  private seq = 0;
  /** Keys added and not yet handed out (waiting, or in flight and to run again) → their priority. */
  private readonly dirty = new Map<string, number>();
  /** Keys in flight → the priority they were handed out with. */
  private readonly processing = new Map<string, number>();
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; priority: number; timer: TimerHandle }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;
  private readonly metrics?: QueueMetrics;
  private readonly fairness?: Fairness;
  /** Keys in flight per partition (with fairness). */
  private readonly inFlightBy = new Map<string, number>();

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.limiter = opts.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.metrics = opts.metrics;
    this.fairness = opts.fairness;
  }

  /** Keys waiting (not counting delayed or in-flight ones). */
  get length(): number {
    return this.queued.size;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Queue `key` at `priority` (default High); a key already waiting is raised to it, never lowered. */
  add(key: string, priority: number = Priority.High): void {
    if (this.shuttingDown) return;
    const was = this.dirty.get(key);
    if (was !== undefined) {
      if (priority <= was) return;
      this.dirty.set(key, priority);
      if (this.queued.has(key)) this.enqueue(key, priority); // the old entry is dead from now on
      return;
    }
    this.metrics?.added();
    this.dirty.set(key, priority);
    this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return; // re-run after done(), never concurrently
    const waiter = this.waiters.shift();
    if (waiter) this.handOut(key, waiter);
    else this.enqueue(key, priority);
  }

  /**
   * Add after `ms`. An earlier pending addAfter for the same key wins (as client-go's delaying queue), and
   * takes the higher of the two priorities (as controller-runtime's priority queue).
   */
  addAfter(key: string, ms: number, priority: number = Priority.High): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key, priority);
    const at = this.clock.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) {
      existing.priority = Math.max(existing.priority, priority);
      return;
    }
    existing?.timer.cancel();
    const entry = {
      at,
      priority: Math.max(priority, existing?.priority ?? priority),
      timer: undefined as unknown as TimerHandle,
    };
    entry.timer = this.clock.setTimer(() => {
      this.delayed.delete(key);
      this.add(key, entry.priority);
    }, ms);
    this.delayed.set(key, entry);
  }

  /**
   * Retry after the rate limiter's delay (per-key exponential, a token bucket per priority), at `priority`:
   * by default the priority the key was handed out with (a failed refresh stays a refresh).
   */
  addRateLimited(key: string, priority: number = this.processing.get(key) ?? Priority.High): void {
    if (this.shuttingDown) return;
    this.metrics?.retried();
    this.addAfter(key, this.limiter.when(key, priority), priority);
  }

  /** The priority an in-flight key was handed out with. */
  inFlightPriority(key: string): number | undefined {
    return this.processing.get(key);
  }

  /** The key succeeded: reset its backoff. */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  retries(key: string): number {
    return this.limiter.retries(key);
  }

  /**
   * Next key to process; `undefined` once the queue is shutting down or `signal` aborts.
   * Call done(key) afterwards.
   */
  get(signal?: AbortSignal): Promise<string | undefined> {
    if (this.shuttingDown || signal?.aborted) return Promise.resolve(undefined);
    const key = this.dequeue();
    return new Promise((resolve) => {
      if (key !== undefined) {
        this.metrics?.depth(this.queued.size);
        this.handOut(key, resolve);
        return;
      }
      const waiter = (k: string | undefined): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(k);
      };
      // a worker told to stop (lost leadership) leaves without taking a key
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  done(key: string): void {
    if (!this.processing.delete(key)) return;
    const partition = this.fairness?.partition(key);
    if (partition !== undefined) {
      const n = (this.inFlightBy.get(partition) ?? 1) - 1;
      if (n <= 0) this.inFlightBy.delete(partition);
      else this.inFlightBy.set(partition, n);
    }
    const started = this.startedAt.get(key);
    this.startedAt.delete(key);
    if (started !== undefined) this.metrics?.workDuration((this.clock.now() - started) / 1000);
    const again = this.dirty.get(key);
    if (again !== undefined && !this.shuttingDown) {
      const waiter = this.waiters.shift();
      if (waiter) this.handOut(key, waiter);
      else this.enqueue(key, again);
    }
    if (this.processing.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Stop handing out work (waiting get() calls resolve `undefined`); resolves when in-flight keys are done. */
  shutDown(): Promise<void> {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) timer.cancel();
    this.delayed.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Append `key` to its priority's FIFO (a new level is slotted into `order`). */
  private enqueue(key: string, priority: number): void {
    let level = this.levels.get(priority);
    if (!level) {
      this.levels.set(priority, (level = { entries: [], head: 0, deferred: new Map() }));
      this.order = [...this.order, priority].sort((a, b) => b - a);
    }
    const seq = ++this.seq;
    level.entries.push({ key, seq });
    this.queued.set(key, seq);
    this.metrics?.depth(this.queued.size);
  }

  /**
   * The next key: the highest level's first live entry whose partition is under its share (entries set
   * aside earlier come first: they were ahead); an entry whose partition is at its share is set aside. With
   * nothing else waiting, the highest set-aside entry goes (work-conserving). Emptied levels are dropped.
   */
  private dequeue(): string | undefined {
    const key = this.pick();
    this.dropEmptyLevels();
    return key;
  }

  private pick(): string | undefined {
    for (const priority of this.order) {
      const level = this.levels.get(priority)!;
      for (const [partition, fifo] of level.deferred) {
        if (this.atShare(partition)) continue;
        const key = this.takeLive(fifo);
        if (fifo.head >= fifo.entries.length) level.deferred.delete(partition);
        if (key !== undefined) return this.taken(key);
      }
      while (level.head < level.entries.length) {
        const entry = level.entries[level.head++]!;
        if (this.queued.get(entry.key) !== entry.seq) continue; // raised to another level since
        const partition = this.fairness?.partition(entry.key);
        if (partition !== undefined && this.atShare(partition)) {
          let fifo = level.deferred.get(partition);
          if (!fifo) level.deferred.set(partition, (fifo = { entries: [], head: 0 }));
          fifo.entries.push(entry);
          continue;
        }
        this.compact(level);
        return this.taken(entry.key);
      }
      this.compact(level);
    }
    // Nothing under its share waits: the highest set-aside entry goes anyway.
    for (const priority of this.order) {
      const level = this.levels.get(priority)!;
      for (const [partition, fifo] of level.deferred) {
        const key = this.takeLive(fifo);
        if (fifo.head >= fifo.entries.length) level.deferred.delete(partition);
        if (key !== undefined) return this.taken(key);
      }
    }
    return undefined;
  }

  private atShare(partition: string): boolean {
    return (this.inFlightBy.get(partition) ?? 0) >= this.fairness!.maxInFlight;
  }

  /** The first live entry of `fifo`, consumed; undefined when it holds none. */
  private takeLive(fifo: Fifo): string | undefined {
    while (fifo.head < fifo.entries.length) {
      const { key, seq } = fifo.entries[fifo.head++]!;
      if (this.queued.get(key) === seq) return key;
    }
    return undefined;
  }

  private taken(key: string): string {
    this.queued.delete(key);
    return key;
  }

  /** Drop a FIFO's consumed head once it is most of the array. */
  private compact(fifo: Fifo): void {
    if (fifo.head >= 1024 && fifo.head * 2 >= fifo.entries.length) {
      fifo.entries.splice(0, fifo.head);
      fifo.head = 0;
    }
  }

  private dropEmptyLevels(): void {
    let dropped = false;
    for (const priority of this.order) {
      const level = this.levels.get(priority)!;
      if (level.head >= level.entries.length && level.deferred.size === 0) dropped = this.levels.delete(priority);
    }
    if (dropped) this.order = this.order.filter((p) => this.levels.has(p));
  }

  private handOut(key: string, to: (key: string) => void): void {
    const priority = this.dirty.get(key) ?? Priority.High;
    this.dirty.delete(key);
    this.processing.set(key, priority);
    const partition = this.fairness?.partition(key);
    if (partition !== undefined) this.inFlightBy.set(partition, (this.inFlightBy.get(partition) ?? 0) + 1);
    const now = this.clock.now();
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.metrics?.queueLatency((now - added) / 1000);
    this.startedAt.set(key, now);
    to(key);
  }
}
