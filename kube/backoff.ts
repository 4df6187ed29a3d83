// Jittered exponential backoff for reconnects, as client-go's reflector (800 ms initial, ×2, capped at
// 30 s, jitter 1.0: each delay is d + rand·jitter·d). Kept apart from the informer (kube-rs keeps backoff a
// separate combinator) so the informer's states stay readable and tests can pin randomness.
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** 0 = none; 1 = up to +100 %. */
  jitter?: number;
  random?: () => number;
}

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private attempt = 0;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 800;
    this.maxMs = opts.maxMs ?? 30_000;
    this.factor = opts.factor ?? 2;
    this.jitter = opts.jitter ?? 1;
    this.random = opts.random ?? Math.random;
  }

  /** The next delay; grows with every call until reset(). */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.attempt);
    this.attempt++;
    return Math.min(this.maxMs, Math.round(base + this.random() * this.jitter * base));
  }

  /** Consecutive delays handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}
