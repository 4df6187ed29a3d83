// Login, renew, lookup and revoke, each one request over a VaultClient. No caching here (token-cache.ts).
// The auth mount is always part of the path we build, never a library default (node-vault#300).
import { VaultError } from './errors.ts';
import type { VaultClient, VaultCredentials, VaultRequester, VaultTokenInfo } from './types.ts';

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
  switch (creds.method) {
    case 'kubernetes': {
      const jwt = await creds.jwt();
      return postLogin(client, 'auth.login.kubernetes', loginPath(creds.mount), { role: creds.role, jwt }, jwt);
    }
    case 'jwt': {
      const jwt = await creds.jwt();
      return postLogin(
        client,
        'auth.login.jwt',
        loginPath(creds.mount),
        { ...(creds.role ? { role: creds.role } : {}), jwt },
        jwt,
      );
    }
    case 'appRole': {
      const secretId = await creds.secretId();
      return postLogin(
        client,
        'auth.login.approle',
        loginPath(creds.mount),
        { role_id: creds.roleId, secret_id: secretId },
        secretId,
      );
    }
    case 'token': {
      // No login: learn the TTL of the given token (and prove it is valid).
      return lookupSelf(client, await creds.token());
    }
    case 'userPass':
    case 'ldap': {
      // Both as hashicorp/vault/api/auth/{userpass,ldap}: the username is a path segment.
      const password = await creds.password();
      const operation = creds.method === 'ldap' ? 'auth.login.ldap' : 'auth.login.userpass';
      return postLogin(client, operation, `${loginPath(creds.mount)}/${creds.username}`, { password }, password);
    }
    case 'cert': {
      // The certificate is the connection's (TLS client auth); the body only names the role.
      return postLogin(client, 'auth.login.cert', loginPath(creds.mount), creds.role ? { name: creds.role } : {});
    }
  }
}

/** Where a method mounted at `mount` logs in. */
const loginPath = (mount: string): string => `auth/${trimMount(mount)}/login`;

/** One login: POST `body` to the method's login path; `secret` (JWT, secret id, password) is never shown in an error. */
async function postLogin(
  client: VaultRequester,
  operation: string,
  path: string,
  body: Record<string, unknown>,
  secret?: string,
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
  switch (creds.method) {
    case 'kubernetes':
      parts.push(trimMount(creds.mount), creds.role, creds.subject);
      break;
    case 'jwt':
      parts.push(trimMount(creds.mount), creds.role ?? '', creds.subject);
      break;
    case 'appRole':
      parts.push(trimMount(creds.mount), creds.roleId, creds.subject);
      break;
    case 'token':
      parts.push(creds.subject);
      break;
    case 'userPass':
    case 'ldap':
      parts.push(trimMount(creds.mount), creds.username, creds.subject);
      break;
    case 'cert':
      parts.push(trimMount(creds.mount), creds.role ?? '', creds.subject);
      break;
  }
  return parts.map((p) => encodeURIComponent(p)).join('|');
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
