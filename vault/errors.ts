// Every failure talking to Vault becomes one VaultError with a small closed set of kinds. The kind is
// what callers branch on, what a status condition shows as its reason, and a metric label, so it must
// stay low-cardinality. Messages are built only from Vault's own `errors[]` strings and our own words:
// never from request bodies, headers or tokens (node-vault's ApiResponseError keeps the response body,
// which for a login or a KV read can hold secrets, so it is never copied here).

export const VAULT_ERROR_KINDS = [
  'not_found',
  'forbidden',
  'sealed',
  'unavailable',
  'rate_limited',
  'invalid',
  'unknown',
] as const;

/**
 * - `not_found`: 404 (missing KV path, policy, role; or no handler for the route, e.g. an auth mount not enabled)
 * - `forbidden`: 403 (permission denied, or an invalid/expired token: Vault answers both with 403)
 * - `sealed`: 503 with "Vault is sealed" (also standby nodes that cannot serve)
 * - `unavailable`: other 5xx, connection refused/reset, DNS failure, our timeout
 * - `rate_limited`: 429 (Vault's rate-limit quotas)
 * - `invalid`: 400 and other 4xx caller mistakes (bad request body, CAS mismatch, unsupported path)
 * - `unknown`: anything else (a bug in us or an unexpected answer)
 */
export type VaultErrorKind = (typeof VAULT_ERROR_KINDS)[number];

/** Map from kind to the PascalCase reason used in Kubernetes conditions (`Ready=False, reason=VaultSealed`). */
export const CONDITION_REASON: Record<VaultErrorKind, string> = {
  not_found: 'VaultNotFound',
  forbidden: 'VaultPermissionDenied',
  sealed: 'VaultSealed',
  unavailable: 'VaultUnavailable',
  rate_limited: 'VaultRateLimited',
  invalid: 'VaultInvalidRequest',
  unknown: 'VaultError',
};

export class VaultError extends Error {
  override readonly name = 'VaultError';
  constructor(
    readonly kind: VaultErrorKind,
    message: string,
    /** HTTP status when Vault answered; absent for network failures and timeouts. */
    readonly status?: number,
    /** Logical operation, e.g. `kv.read` or `auth.login` (never a path with secret material). */
    readonly operation?: string,
  ) {
    super(message);
  }

  /** Whether retrying later can help without anyone changing configuration. */
  get retryable(): boolean {
    return this.kind === 'sealed' || this.kind === 'unavailable' || this.kind === 'rate_limited';
  }

  /** Safe, serialisable form for status conditions, events and logs. */
  toJSON(): { kind: VaultErrorKind; status?: number; operation?: string; message: string } {
    return {
      kind: this.kind,
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.operation ? { operation: this.operation } : {}),
      message: this.message,
    };
  }
}

export function isVaultError(err: unknown): err is VaultError {
  return err instanceof VaultError;
}

/** Kind of any thrown value: a VaultError's own kind, `unknown` otherwise. */
export function errorKind(err: unknown): VaultErrorKind {
  return isVaultError(err) ? err.kind : 'unknown';
}

/** Whether `err` is a VaultError of `kind`. */
export function isKind(err: unknown, kind: VaultErrorKind): boolean {
  return isVaultError(err) && err.kind === kind;
}

/** Kind for an HTTP status and Vault's `errors[]` (pure; exported for tests and the simulator). */
export function kindForStatus(status: number, errors: readonly string[] = []): VaultErrorKind {
  if (status === 404) return 'not_found';
  if (status === 403 || status === 401) return 'forbidden';
  if (status === 429) return 'rate_limited';
  if (status === 503 && errors.some((e) => /sealed/i.test(e))) return 'sealed';
  if (status >= 500) return 'unavailable';
  if (status >= 400) return 'invalid';
  return 'unknown';
}

// Node/axios error codes meaning "could not reach Vault in time": retry later.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_CANCELED',
]);
// TLS failures are configuration mistakes (wrong CA, wrong name), not transient.
const TLS_CODES = /^(ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_SSL_)/;

/** Longest Vault error text we pass on: Vault's messages are short; anything longer is suspicious. */
const MAX_MESSAGE = 300;

/**
 * Normalise whatever node-vault, axios or our own deadline threw into a VaultError. Duck-typed, as
 * node-vault does not export its error classes: `response.statusCode` + `response.body.errors` for
 * API errors (0.12's ApiResponseError), `code` for axios/Node network errors.
 * `redact` lists strings (token, JWT, secret values) to scrub from the message as a last defence.
 */
export function toVaultError(err: unknown, operation: string, redact: readonly string[] = []): VaultError {
  if (isVaultError(err)) return err;
  const e = (err ?? {}) as { response?: { statusCode?: unknown; body?: unknown }; code?: unknown; message?: unknown };
  const status = typeof e.response?.statusCode === 'number' ? e.response.statusCode : undefined;
  if (status !== undefined) {
    const errors = vaultErrors(e.response?.body);
    const kind = kindForStatus(status, errors);
    const text = errors.length > 0 ? errors.map(oneLine).join('; ') : defaultMessage(kind, status);
    return new VaultError(kind, scrub(`${operation}: ${text}`, redact), status, operation);
  }
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code && TLS_CODES.test(code))
    return new VaultError('invalid', `${operation}: TLS error talking to Vault (${code})`, undefined, operation);
  if (code && NETWORK_CODES.has(code))
    return new VaultError('unavailable', `${operation}: Vault unreachable (${code})`, undefined, operation);
  // tv4 schema errors from node-vault's generated functions and anything unexpected: keep only the
  // first line of our own message, scrubbed.
  const raw = typeof e.message === 'string' ? (e.message.split('\n')[0] ?? '') : 'unexpected error';
  return new VaultError('unknown', scrub(`${operation}: ${raw}`, redact), undefined, operation);
}

/** Vault's `{"errors": [...]}` body, tolerant of anything else. */
export function vaultErrors(body: unknown): string[] {
  if (body && typeof body === 'object' && Array.isArray((body as { errors?: unknown }).errors)) {
    return (body as { errors: unknown[] }).errors.filter((x): x is string => typeof x === 'string');
  }
  return [];
}

/** Vault wraps errors with hashicorp/go-multierror ("1 error occurred:\n\t* permission denied\n\n"): flatten. */
function oneLine(e: string): string {
  return e
    .replace(/^\s*\d+ errors? occurred:\s*/, '')
    .replace(/\s*\n\s*\*\s*|^\s*\*\s*/g, '; ')
    .replace(/^; /, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function defaultMessage(kind: VaultErrorKind, status: number): string {
  switch (kind) {
    case 'not_found':
      return 'not found (404)';
    case 'forbidden':
      return `permission denied (${status})`;
    case 'rate_limited':
      return 'rate limited by Vault (429)';
    case 'sealed':
      return 'Vault is sealed (503)';
    default:
      return `Vault answered ${status}`;
  }
}

/** Remove every non-trivial redact string and cap the length. */
export function scrub(message: string, redact: readonly string[]): string {
  let out = message;
  for (const s of redact) if (s.length >= 4) out = out.split(s).join('[REDACTED]');
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}…` : out;
}
