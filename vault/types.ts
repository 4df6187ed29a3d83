// The Vault adapter's public shapes in one place, so reconcilers (and their fakes) can be written
// against them without reading the implementations. Everything here is types only.
//
// Layers, bottom up:
//   VaultClient   (client.ts)      one per Vault server: HTTP via node-vault, timeout, limiter, metrics,
//                                  errors normalised to VaultError. The only module importing node-vault.
//   login/renew   (auth.ts)        pure request builders over a VaultClient: kubernetes, jwt, appRole, token,
//                                  userPass, ldap, cert.
//   TokenCache    (token-cache.ts) one token per identity, renewed at 2/3 TTL, single-flight re-login;
//                                  `session(client, creds)` gives a VaultRequester bound to that identity.
//   SysApi, KvApi (sys.ts, kv.ts)  typed helpers over any VaultRequester.
// A test or reconciler fake only needs to implement `VaultRequester.request`, or SysApi / KvApi directly.

export type VaultMethod = 'GET' | 'LIST' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface VaultRequest {
  /**
   * Logical operation, used as the metric label and error prefix: low cardinality, no names or paths
   * (e.g. `kv.read`, `sys.policy.write`, `auth.login.kubernetes`).
   */
  operation: string;
  method: VaultMethod;
  /** API path after `/v1/`, without a leading slash, e.g. `secret/data/team-a/db`. Segments are sent as given. */
  path: string;
  /** Vault token; omitted for login calls. A session (TokenCache.session) fills it in. */
  token?: string;
  /** JSON body for POST/PUT/PATCH. Never logged. */
  body?: Record<string, unknown>;
  /** Query string parameters (e.g. `{ version: 3 }` for a KV v2 read). */
  query?: Record<string, string | number | boolean>;
  /** Extra strings to scrub from error messages (a login JWT, secret values being written). */
  sensitive?: readonly string[];
  /** Per-call timeout override in ms; the client's required default applies otherwise. */
  timeoutMs?: number;
}

/** Anything that can send a Vault request: a VaultClient (token given per request) or a session (token injected). */
export interface VaultRequester {
  /**
   * Send one request. Resolves the parsed JSON body, or `undefined` for 204 No Content.
   * Rejects with a VaultError (errors.ts) for every non-2xx answer, network failure or timeout.
   */
  request<T = unknown>(req: VaultRequest): Promise<T | undefined>;
  /**
   * The token this requester sends, as `auth/token/lookup-self` describes it. A token-cache session knows it
   * without asking Vault again (one lookup per login); a requester without it is asked each time.
   */
  ownToken?(): Promise<TokenLease>;
}

/** A token as lookup-self or lookup-accessor describe it (vault/leases.ts). */
export interface TokenLease {
  accessor: string | undefined;
  /** ms since the epoch; undefined for a token without expiry (root, or no TTL). */
  expireTime: number | undefined;
  renewable: boolean;
  /** A periodic token: renewable without end, each renewal granting its period. */
  periodic: boolean;
}

/** One Vault server (address + optional Enterprise namespace). Create with `createVaultClient` (client.ts). */
export interface VaultClient extends VaultRequester {
  /** Server address as configured (no trailing slash), e.g. `https://vault.example:8200`. Part of token-cache keys. */
  readonly address: string;
  /** Vault Enterprise / OpenBao namespace sent as `X-Vault-Namespace`, if any. Part of token-cache keys. */
  readonly namespace: string | undefined;
  /** Release keep-alive sockets. Requests after close() still work (new sockets) but should not be made. */
  close(): void;
}

// ---------------------------------------------------------------------------------------------- auth

