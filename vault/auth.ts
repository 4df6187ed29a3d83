// Login, renew, lookup and revoke, each one request over a VaultClient. No caching here (token-cache.ts).
// The auth mount is always part of the path we build, never a library default (node-vault#300).
import { VaultError } from './errors.ts';
import type { TokenCredentials, VaultClient, VaultCredentials, VaultRequester, VaultTokenInfo } from './types.ts';

interface AuthBlock {
  client_token?: unknown;
  accessor?: unknown;
  policies?: unknown;
  token_policies?: unknown;
  lease_duration?: unknown;
  renewable?: unknown;
}

/** Log in with `creds`; resolves the token and its TTL. The JWT / secret id is fetched fresh for this call. */
export async function login(client: VaultRequester, creds: VaultCredentials): Promise<VaultTokenInfo> {
  // No login with a token: learn its TTL (and prove it is valid).
  if (creds.method === 'token') return lookupSelf(client, await creds.token());
  return postLogin(client, await loginRequest(creds));
}

/** Every method but a static token, which is looked up instead of logging in. */
type LoginCredentials = Exclude<VaultCredentials, TokenCredentials>;

/** One login's POST: `secret` (JWT, secret id, password) is in the body and never shown in an error. */
interface LoginRequest {
  operation: string;
  path: string;
  body: Record<string, unknown>;
  secret?: string;
}

/** What a method mounted at `creds.mount` posts to log in. */
async function loginRequest(creds: LoginCredentials): Promise<LoginRequest> {
  const path = `auth/${trimMount(creds.mount)}/login`;
  switch (creds.method) {
    case 'kubernetes': {
      const jwt = await creds.jwt();
      return { operation: 'auth.login.kubernetes', path, body: { role: creds.role, jwt }, secret: jwt };
    }
    case 'jwt': {
      const jwt = await creds.jwt();
      const body = { ...(creds.role ? { role: creds.role } : {}), jwt };
      return { operation: 'auth.login.jwt', path, body, secret: jwt };
    }
    case 'appRole': {
      const secretId = await creds.secretId();
      const body = { role_id: creds.roleId, secret_id: secretId };
      return { operation: 'auth.login.approle', path, body, secret: secretId };
    }
    case 'userPass':
    case 'ldap': {
      // Both as hashicorp/vault/api/auth/{userpass,ldap}: the username is a path segment.
      const password = await creds.password();
      const operation = creds.method === 'ldap' ? 'auth.login.ldap' : 'auth.login.userpass';
      return { operation, path: `${path}/${creds.username}`, body: { password }, secret: password };
    }
    case 'cert':
      // The certificate is the connection's (TLS client auth); the body only names the role.
      return { operation: 'auth.login.cert', path, body: creds.role ? { name: creds.role } : {} };
  }
}

async function postLogin(
  client: VaultRequester,
  { operation, path, body, secret }: LoginRequest,
): Promise<VaultTokenInfo> {
  return authResponse(
    await client.request<{ auth?: AuthBlock }>({
      operation,
      method: 'POST',
      path,
      body,
      ...(secret !== undefined ? { sensitive: [secret] } : {}),
    }),
    operation,
  );
}

/** `auth/token/lookup-self`: the token's remaining TTL, policies, renewability. */
export async function lookupSelf(client: VaultRequester, token: string): Promise<VaultTokenInfo> {
  const res = await client.request<{
    data?: { accessor?: unknown; policies?: unknown; ttl?: unknown; renewable?: unknown };
  }>({
    operation: 'auth.token.lookup_self',
    method: 'GET',
    path: 'auth/token/lookup-self',
    token,
  });
  const d = res?.data;
  if (!d)
    throw new VaultError(
      'unknown',
      'auth.token.lookup_self: Vault answered without data',
      undefined,
      'auth.token.lookup_self',
    );
  return {
    token,
    ...(typeof d.accessor === 'string' ? { accessor: d.accessor } : {}),
    policies: stringArray(d.policies),
    ttlSeconds: typeof d.ttl === 'number' ? d.ttl : 0,
    renewable: d.renewable === true,
  };
}

/** `auth/token/renew-self`; `incrementSeconds` asks for a new TTL (Vault caps it at the max TTL). */
export async function renewSelf(
  client: VaultRequester,
  token: string,
  incrementSeconds?: number,
): Promise<VaultTokenInfo> {
  const res = await client.request<{ auth?: AuthBlock }>({
    operation: 'auth.token.renew_self',
    method: 'POST',
    path: 'auth/token/renew-self',
    token,
    body: incrementSeconds ? { increment: `${Math.round(incrementSeconds)}s` } : {},
  });
  const info = authResponse(res, 'auth.token.renew_self');
  // renew-self answers with the same token; keep ours if Vault omitted it.
  return { ...info, token: info.token || token };
}

/** `auth/token/revoke-self`: best effort when a cached login token is dropped (ESO #376's lease pile-up). */
export async function revokeSelf(client: VaultRequester, token: string): Promise<void> {
  await client.request({ operation: 'auth.token.revoke_self', method: 'POST', path: 'auth/token/revoke-self', token });
}

/**
 * Cache key for an identity: server + namespace + method + mount + role + subject. Never contains a
 * secret (the subject is a reference such as `team-a/app`, not a token).
 */
export function identityKey(client: Pick<VaultClient, 'address' | 'namespace'>, creds: VaultCredentials): string {
  const parts = [client.address, client.namespace ?? '', creds.method];
  if (creds.method === 'token') parts.push(creds.subject);
  else parts.push(trimMount(creds.mount), loginName(creds), creds.subject);
  return parts.map((p) => encodeURIComponent(p)).join('|');
}

/** Whom a login names: the role (empty: the mount's default), the AppRole role id, or the username. */
function loginName(creds: LoginCredentials): string {
  switch (creds.method) {
    case 'kubernetes':
      return creds.role;
    case 'appRole':
      return creds.roleId;
    case 'userPass':
    case 'ldap':
      return creds.username;
    case 'jwt':
    case 'cert':
      return creds.role ?? '';
  }
}

function authResponse(res: { auth?: AuthBlock } | undefined, operation: string): VaultTokenInfo {
  const a = res?.auth;
  if (!a || typeof a.client_token !== 'string' || a.client_token === '') {
    throw new VaultError('unknown', `${operation}: Vault answered without an auth block`, undefined, operation);
  }
  const policies = stringArray(a.token_policies ?? a.policies);
  return {
    token: a.client_token,
    ...(typeof a.accessor === 'string' ? { accessor: a.accessor } : {}),
    policies,
    ttlSeconds: typeof a.lease_duration === 'number' ? a.lease_duration : 0,
    renewable: a.renewable === true,
  };
}

function stringArray(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** `/kubernetes/` → `kubernetes` (ESO and users write mounts both ways). */
export function trimMount(mount: string): string {
  return mount.replace(/^\/+|\/+$/g, '');
}
