// How hard vaultgate may press on each Vault server: one RequestLimiter per server address, shared by
// every client that talks to it (the controller's own session and every SecretStore pointing there), with
// limits set per server (`--vault-rate-limit`, `--vault-server-rate-limit`; the chart's vault.rateLimit).
// The defaults (limiter.ts DEFAULT_VAULT_RATE_LIMIT) protect a server from a refresh storm (ESO #4231)
// rather than pace an ordinary sync.
import { DEFAULT_VAULT_RATE_LIMIT, RequestLimiter } from './limiter.ts';

export interface VaultRateLimit {
  /** Sustained requests per second; 0 = no rate limit. */
  requestsPerSecond: number;
  /** Requests that may go at once after a quiet period (token bucket size). Default: requestsPerSecond. */
  burst?: number;
  /** Requests in flight at once. */
  maxInFlight?: number;
}

/** The server part of an address as the limits are keyed: lower-case scheme and host, no trailing slash or path. */
export function serverKey(address: string): string {
  try {
    const u = new URL(address);
    return `${u.protocol}//${u.host}`.toLowerCase();
  } catch {
    return address.replace(/\/+$/, '').toLowerCase();
  }
}

export class VaultRateLimits {
  private readonly limiters = new Map<string, RequestLimiter>();
  private readonly perServer = new Map<string, VaultRateLimit>();

  constructor(
    private readonly defaults: VaultRateLimit = DEFAULT_VAULT_RATE_LIMIT,
    perServer: Record<string, VaultRateLimit> = {},
  ) {
    for (const [address, limit] of Object.entries(perServer)) this.perServer.set(serverKey(address), limit);
  }

  /** The limits that apply to `address`: its own, else the defaults. */
  limitFor(address: string): Required<VaultRateLimit> {
    const own = this.perServer.get(serverKey(address)) ?? this.defaults;
    return {
      requestsPerSecond: own.requestsPerSecond,
      burst: own.burst ?? (own.requestsPerSecond > 0 ? own.requestsPerSecond : 1),
      maxInFlight: own.maxInFlight ?? this.defaults.maxInFlight ?? DEFAULT_VAULT_RATE_LIMIT.maxInFlight,
    };
  }

  /** The one limiter for `address`, created on first use. */
  limiterFor(address: string): RequestLimiter {
    const key = serverKey(address);
    let limiter = this.limiters.get(key);
    if (!limiter) {
      const l = this.limitFor(address);
      limiter = new RequestLimiter({
        ratePerSecond: l.requestsPerSecond,
        burst: l.burst,
        maxConcurrent: l.maxInFlight,
      });
      this.limiters.set(key, limiter);
    }
    return limiter;
  }
}

/**
 * `<rps>[/<burst>[/<in-flight>]]`, e.g. `200`, `200/400`, `200/400/16`; `0` = no rate limit. Throws a
 * message naming `flag` and the rule.
 */
export function parseRateLimit(text: string, flag: string): VaultRateLimit {
  const parts = text.split('/');
  const nums = parts.map((p) => (/^\d+$/.test(p.trim()) ? Number(p.trim()) : NaN));
  if (parts.length > 3 || nums.some((n) => Number.isNaN(n))) {
    throw new Error(
      `${flag}: "${text}" is not <requests per second>[/<burst>[/<in flight>]] with whole numbers, e.g. 500 or 500/1000/32`,
    );
  }
  const [rps = 0, burst, inFlight] = nums;
  if (burst !== undefined && rps > 0 && burst < 1)
    throw new Error(`${flag}: the burst in "${text}" must be at least 1`);
  if (inFlight !== undefined && inFlight < 1)
    throw new Error(`${flag}: the in-flight limit in "${text}" must be at least 1`);
  return {
    requestsPerSecond: rps,
    ...(burst !== undefined ? { burst } : {}),
    ...(inFlight !== undefined ? { maxInFlight: inFlight } : {}),
  };
}

/** `<address>=<limit>` (the per-server flag); the address must be an http(s) URL. */
export function parseServerRateLimit(text: string, flag: string): [string, VaultRateLimit] {
  const eq = text.lastIndexOf('=');
  const address = eq > 0 ? text.slice(0, eq) : '';
  let url: URL | undefined;
  try {
    url = new URL(address);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol))
    throw new Error(`${flag}: "${text}" is not <Vault address>=<limit>, e.g. https://vault.example:8200=200/400`);
  return [address, parseRateLimit(text.slice(eq + 1), flag)];
}
