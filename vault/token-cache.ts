// One Vault token per identity, shared by every reconcile that uses it. This is the fix for the pain
// most reported against Vault operators (external-secrets/external-secrets#376,
// redhat-cop/vault-config-operator#103: a login per reconcile leaves hundreds of thousands of leases):
// - a login happens only when there is no usable token; concurrent callers share one login (single flight);
// - at 2/3 of the TTL the token is renewed in the background while callers keep using it; when renewal
//   fails, or the max TTL is near (renewal grants less than 1/3 of the original TTL), we log in again with
//   a fresh credential (the kubernetes JWT callback runs again; a projected SA token expires too);
// - a 403 triggers one re-login and a retry: the role's policy list may have changed since login (VSO #1185
//   keeps the stale token until TTL). At most one such re-login per identity per
//   `forbiddenReloginIntervalMs`, so a genuinely forbidden path does not turn into a login per request;
// - entries are LRU-bounded; an evicted login token is revoked (revoke-self), never a user-supplied token.
import { silentLogger, type Logger } from '../observability/log.ts';
import { identityKey, login, renewSelf, revokeSelf, trimMount } from './auth.ts';
import { errorKind, isKind } from './errors.ts';
import { lookupOwnToken } from './leases.ts';
import { noopVaultMetrics, type VaultMetrics } from './metrics.ts';
import type {
  TokenLease,
  VaultClient,
  VaultCredentials,
  VaultRequest,
  VaultRequester,
  VaultTokenInfo,
} from './types.ts';

export interface TokenCacheOptions {
  /** Fraction of the TTL after which a token is renewed. Default 2/3. */
  renewFraction?: number;
  /** Minimum time between 403-triggered re-logins of one identity. Default 30 000 ms. */
  forbiddenReloginIntervalMs?: number;
  /** Identities kept; least recently used beyond this are dropped (and their login tokens revoked). Default 10 000. */
  maxEntries?: number;
  /** Revoke login tokens on eviction and close(). Default true. Tokens from TokenCredentials are never revoked. */
  revokeOnEvict?: boolean;
  /** Clock in ms (tests move it forward to reach renewal without waiting). */
  now?: () => number;
  metrics?: VaultMetrics;
  logger?: Logger;
  /** Observes lifecycle events (tests await them; never carries a token). */
  onEvent?: (event: TokenCacheEvent) => void;
}

export interface TokenCacheEvent {
  type: 'login' | 'login_failed' | 'renewed' | 'renew_failed' | 'revoked';
  /** Identity key (no secrets). */
  identity: string;
  /** TTL granted, for login/renewed. */
  ttlSeconds?: number;
}

/** A VaultRequester bound to one identity: requests carry its token; 403 → one re-login + retry. */
export interface VaultSession extends VaultRequester {
  /** Cache key of the identity (no secrets): server|namespace|method|mount|role|subject. */
  readonly key: string;
  /** A currently valid token (logs in if needed). For handing to code that is not a VaultRequester. */
  token(): Promise<string>;
  /** Policies Vault attached at the last login/renewal (for status and audit), or [] before the first. */
  policies(): readonly string[];
  /** The current token's accessor, end and kind: one lookup-self per login, its end kept by renewals. */
  ownToken(): Promise<TokenLease>;
}

interface Entry {
  readonly key: string;
  readonly client: VaultClient;
  creds: VaultCredentials;
  info?: VaultTokenInfo;
  /** TTL (s) the last login granted: renewals granting much less mean the max TTL is near. */
  loginTtl: number;
  renewAt: number;
  expiresAt: number;
  /** Incremented on every new token, so a 403 on an old token retries without another login. */
  generation: number;
  /** Incremented on every login (not on renewals): a new token, whose lookup-self is asked again. */
  logins: number;
  /** The token's end counted from when its login or renewal was sent: never later than Vault's. */
  tokenEndsAt: number;
  /** lookup-self of the token of login number `login`; its end is Vault's while `generation` holds. */
  own?: { login: number; generation: number; lease: TokenLease };
  inflight?: Promise<VaultTokenInfo>;
  lastForbiddenRelogin: number;
}

export class TokenCache {
  private readonly entries = new Map<string, Entry>();
  private readonly renewFraction: number;
  private readonly forbiddenInterval: number;
  private readonly maxEntries: number;
  private readonly revokeOnEvict: boolean;
  private readonly now: () => number;
  private readonly metrics: VaultMetrics;
  private readonly logger: Logger;
  private readonly emit: (event: TokenCacheEvent) => void;

