// The Vault adapter's entry point: import from here, not from the individual modules.
export type * from './types.ts';
export {
  VaultError,
  VAULT_ERROR_KINDS,
  CONDITION_REASON,
  errorKind,
  isKind,
  isVaultError,
  type VaultErrorKind,
} from './errors.ts';
export { createVaultClient, type VaultClientOptions, type VaultTlsOptions } from './client.ts';
export { DEFAULT_VAULT_RATE_LIMIT, RequestLimiter, type LimiterOptions } from './limiter.ts';
export {
  parseRateLimit,
  parseServerRateLimit,
  serverKey,
  VaultRateLimits,
  type VaultRateLimit,
} from './rate-limits.ts';
export { createVaultMetrics, noopVaultMetrics, type VaultMetrics, type VaultMetricsOptions } from './metrics.ts';
export { login, lookupSelf, renewSelf, revokeSelf, identityKey } from './auth.ts';
export { TokenCache, type TokenCacheEvent, type TokenCacheOptions, type VaultSession } from './token-cache.ts';
export { createSysApi } from './sys.ts';
export { createKvApi, resolveKvPath } from './kv.ts';
export {
  currentTokenLease,
  isLeaseGone,
  issueCredential,
  lookupLease,
  renewLease,
  revokeLease,
  type IssuedCredential,
  type LeaseInfo,
  type RenewedLease,
  type TokenLease,
} from './leases.ts';
export { VaultClientPool, type PooledClientOptions } from './pool.ts';
