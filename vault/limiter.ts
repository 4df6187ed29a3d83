// Per-Vault-server request limiter: at most `maxConcurrent` requests in flight and a token bucket of
// `ratePerSecond` refilled continuously up to `burst`. Protects Vault from refresh storms (ESO #4231,
// kubernetes-external-secrets #468) without dropping work: callers wait in FIFO order. Timers exist
// only while someone waits, so an idle limiter never keeps the process alive.

/**
 * Per Vault server unless configured (`--vault-rate-limit`, the chart's vault.rateLimit): sized to protect
 * a server from a refresh storm, not to pace an ordinary sync (1,000 ExternalSecrets fit in one burst).
 */
export const DEFAULT_VAULT_RATE_LIMIT = { requestsPerSecond: 1000, burst: 1000, maxInFlight: 32 } as const;

export interface LimiterOptions {
  /** Requests in flight at once. Default DEFAULT_VAULT_RATE_LIMIT.maxInFlight. */
  maxConcurrent?: number;
  /** Sustained requests per second; 0 or Infinity = no rate limit. Default DEFAULT_VAULT_RATE_LIMIT.requestsPerSecond. */
  ratePerSecond?: number;
  /** Bucket size (requests that may go at once after an idle period). Default = max(1, ratePerSecond). */
  burst?: number;
  /** Clock in ms, injectable for tests. */
  now?: () => number;
}

export class RequestLimiter {
  private readonly maxConcurrent: number;
  private readonly rate: number;
  private readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private lastRefill: number;
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: LimiterOptions = {}) {
    this.maxConcurrent = Math.max(1, opts.maxConcurrent ?? DEFAULT_VAULT_RATE_LIMIT.maxInFlight);
    const rate = opts.ratePerSecond ?? DEFAULT_VAULT_RATE_LIMIT.requestsPerSecond;
    this.rate = rate > 0 && Number.isFinite(rate) ? rate : Infinity;
    this.burst = Math.max(1, opts.burst ?? (Number.isFinite(this.rate) ? this.rate : 1));
    this.now = opts.now ?? Date.now;
    this.tokens = this.burst;
    this.lastRefill = this.now();
  }

  /** Requests currently waiting for a slot (exported as a gauge by metrics.ts). */
  get queued(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.inFlight;
  }

  /** Run `fn` when a concurrency slot and a rate token are available. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.inFlight--;
      this.pump();
    }
  }

  private acquire(): Promise<void> {
    if (this.waiting.length === 0 && this.tryTake()) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.pump();
    });
  }

  private tryTake(): boolean {
    if (this.inFlight >= this.maxConcurrent) return false;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    this.inFlight++;
    return true;
  }

  private refill(): void {
    if (!Number.isFinite(this.rate)) {
      this.tokens = this.burst;
      return;
    }
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.lastRefill) / 1000) * this.rate);
    this.lastRefill = t;
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.tryTake()) this.waiting.shift()?.();
    if (this.waiting.length === 0 || this.timer || this.inFlight >= this.maxConcurrent) return;
    // Out of rate tokens: wake when the next one is due.
    const waitMs = Math.max(1, Math.ceil(((1 - this.tokens) / this.rate) * 1000));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, waitMs);
  }
}