  constructor(opts: TokenCacheOptions = {}) {
    this.renewFraction = opts.renewFraction ?? 2 / 3;
    this.forbiddenInterval = opts.forbiddenReloginIntervalMs ?? 30_000;
    this.maxEntries = Math.max(1, opts.maxEntries ?? 10_000);
    this.revokeOnEvict = opts.revokeOnEvict ?? true;
    this.now = opts.now ?? Date.now;
    this.metrics = opts.metrics ?? noopVaultMetrics;
    this.logger = opts.logger ?? silentLogger;
    this.emit = opts.onEvent ?? (() => {});
  }

  get size(): number {
    return this.entries.size;
  }

  /** A session for `creds` on `client`; cheap, create one per reconcile if convenient (the token is shared). */
  session(client: VaultClient, creds: VaultCredentials): VaultSession {
    const key = identityKey(client, creds);
    return {
      key,
      token: async () => (await this.current(this.entry(client, creds))).token,
      policies: () => this.entries.get(key)?.info?.policies ?? [],
      ownToken: () => this.ownToken(this.entry(client, creds)),
      request: <T>(req: VaultRequest) => this.request<T>(this.entry(client, creds), req),
    };
  }

  /** Forget an identity's token (e.g. its SecretStore was deleted), revoking it if it came from a login. */
  invalidate(client: VaultClient, creds: VaultCredentials): void {
    const entry = this.entries.get(identityKey(client, creds));
    if (entry) this.drop(entry);
  }

  /**
   * A kubernetes-auth role was written or deleted (by vaultgate's own controller): a token keeps the
   * policies its role had at login, so every cached token of that role is replaced at its next use (the
   * old one revoked by that login) instead of answering 403 until the forbidden re-login interval or its
   * TTL runs out. Matched on mount and role alone: a same-named role on another server costs one login.
   */
  roleChanged(mount: string, role: string): void {
    for (const e of this.entries.values()) {
      if (e.creds.method === 'kubernetes' && e.creds.role === role && trimMount(e.creds.mount) === trimMount(mount))
        e.expiresAt = 0;
    }
  }