/** Kubernetes auth (`auth/<mount>/login` with `{role, jwt}`); the JWT is a TokenRequest token the caller supplies. */
export interface KubernetesCredentials {
  method: 'kubernetes';
  /** Auth mount path without `auth/`, e.g. `kubernetes` (always explicit: node-vault#300 ignores its default). */
  mount: string;
  role: string;
  /** Who the JWT is for, e.g. `team-a/app` (namespace/serviceaccount). Part of the cache key, never secret. */
  subject: string;
  /** Returns a fresh service-account JWT (called on every login, never cached by us). */
  jwt(): Promise<string>;
}

/** JWT/OIDC auth (`auth/<mount>/login` with `{role?, jwt}`). */
export interface JwtCredentials {
  method: 'jwt';
  mount: string;
  /** Omitted → the mount's default_role. */
  role?: string;
  subject: string;
  jwt(): Promise<string>;
}

/** AppRole auth (`auth/<mount>/login` with `{role_id, secret_id}`). */
export interface AppRoleCredentials {
  method: 'appRole';
  mount: string;
  roleId: string;
  /** Reference to where the secret id came from, e.g. `secret team-a/approle#secret_id`. Part of the cache key. */
  subject: string;
  secretId(): Promise<string>;
}

/** A static token (ESO `auth.tokenSecretRef`): looked up, renewed if renewable, never revoked by us. */
export interface TokenCredentials {
  method: 'token';
  /** Reference to where the token came from, e.g. `secret team-a/vault-token#token`. Part of the cache key. */
  subject: string;
  token(): Promise<string>;
}

/** Username + password auth (`auth/<mount>/login/<username>` with `{password}`): ESO `auth.userPass` and `auth.ldap`. */
export interface PasswordCredentials {
  method: 'userPass' | 'ldap';
  mount: string;
  username: string;
  /** Reference to where the password came from, e.g. `secret team-a/vault-user#password`. Part of the cache key. */
  subject: string;
  password(): Promise<string>;
}

/**
 * TLS certificate auth (`auth/<mount>/login` with `{name?}`): the client certificate is the TLS one of
 * the connection (the VaultClient is built with it), so nothing secret is in the body.
 */
export interface CertCredentials {
  method: 'cert';
  mount: string;
  /** The cert auth role (`name`); omitted → Vault tries every role whose certificate matches. */
  role?: string;
  /** Reference to the certificate, e.g. `secret team-a/vault-client#tls.crt`. Part of the cache key. */
  subject: string;
}

export type VaultCredentials =
  | KubernetesCredentials
  | JwtCredentials
  | AppRoleCredentials
  | TokenCredentials
  | PasswordCredentials
  | CertCredentials;

/** What Vault told us about a token (from a login's `auth` block, renew-self, or lookup-self). */
export interface VaultTokenInfo {
  /** The token itself. Never log, never put in an error or status. */
  token: string;
  accessor?: string;
  /** Policies attached to the token (`token_policies` + identity policies as Vault reports them). */
  policies: string[];
  /** Remaining lifetime in seconds; 0 = no expiry (root or periodic-less tokens). */
  ttlSeconds: number;
  renewable: boolean;
}

// ---------------------------------------------------------------------------------------------- sys

/** A kubernetes-auth role as vaultgate writes and reads it (`auth/<mount>/role/<name>`). Durations are seconds on read. */
export interface KubernetesAuthRole {
  bound_service_account_names: string[];
  bound_service_account_namespaces: string[];
  /** Expected `aud` claim of the JWT; optional since Vault 1.21 reverted making it required. */
  audience?: string;
  token_policies: string[];
  /** Seconds (Vault answers numbers; writes may also send Go duration strings). */
  token_ttl?: number | string;
  token_max_ttl?: number | string;
  /** Other fields Vault returns are kept as-is (alias_name_source, token_bound_cidrs, …). */
  [field: string]: unknown;
}

