// Work-queue rate limiters, as client-go's workqueue.DefaultTypedControllerRateLimiter: the larger of a
// per-key exponential backoff (5 ms × 2^failures, capped at 1000 s) and a token bucket (10 qps, burst 100)
// so a burst of failures can't hammer the apiserver or Vault. One bucket per work-queue priority: 10,000
// failing refreshes (Vault down) would otherwise push a new object's retry 1,000 s back, behind theirs.
import type { Clock } from './clock.ts';

export interface RateLimiter {
  /** Delay before `key` may be retried; counts one more failure for it. `priority`: the work queue's. */
  when(key: string, priority?: number): number;
  /** Success: clear the key's failure history. */
  forget(key: string): void;
  /** Failures counted for `key` since the last forget. */
  retries(key: string): number;
}

export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1000_000,
  ) {}

  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(this.maxMs, this.baseMs * 2 ** n);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/** golang.org/x/time/rate semantics: reserve a token now, wait until it exists. */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;
  constructor(
    private readonly clock: Clock,
    private readonly qps = 10,
    private readonly burst = 100,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(): void {}

  retries(): number {
    return 0;
  }
}

/** A BucketRateLimiter per priority (made on first use): retries of one priority never wait for another's. */
export class PerPriorityBucketRateLimiter implements RateLimiter {
  private readonly buckets = new Map<number, BucketRateLimiter>();
  constructor(
    private readonly clock: Clock,
    private readonly qps = 10,
    private readonly burst = 100,
  ) {}

  when(_key: string, priority = 0): number {
    let bucket = this.buckets.get(priority);
    if (!bucket) this.buckets.set(priority, (bucket = new BucketRateLimiter(this.clock, this.qps, this.burst)));
    return bucket.when();
  }

  forget(): void {}

  retries(): number {
    return 0;
  }
}

export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];
  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string, priority?: number): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(key, priority)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  retries(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.retries(key)));
  }
}

export function defaultControllerRateLimiter(clock: Clock): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialRateLimiter(5, 1000_000),
    new PerPriorityBucketRateLimiter(clock, 10, 100),
  );
}
