// The simulator's token store: service tokens with TTL, max TTL and renewability, as Vault's token
// store answers them (auth block on login/renew, lookup-self data). Tokens keep policy *names*: a
// changed policy applies at once, a changed role's policy list only to new logins (hence re-login on 403).
import { randomBytes } from 'node:crypto';

export interface SimToken {
  id: string;
  accessor: string;
  policies: string[];
  /** ms since epoch. */
  issuedAt: number;
  /** The TTL granted at creation, seconds (0 = never expires). */
  creationTtl: number;
  expiresAt: number;
  maxExpiresAt: number;
  renewable: boolean;
  root: boolean;
  meta: Record<string, string>;
  path: string;
  displayName: string;
}

/** Vault's system default and max lease TTL (768h). */
export const SYSTEM_MAX_TTL = 768 * 3600;

export class TokenStore {
  private readonly tokens = new Map<string, SimToken>();
  constructor(private readonly now: () => number) {}

  createRoot(id: string): SimToken {
    const t: SimToken = {
      id,
      accessor: rand(12),
      policies: ['root'],
      issuedAt: this.now(),
      creationTtl: 0,
      expiresAt: Infinity,
      maxExpiresAt: Infinity,
      renewable: false,
      root: true,
      meta: {},
      path: 'auth/token/root',
      displayName: 'root',
    };
    this.tokens.set(id, t);
    return t;
  }

  /** Issue a service token. `policies` are sanitised as Vault does: lowercased, `default` added, sorted, unique. */
  issue(opts: {
    policies: string[];
    ttl?: number;
    maxTtl?: number;
    noDefaultPolicy?: boolean;
    renewable?: boolean;
    meta?: Record<string, string>;
    path: string;
    displayName: string;
  }): SimToken {
    const policies = [
      ...new Set([
        ...(opts.noDefaultPolicy ? [] : ['default']),
        ...opts.policies.map((p) => p.trim().toLowerCase()).filter(Boolean),
      ]),
    ].sort();
    const maxTtl = opts.maxTtl && opts.maxTtl > 0 ? Math.min(opts.maxTtl, SYSTEM_MAX_TTL) : SYSTEM_MAX_TTL;
    const ttl = Math.min(opts.ttl && opts.ttl > 0 ? opts.ttl : SYSTEM_MAX_TTL, maxTtl);
    const now = this.now();
    const t: SimToken = {
      id: `hvs.${rand(24)}`,
      accessor: rand(24),
      policies,
      issuedAt: now,
      creationTtl: ttl,
      expiresAt: now + ttl * 1000,
      maxExpiresAt: now + maxTtl * 1000,
      renewable: opts.renewable ?? true,
      root: false,
      meta: opts.meta ?? {},
      path: opts.path,
      displayName: opts.displayName,
    };
    this.tokens.set(t.id, t);
    return t;
  }

  /** A live token, or undefined (unknown, revoked or expired). */
  lookup(id: string | undefined): SimToken | undefined {
    if (!id) return undefined;
    const t = this.tokens.get(id);
    if (!t) return undefined;
    if (t.expiresAt <= this.now()) {
      this.tokens.delete(id);
      return undefined;
    }
    return t;
  }

  revoke(id: string): void {
    this.tokens.delete(id);
  }

  /** renew-self: extend to min(now + increment, max TTL). Returns the new TTL and Vault's cap warning. */
  renew(t: SimToken, incrementSeconds: number | undefined): { ttl: number; warnings: string[] | null } {
    const now = this.now();
    const wanted = incrementSeconds && incrementSeconds > 0 ? incrementSeconds : t.creationTtl;
    const capped = Math.min(now + wanted * 1000, t.maxExpiresAt);
    t.expiresAt = capped;
    const ttl = Math.max(0, Math.floor((capped - now) / 1000));
    return {
      ttl,
      warnings:
        capped < now + wanted * 1000
          ? [`TTL of "${wanted}s" exceeded the effective max_ttl of "${ttl}s"; TTL value is capped accordingly`]
          : null,
    };
  }

  ttlOf(t: SimToken): number {
    return t.expiresAt === Infinity ? 0 : Math.max(0, Math.floor((t.expiresAt - this.now()) / 1000));
  }

  /** Live (unexpired) tokens, excluding root: the simulator's "lease count". */
  get liveCount(): number {
    const now = this.now();
    let n = 0;
    for (const t of this.tokens.values()) if (!t.root && t.expiresAt > now) n++;
    return n;
  }

  /** The `auth` block of a login or renew answer. */
  authBlock(t: SimToken, ttl = this.ttlOf(t)): Record<string, unknown> {
    return {
      client_token: t.id,
      accessor: t.accessor,
      policies: t.policies,
      token_policies: t.policies,
      identity_policies: null,
      metadata: t.meta,
      lease_duration: ttl,
      renewable: t.renewable,
      entity_id: '',
      token_type: 'service',
      orphan: true,
      mfa_requirement: null,
      num_uses: 0,
    };
  }

  /** `data` of lookup-self. */
  lookupData(t: SimToken): Record<string, unknown> {
    return {
      accessor: t.accessor,
      creation_time: Math.floor(t.issuedAt / 1000),
      creation_ttl: t.creationTtl,
      display_name: t.displayName,
      entity_id: '',
      expire_time: t.expiresAt === Infinity ? null : new Date(t.expiresAt).toISOString(),
      explicit_max_ttl: 0,
      id: t.id,
      issue_time: new Date(t.issuedAt).toISOString(),
      meta: Object.keys(t.meta).length ? t.meta : null,
      num_uses: 0,
      orphan: true,
      path: t.path,
      policies: t.policies,
      renewable: t.renewable,
      ttl: this.ttlOf(t),
      type: 'service',
    };
  }
}

function rand(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}