/** ACL policies and kubernetes-auth roles. Every call names its auth mount explicitly. */
export interface SysApi {
  /** Policy text exactly as stored (HCL or JSON), or `undefined` when Vault says 404 (`not_found`). */
  readPolicy(name: string): Promise<string | undefined>;
  /** Create or replace a policy (`PUT sys/policies/acl/<name>` with `{policy}`); Vault rejects bad syntax as `invalid`. */
  writePolicy(name: string, text: string): Promise<void>;
  /** Delete a policy; succeeds when already absent (Vault deletes are idempotent). */
  deletePolicy(name: string): Promise<void>;
  /** Policy names (`LIST sys/policies/acl`); [] when none. */
  listPolicies(): Promise<string[]>;
  /** A role, or `undefined` when absent. Throws `not_found` when the auth mount itself does not exist. */
  readKubernetesRole(mount: string, name: string): Promise<KubernetesAuthRole | undefined>;
  writeKubernetesRole(mount: string, name: string, role: KubernetesAuthRole): Promise<void>;
  /** Idempotent like deletePolicy. */
  deleteKubernetesRole(mount: string, name: string): Promise<void>;
  /** Role names on the mount; [] when none. */
  listKubernetesRoles(mount: string): Promise<string[]>;
}

// ---------------------------------------------------------------------------------------------- kv

export type KvVersion = 1 | 2;

/** A KV mount as a SecretStore describes it (ESO `provider.vault.path` + `version`). */
export interface KvMountRef {
  /** Mount path without slashes at either end, e.g. `secret` or `team/kv`. */
  mount: string;
  version: KvVersion;
}

/** Metadata of one KV v2 version (`data.metadata` of a v2 read). */
export interface KvVersionMetadata {
  version: number;
  createdTime: string;
  /** '' unless soft-deleted. */
  deletionTime: string;
  destroyed: boolean;
  customMetadata: Record<string, string>;
}

export interface KvSecret {
  /** The key/value pairs. Secret: never log. */
  data: Record<string, unknown>;
  /** v2 only. */
  metadata?: KvVersionMetadata;
}

/** KV v2 `metadata/<key>`: all versions plus custom_metadata (used for ESO `find.tags` and ownership markers). */
export interface KvMetadata {
  currentVersion: number;
  oldestVersion: number;
  maxVersions: number;
  casRequired: boolean;
  createdTime: string;
  updatedTime: string;
  customMetadata: Record<string, string>;
  versions: Record<string, { createdTime: string; deletionTime: string; destroyed: boolean }>;
}

export interface KvWriteOptions {
  /** KV v2 check-and-set: 0 = only if absent, n = only if current version is n. Mismatch → VaultError `invalid`. */
  cas?: number;
}

/** KV v1/v2 operations on one mount; keys are relative to the mount (`team-a/db`), see `resolveKvPath`. */
export interface KvApi {
  readonly ref: KvMountRef;
  /** The secret, or `undefined` when absent (404, including a v2 latest version that is deleted or destroyed). */
  read(key: string, opts?: { version?: number | string }): Promise<KvSecret | undefined>;
  /** Write all key/values (a full replace, as Vault does). v2 resolves the new version number. */
  write(key: string, data: Record<string, unknown>, opts?: KvWriteOptions): Promise<{ version?: number }>;
  /** Child names under a prefix (`foo/` entries end with `/`); [] when nothing is there (Vault's 404). */
  list(prefix: string): Promise<string[]>;
  /** v2 metadata, or `undefined` when absent. On a v1 mount throws VaultError `invalid`. */
  readMetadata(key: string): Promise<KvMetadata | undefined>;
  /** v2: set custom_metadata / max_versions / cas_required without writing a version. v1: throws `invalid`. */
  writeMetadata(
    key: string,
    meta: { customMetadata?: Record<string, string>; maxVersions?: number; casRequired?: boolean },
  ): Promise<void>;
  /** v1: delete the key. v2: soft-delete the latest version (recoverable with undelete). Idempotent. */
  delete(key: string): Promise<void>;
  /** v2: remove every version and the metadata (`DELETE metadata/<key>`). v1: same as delete. Idempotent. */
  deleteAll(key: string): Promise<void>;
}
