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
}

/** One FIFO per priority; an entry is live while `queued` maps its key to the entry's sequence number. */
interface Level {
  entries: { key: string; seq: number }[];
  head: number;
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

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.limiter = opts.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.metrics = opts.metrics;
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
    const entry = { at, priority: Math.max(priority, existing?.priority ?? priority), timer: undefined as unknown as TimerHandle };
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
    this.processing.delete(key);
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
      this.levels.set(priority, (level = { entries: [], head: 0 }));
      this.order = [...this.order, priority].sort((a, b) => b - a);
    }
    const seq = ++this.seq;
    level.entries.push({ key, seq });
    this.queued.set(key, seq);
    this.metrics?.depth(this.queued.size);
  }

  /** The first live entry of the highest level; emptied levels are dropped, dead entries skipped. */
  private dequeue(): string | undefined {
    while (this.order.length > 0) {
      const priority = this.order[0]!;
      const level = this.levels.get(priority)!;
      while (level.head < level.entries.length) {
        const { key, seq } = level.entries[level.head++]!;
        if (this.queued.get(key) !== seq) continue; // raised to another level since
        this.queued.delete(key);
        if (level.head >= 1024 && level.head * 2 >= level.entries.length) {
          level.entries.splice(0, level.head);
          level.head = 0;
        }
        return key;
      }
      this.levels.delete(priority);
      this.order = this.order.slice(1);
    }
    return undefined;
  }

  private handOut(key: string, to: (key: string) => void): void {
    const priority = this.dirty.get(key) ?? Priority.High;
    this.dirty.delete(key);
    this.processing.set(key, priority);
    const now = this.clock.now();
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.metrics?.queueLatency((now - added) / 1000);
    this.startedAt.set(key, now);
    to(key);
  }
}
