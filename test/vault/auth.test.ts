// Login, lookup, renew and revoke as Vault sees them: the path of each method at its mount (never a
// library default), the secret marked sensitive so no error repeats it, the auth block read into a token
// and its TTL, and a cache key that names the identity without a secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { identityKey, login, lookupSelf, renewSelf, revokeSelf, trimMount } from '../../vault/auth.ts';
import type { VaultCredentials, VaultRequest, VaultRequester } from '../../vault/types.ts';

const AUTH = {
  auth: { client_token: 'tok-1', accessor: 'acc-1', token_policies: ['p1', 7], lease_duration: 60, renewable: true },
};

function recorder(answer: unknown = AUTH): { vault: VaultRequester; reqs: VaultRequest[] } {
  const reqs: VaultRequest[] = [];
  return { reqs, vault: { request: <T>(r: VaultRequest) => (reqs.push(r), Promise.resolve(answer as T)) } };
}

test('each method logs in at its own mount, sending its secret marked sensitive', async () => {
  const secret = () => Promise.resolve('s3cret-canary');
  const cases: Array<[VaultCredentials, string, Record<string, unknown>]> = [
    [
      { method: 'kubernetes', mount: '/k8s-a/', role: 'r', subject: 'team-a/app', jwt: secret },
      'auth/k8s-a/login',
      { role: 'r', jwt: 's3cret-canary' },
    ],
    [{ method: 'jwt', mount: 'jwt', subject: 'team-a/app', jwt: secret }, 'auth/jwt/login', { jwt: 's3cret-canary' }],
    [
      { method: 'appRole', mount: 'approle', roleId: 'rid', subject: 's', secretId: secret },
      'auth/approle/login',
      { role_id: 'rid', secret_id: 's3cret-canary' },
    ],
    [
      { method: 'userPass', mount: 'userpass', username: 'alice', subject: 's', password: secret },
      'auth/userpass/login/alice',
      { password: 's3cret-canary' },
    ],
    [{ method: 'cert', mount: 'cert', role: 'web', subject: 's' }, 'auth/cert/login', { name: 'web' }],
  ];
  for (const [creds, path, body] of cases) {
    const { vault, reqs } = recorder();
    const info = await login(vault, creds);
    assert.equal(reqs[0]?.method, 'POST', creds.method);
    assert.equal(reqs[0]?.path, path, creds.method);
    assert.deepEqual(reqs[0]?.body, body, creds.method);
    if (creds.method !== 'cert') assert.deepEqual(reqs[0]?.sensitive, ['s3cret-canary'], creds.method);
    assert.deepEqual(info, { token: 'tok-1', accessor: 'acc-1', policies: ['p1'], ttlSeconds: 60, renewable: true });
  }
});

test('a token "login" is a lookup-self with that token', async () => {
  const { vault, reqs } = recorder({ data: { accessor: 'a', policies: ['default'], ttl: 30, renewable: false } });
  const info = await login(vault, { method: 'token', subject: 's', token: () => Promise.resolve('given') });
  assert.equal(reqs[0]?.path, 'auth/token/lookup-self');
  assert.equal(reqs[0]?.token, 'given');
  assert.deepEqual(info, { token: 'given', accessor: 'a', policies: ['default'], ttlSeconds: 30, renewable: false });
});

test('an answer without an auth block, or a lookup without data, is an error that names the call, not a value', async () => {
  await assert.rejects(
    login(recorder({}).vault, { method: 'jwt', mount: 'jwt', subject: 's', jwt: () => Promise.resolve('j') }),
    /auth\.login\.jwt: Vault answered without an auth block/,
  );
  await assert.rejects(lookupSelf(recorder({}).vault, 't'), /auth\.token\.lookup_self: Vault answered without data/);
});

test('renew-self asks for the increment in seconds and keeps the token when Vault omits it; revoke-self posts', async () => {
  const { vault, reqs } = recorder({ auth: { client_token: 'tok-1', lease_duration: 90, renewable: true } });
  const info = await renewSelf(vault, 'tok-1', 89.6);
  assert.deepEqual(reqs[0]?.body, { increment: '90s' });
  assert.equal(info.ttlSeconds, 90);
  await revokeSelf(vault, 'tok-1');
  assert.deepEqual([reqs[1]?.method, reqs[1]?.path, reqs[1]?.token], ['POST', 'auth/token/revoke-self', 'tok-1']);
});

test('identity key: server, namespace, method, mount, role and subject; never the secret', () => {
  const creds: VaultCredentials = {
    method: 'kubernetes',
    mount: '/kubernetes/',
    role: 'r',
    subject: 'team-a/app',
    jwt: () => Promise.resolve('jwt-canary'),
  };
  const key = identityKey({ address: 'https://vault:8200', namespace: 'ns1' }, creds);
  assert.equal(key, 'https%3A%2F%2Fvault%3A8200|ns1|kubernetes|kubernetes|r|team-a%2Fapp');
  assert.notEqual(
    key,
    identityKey({ address: 'https://vault:8200', namespace: 'ns1' }, { ...creds, subject: 'team-b/app' }),
  );
  assert.equal(trimMount('//a/b/'), 'a/b');
});

test('identity key of every method: its mount and whom it logs in as (role, role id, username); a token only its subject', () => {
  const server = { address: 'https://vault:8200', namespace: undefined };
  const secret = () => Promise.resolve('canary');
  const keys: Array<[VaultCredentials, string]> = [
    [{ method: 'jwt', mount: 'oidc', subject: 's', jwt: secret }, 'jwt|oidc||s'],
    [{ method: 'jwt', mount: 'oidc', role: 'r', subject: 's', jwt: secret }, 'jwt|oidc|r|s'],
    [{ method: 'appRole', mount: 'approle', roleId: 'id-1', subject: 's', secretId: secret }, 'appRole|approle|id-1|s'],
    [{ method: 'token', subject: 's', token: secret }, 'token|s'],
    [{ method: 'userPass', mount: 'up', username: 'u', subject: 's', password: secret }, 'userPass|up|u|s'],
    [{ method: 'ldap', mount: '/ldap/', username: 'u', subject: 's', password: secret }, 'ldap|ldap|u|s'],
    [{ method: 'cert', mount: 'cert', subject: 's' }, 'cert|cert||s'],
    [{ method: 'cert', mount: 'cert', role: 'web', subject: 's' }, 'cert|cert|web|s'],
  ];
  for (const [creds, want] of keys) assert.equal(identityKey(server, creds), `https%3A%2F%2Fvault%3A8200||${want}`);
});
