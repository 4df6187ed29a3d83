// A key work queue with client-go's guarantees (util/workqueue):
// - a key is queued once however many times it is added while waiting (dirty set);
// - a key being processed is never handed to a second worker; if it is added meanwhile it runs again
//   after done() (processing set);
// - addRateLimited() retries with the rate limiter's delay, forget() clears the failure history;
// - addAfter() delays an add; shutDown() stops handing out work and resolves when in-flight items are done.
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.ts';

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

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: TimerHandle }>();
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
    return this.queue.length;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.metrics?.added();
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return; // re-run after done(), never concurrently
    const waiter = this.waiters.shift();
    if (waiter) this.handOut(key, waiter);
    else {
      this.queue.push(key);
      this.metrics?.depth(this.queue.length);
    }
  }

  /** Add after `ms`. An earlier pending addAfter for the same key wins (as client-go's delaying queue). */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = this.clock.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    existing?.timer.cancel();
    const timer = this.clock.setTimer(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { at, timer });
  }

  /** Retry after the rate limiter's delay (per-key exponential, overall token bucket). */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.metrics?.retried();
    this.addAfter(key, this.limiter.when(key));
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
    const key = this.queue.shift();
    return new Promise((resolve) => {
      if (key !== undefined) {
        this.metrics?.depth(this.queue.length);
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
    if (this.dirty.has(key) && !this.shuttingDown) {
      const waiter = this.waiters.shift();
      if (waiter) this.handOut(key, waiter);
      else {
        this.queue.push(key);
        this.metrics?.depth(this.queue.length);
      }
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

  private handOut(key: string, to: (key: string) => void): void {
    this.dirty.delete(key);
    this.processing.add(key);
    const now = this.clock.now();
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.metrics?.queueLatency((now - added) / 1000);
    this.startedAt.set(key, now);
    to(key);
  }
}
