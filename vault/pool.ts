// One VaultClient per distinct connection config, and one RequestLimiter per Vault server address, so
// reconcilers can ask for "the client for this SecretStore" on every reconcile without creating
// sockets, and every store pointing at the same Vault shares its rate budget (ESO #4231 storms).
import { createHash } from 'node:crypto';
import { createVaultClient, type VaultClientOptions } from './client.ts';
import { VaultRateLimits } from './rate-limits.ts';
import type { VaultClient } from './types.ts';

/** What distinguishes one client from another (limiter, metrics and logger come from the pool). */
export type PooledClientOptions = Omit<VaultClientOptions, 'limiter' | 'metrics' | 'logger'>;

export class VaultClientPool {
  private readonly clients = new Map<string, VaultClient>();
  private readonly limits: VaultRateLimits;

  constructor(
    private readonly shared: Pick<VaultClientOptions, 'metrics' | 'logger'> & { limits?: VaultRateLimits } = {},
  ) {
    this.limits = shared.limits ?? new VaultRateLimits();
  }

  /** The client for `opts`, created on first use. */
  get(opts: PooledClientOptions): VaultClient {
    const key = configKey(opts);
    let client = this.clients.get(key);
    if (!client) {
      client = createVaultClient({
        ...opts,
        ...(this.shared.metrics ? { metrics: this.shared.metrics } : {}),
        ...(this.shared.logger ? { logger: this.shared.logger } : {}),
        limiter: this.limits,
      });
      this.clients.set(key, client);
    }
    return client;
  }

  get size(): number {
    return this.clients.size;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

/** Stable key; TLS material is hashed, never kept as text in the key. */
function configKey(o: PooledClientOptions): string {
  const h = createHash('sha256');
  for (const part of [
    o.address.replace(/\/+$/, ''),
    o.namespace ?? '',
    String(o.timeoutMs),
    o.listMethod ?? 'GET',
    String(o.tls?.insecureSkipVerify === true),
  ])
    h.update(part).update('\0');
  for (const pem of [o.tls?.ca, o.tls?.cert, o.tls?.key]) h.update(pem === undefined ? '' : pem).update('\0');
  h.update(JSON.stringify(Object.entries(o.headers ?? {}).sort()));
  return h.digest('hex');
}