  /** Drop every entry; with `revoke`, wait for revoke-self of login tokens (best effort). */
  async close(opts: { revoke?: boolean } = {}): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    if (opts.revoke ?? this.revokeOnEvict) await Promise.all(all.map((e) => this.revoke(e)));
  }

  private entry(client: VaultClient, creds: VaultCredentials): Entry {
    const key = identityKey(client, creds);
    let e = this.entries.get(key);
    if (e) {
      // LRU: move to the end. Keep the newest callbacks (a new TokenRequest closure, same identity).
      this.entries.delete(key);
      e.creds = creds;
    } else {
      e = {
        key,
        client,
        creds,
        loginTtl: 0,
        renewAt: 0,
        expiresAt: 0,
        generation: 0,
        logins: 0,
        tokenEndsAt: 0,
        lastForbiddenRelogin: -Infinity,
      };
    }
    this.entries.set(key, e);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.values().next().value;
      if (!oldest) break;
      this.drop(oldest);
    }
    return e;
  }

  private drop(e: Entry): void {
    if (this.entries.get(e.key) === e) this.entries.delete(e.key);
    if (this.revokeOnEvict) void this.revoke(e);
  }

  private async revoke(e: Entry): Promise<void> {
    if (!e.info || e.creds.method === 'token') return;
    try {
      await revokeSelf(e.client, e.info.token);
      this.emit({ type: 'revoked', identity: e.key });
    } catch (err) {
      this.logger.debug(
        { identity: e.key, kind: errorKind(err) },
        'vault token revoke failed (it will expire on its own)',
      );
    }
  }

  /** A usable token: log in when absent or about to expire; renew in the background after renewAt. */
  private async current(e: Entry): Promise<VaultTokenInfo> {
    const now = this.now();
    // Margin so a token is not used in its last moments (request latency, clock skew).
    if (!e.info || now >= e.expiresAt - this.expiryMargin(e)) return this.refresh(e, 'login');
    if (now >= e.renewAt && !e.inflight) {
      this.refresh(e, 'renew').catch((err: unknown) => {
        // The current token stays valid until expiresAt; the next caller past that logs in again.
        this.logger.warn({ identity: e.key, kind: errorKind(err) }, 'background vault token refresh failed');
      });
    }
    return e.info;
  }

  /**
   * What lookup-self says of the current token, asked once per login: its accessor, renewability and
   * periodicity do not change, and its end is Vault's until the next renewal, then the cache's own count.
   */
  private async ownToken(e: Entry): Promise<TokenLease> {
    const info = await this.current(e);
    if (e.own?.login !== e.logins) {
      const at = { login: e.logins, generation: e.generation };
      const lease = await lookupOwnToken({ request: (req) => e.client.request({ ...req, token: info.token }) });
      if (at.login === e.logins) e.own = { ...at, lease };
      return lease;
    }
    const { lease, generation } = e.own;
    if (generation === e.generation || lease.expireTime === undefined) return lease;
    return { ...lease, expireTime: e.tokenEndsAt };
  }

  private expiryMargin(e: Entry): number {
    return Math.min(10_000, e.loginTtl * 100); // 10 % of the TTL (ms), at most 10 s
  }

  /** Single flight: concurrent callers share the same login/renewal promise. */
  private refresh(e: Entry, mode: 'login' | 'renew'): Promise<VaultTokenInfo> {
    if (e.inflight) return e.inflight;
    const p = (mode === 'renew' ? this.renewOrLogin(e) : this.doLogin(e)).finally(() => {
      if (e.inflight === p) delete e.inflight;
    });
    e.inflight = p;
    return p;
  }

  private async renewOrLogin(e: Entry): Promise<VaultTokenInfo> {
    const old = e.info;
    if (!old || !old.renewable) return this.doLogin(e);
    try {
      const sentAt = this.now();
      const renewed = await renewSelf(e.client, old.token, e.loginTtl);
      this.metrics.renewal('success');
      this.emit({ type: 'renewed', identity: e.key, ttlSeconds: renewed.ttlSeconds });
      // Max TTL near: the renewal granted too little to be worth keeping; start a fresh token.
      if (renewed.ttlSeconds > 0 && renewed.ttlSeconds < e.loginTtl * (1 - this.renewFraction)) return this.doLogin(e);
      this.install(e, { ...renewed, token: old.token }, false, sentAt);
      return e.info ?? renewed;
    } catch (err) {
      this.metrics.renewal(errorKind(err));
      this.emit({ type: 'renew_failed', identity: e.key });
      this.logger.info({ identity: e.key, kind: errorKind(err) }, 'vault token renewal failed; logging in again');
      return this.doLogin(e);
    }
  }

  private async doLogin(e: Entry): Promise<VaultTokenInfo> {
    const previous = e.info;
    try {
      const sentAt = this.now();
      const info = await login(e.client, e.creds);
      this.metrics.login(e.creds.method, 'success');
      this.install(e, info, true, sentAt);
      this.emit({ type: 'login', identity: e.key, ttlSeconds: info.ttlSeconds });
      this.logger.debug({ identity: e.key, policies: info.policies, ttlSeconds: info.ttlSeconds }, 'vault login');
      // The token we replaced holds a lease; revoke it rather than let leases pile up until TTL.
      if (previous && previous.token !== info.token && this.revokeOnEvict && e.creds.method !== 'token') {
        revokeSelf(e.client, previous.token).then(
          () => this.emit({ type: 'revoked', identity: e.key }),
          () => undefined,
        );
      }
      return info;
    } catch (err) {
      this.metrics.login(e.creds.method, errorKind(err));
      this.emit({ type: 'login_failed', identity: e.key });
      throw err;
    }
  }

  private install(e: Entry, info: VaultTokenInfo, isLogin: boolean, sentAt: number): void {
    const now = this.now();
    e.info = info;
    e.generation++;
    e.tokenEndsAt = sentAt + info.ttlSeconds * 1000;
    if (isLogin) {
      e.loginTtl = info.ttlSeconds;
      e.logins++;
    }
    if (info.ttlSeconds <= 0) {
      e.renewAt = Infinity; // root or non-expiring token
      e.expiresAt = Infinity;
    } else {
      e.renewAt = now + info.ttlSeconds * 1000 * this.renewFraction;
      e.expiresAt = now + info.ttlSeconds * 1000;
    }
  }

  private async request<T>(e: Entry, req: VaultRequest): Promise<T | undefined> {
    const info = await this.current(e);
    const generation = e.generation;
    try {
      return await e.client.request<T>({ ...req, token: info.token });
    } catch (err) {
      if (!isKind(err, 'forbidden')) throw err;
      let next: VaultTokenInfo;
      if (e.inflight) {
        next = await e.inflight; // someone is already logging in: share it
      } else if (e.generation !== generation && e.info) {
        next = e.info; // the token was replaced while we were waiting for Vault
      } else if (this.now() - e.lastForbiddenRelogin >= this.forbiddenInterval) {
        e.lastForbiddenRelogin = this.now();
        this.logger.info(
          { identity: e.key, operation: req.operation },
          'vault answered 403; logging in again in case the role changed',
        );
        next = await this.refresh(e, 'login');
      } else {
        throw err; // re-logged in recently: the path is really forbidden
      }
      return e.client.request<T>({ ...req, token: next.token });
    }
  }
}
