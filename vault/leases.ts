// Dynamic credentials and their leases: issue (a read or write of the issuing path), `sys/leases/renew`,
// `sys/leases/revoke`, `sys/leases/lookup`, and the minting token's own lookup. Each is one request over a
// VaultRequester (a session puts the token in). What Vault answers, on OpenBao 2.7.2 (test/real/):
//  - renew with an increment past the max TTL grants only what is left, with a warning: granted < asked is
//    how the max TTL is learned (Vault tells no max in the issue answer nor in lookup);
//  - revoke of an unknown or already revoked lease answers 204 (idempotent);
//  - renew or lookup of an unknown lease answers 400 ("lease not found", "invalid lease").
// The credential (the issue answer's data) is returned to the caller only; it never enters an error.
import { isKind, VaultError } from './errors.ts';
import type { TokenLease, VaultMethod, VaultRequester } from './types.ts';

export interface IssuedCredential {
  leaseId: string;
  /** Seconds Vault granted. */
  durationSeconds: number;
  renewable: boolean;
  /** The credential: the answer's data, each value a string (non-strings as JSON). Never log it. */
  data: Record<string, string>;
}

export interface RenewedLease {
  leaseId: string;
  durationSeconds: number;
  renewable: boolean;
}

export interface LeaseInfo {
  issueTime: number;
  /** ms since the epoch; undefined when the lease does not expire. */
  expireTime: number | undefined;
  renewable: boolean;
}

export type { TokenLease };

interface LeaseAnswer {
  lease_id?: unknown;
  lease_duration?: unknown;
  renewable?: unknown;
  data?: unknown;
}

function stringValues(data: unknown): Record<string, string> {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return {};
  return Object.fromEntries(
    Object.entries(data as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
}

/** Issues a credential: GET (database/creds/<role>) or a PUT/POST with parameters (kubernetes/creds/<role>). */
export async function issueCredential(
  vault: VaultRequester,
  req: { path: string; method: 'GET' | 'PUT' | 'POST'; parameters?: Record<string, string> },
): Promise<IssuedCredential> {
  const method: VaultMethod = req.method;
  const res = await vault.request<LeaseAnswer>({
    operation: 'lease.issue',
    method,
    path: req.path,
    ...(method !== 'GET' ? { body: { ...(req.parameters ?? {}) } } : {}),
  });
  if (!res || typeof res.lease_id !== 'string' || res.lease_id === '') {
    throw new VaultError(
      'invalid',
      'lease.issue: the path answered without a lease (not a dynamic credential: a KV path or a static role?)',
      undefined,
      'lease.issue',
    );
  }
  return {
    leaseId: res.lease_id,
    durationSeconds: typeof res.lease_duration === 'number' ? res.lease_duration : 0,
    renewable: res.renewable === true,
    data: stringValues(res.data),
  };
}

/** `sys/leases/renew`: Vault grants at most what is left before the max TTL. */
export async function renewLease(
  vault: VaultRequester,
  leaseId: string,
  incrementSeconds: number,
): Promise<RenewedLease> {
  const res = await vault.request<LeaseAnswer>({
    operation: 'sys.leases.renew',
    method: 'PUT',
    path: 'sys/leases/renew',
    body: { lease_id: leaseId, increment: Math.max(1, Math.round(incrementSeconds)) },
  });
  return {
    leaseId: typeof res?.lease_id === 'string' && res.lease_id ? res.lease_id : leaseId,
    durationSeconds: typeof res?.lease_duration === 'number' ? res.lease_duration : 0,
    renewable: res?.renewable === true,
  };
}

/** `sys/leases/revoke`: succeeds for a lease already gone (Vault answers 204 either way). */
export async function revokeLease(vault: VaultRequester, leaseId: string): Promise<void> {
  await vault.request({
    operation: 'sys.leases.revoke',
    method: 'PUT',
    path: 'sys/leases/revoke',
    body: { lease_id: leaseId },
  });
}

const time = (v: unknown): number | undefined => (typeof v === 'string' && v ? Date.parse(v) : undefined);

/** `sys/leases/lookup`, or undefined when Vault no longer knows the lease (revoked, expired). */
export async function lookupLease(vault: VaultRequester, leaseId: string): Promise<LeaseInfo | undefined> {
  try {
    const res = await vault.request<{ data?: { issue_time?: unknown; expire_time?: unknown; renewable?: unknown } }>({
      operation: 'sys.leases.lookup',
      method: 'PUT',
      path: 'sys/leases/lookup',
      body: { lease_id: leaseId },
    });
    const d = res?.data;
    if (!d) return undefined;
    return { issueTime: time(d.issue_time) ?? 0, expireTime: time(d.expire_time), renewable: d.renewable === true };
  } catch (err) {
    if (isKind(err, 'invalid') && /invalid lease|lease not found/i.test((err as Error).message)) return undefined;
    throw err;
  }
}

/** Whether a renew error says the lease is gone (revoked or expired), not that Vault failed. */
export function isLeaseGone(err: unknown): boolean {
  return (
    isKind(err, 'invalid') &&
    /lease not found|invalid lease|lease is not renewable|lease expired/i.test((err as Error).message)
  );
}

/**
 * The requester's own token: accessor and end. A token-cache session answers from what it learned at its
 * login (one lookup-self per token, not one per credential: test/bench/lifecycle.ts counted 7 in 150 s).
 */
export async function currentTokenLease(vault: VaultRequester): Promise<TokenLease> {
  return vault.ownToken ? vault.ownToken() : lookupOwnToken(vault);
}

/** `auth/token/lookup-self`, always asked (a session puts in its current token). */
export async function lookupOwnToken(vault: VaultRequester): Promise<TokenLease> {
  const res = await vault.request<{ data?: TokenData }>({
    operation: 'auth.token.lookup_self',
    method: 'GET',
    path: 'auth/token/lookup-self',
  });
  return tokenLease(res?.data ?? {});
}

interface TokenData {
  accessor?: unknown;
  expire_time?: unknown;
  renewable?: unknown;
  period?: unknown;
}

function tokenLease(d: TokenData): TokenLease {
  return {
    accessor: typeof d.accessor === 'string' ? d.accessor : undefined,
    expireTime: time(d.expire_time),
    renewable: d.renewable === true,
    periodic: typeof d.period === 'number' && d.period > 0,
  };
}

/**
 * Another token by its accessor (`auth/token/lookup-accessor`, a grant the identity needs): the token that
 * minted a lease, after this process logged in anew. Undefined when Vault no longer knows it (revoked or
 * expired: its leases went with it; OpenBao answers 400 "invalid accessor").
 */
export async function lookupTokenByAccessor(vault: VaultRequester, accessor: string): Promise<TokenLease | undefined> {
  try {
    const res = await vault.request<{ data?: TokenData }>({
      operation: 'auth.token.lookup_accessor',
      method: 'PUT',
      path: 'auth/token/lookup-accessor',
      body: { accessor },
    });
    return tokenLease(res?.data ?? {});
  } catch (err) {
    if (isKind(err, 'invalid') && /invalid accessor/i.test((err as Error).message)) return undefined;
    throw err;
  }
}
