import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  createKvApi,
  createSysApi,
  TokenCache,
  type KubernetesCredentials,
  type TokenCacheEvent,
  type VaultError,
} from '../../vault/index.ts';
import { eventWaiter, fakeClock, startHarness, type Harness } from './helpers.ts';

const MIN = 60_000;

async function withRole(h: Harness, opts: { ttl?: string; maxTtl?: string; policies?: string[] } = {}): Promise<void> {
  const sys = createSysApi(h.root);
  await sys.writePolicy('p-one', 'path "secret/data/team/one" { capabilities = ["read"] }');
  await sys.writePolicy('p-two', 'path "secret/data/team/two" { capabilities = ["read"] }');
  await sys.writeKubernetesRole('kubernetes', 'app', {
    bound_service_account_names: ['app'],
    bound_service_account_namespaces: ['team'],
    token_policies: opts.policies ?? ['p-one'],
    token_ttl: opts.ttl ?? '1h',
    ...(opts.maxTtl ? { token_max_ttl: opts.maxTtl } : {}),
  });
  const kv = createKvApi(h.root, { mount: 'secret', version: 2 });
  await kv.write('team/one', { v: 'one' });
  await kv.write('team/two', { v: 'two' });
}

function creds(h: Harness, counter?: { n: number }): KubernetesCredentials {
  return {
    method: 'kubernetes',
    mount: 'kubernetes',
    role: 'app',
    subject: 'team/app',
    jwt: () => {
      if (counter) counter.n++;
      return Promise.resolve(h.sim.jwtFor('team', 'app'));
    },
  };
}

void describe('TokenCache', () => {
  void test('50 concurrent callers share one login; 100 later requests add none', async () => {
    const h = await startHarness();
    const cache = new TokenCache();
    try {
      await withRole(h);
      const jwtCalls = { n: 0 };
      const kv = createKvApi(cache.session(h.client, creds(h, jwtCalls)), { mount: 'secret', version: 2 });
      const results = await Promise.all(Array.from({ length: 50 }, () => kv.read('team/one')));
      assert.ok(results.every((r) => r?.data.v === 'one'));
      assert.equal(h.sim.loginCount(), 1);
      assert.equal(jwtCalls.n, 1);
      for (let i = 0; i < 100; i++) await kv.read('team/one');
      assert.equal(h.sim.loginCount(), 1, 'never a login per request');
      assert.equal(h.sim.liveTokens, 1, 'one lease per identity');
      // A new session object for the same identity reuses the token too.
      await createKvApi(cache.session(h.client, creds(h)), { mount: 'secret', version: 2 }).read('team/one');
      assert.equal(h.sim.loginCount(), 1);
    } finally {
      await cache.close();
      await h.close();
    }
  });

  void test('renews at 2/3 of the TTL in the background, and logs in again when the max TTL nears', async () => {
    const clock = fakeClock();
    const events = eventWaiter<TokenCacheEvent>();
    const h = await startHarness({ now: clock.now });
    const cache = new TokenCache({ now: clock.now, onEvent: (e) => events.push(e) });
    try {
      await withRole(h, { ttl: '1h', maxTtl: '80m' });
      const session = cache.session(h.client, creds(h));
      const kv = createKvApi(session, { mount: 'secret', version: 2 });
      await kv.read('team/one');
      const firstToken = await session.token();

      clock.advance(41 * MIN); // past 2/3 of 1h
      const renewed = events.next((e) => e.type === 'renewed');
      await kv.read('team/one'); // served with the current token while renewal runs
      assert.equal((await renewed).ttlSeconds, 39 * 60, 'renewal is capped by max TTL (80m - 41m)');
      assert.equal(h.sim.count('write', 'auth/token/renew-self'), 1);
      assert.equal(await session.token(), firstToken, 'renewal keeps the token');

      clock.advance(27 * MIN); // 68m: a renewal could grant only 12m < 1/3 of 1h → fresh login
      const relogin = events.next((e) => e.type === 'login');
      await kv.read('team/one');
      await relogin;
      assert.equal(h.sim.loginCount(), 2);
      assert.notEqual(await session.token(), firstToken);
      await events.next((e) => e.type === 'revoked'); // the replaced token's lease is released
    } finally {
      await cache.close();
      await h.close();
    }
  });

  void test('ownToken: one lookup-self per login, its end kept by renewals, asked again after a new login', async () => {
    const clock = fakeClock();
    const events = eventWaiter<TokenCacheEvent>();
    const h = await startHarness({ now: clock.now });
    const cache = new TokenCache({ now: clock.now, onEvent: (e) => events.push(e) });
    try {
      await withRole(h, { ttl: '1h', maxTtl: '80m' });
      const session = cache.session(h.client, creds(h));
      const first = await session.ownToken();
      assert.equal(first.expireTime, clock.now() + 60 * MIN, "Vault's end while the token is as it logged in");
      assert.equal(first.periodic, false);
      assert.ok(first.accessor);
      for (let i = 0; i < 20; i++) assert.deepEqual(await session.ownToken(), first);
      assert.equal(h.sim.count('read', 'auth/token/lookup-self'), 1, 'one lookup for 21 calls on one token');

      clock.advance(41 * MIN);
      const renewed = events.next((e) => e.type === 'renewed');
      await session.ownToken(); // the call that finds the renewal due; answered before it completes
      await renewed;
      const after = await session.ownToken();
      assert.equal(after.accessor, first.accessor);
      assert.equal(after.expireTime, clock.now() + 39 * 60_000, 'the renewal (capped at the max TTL) moved the end');
      assert.equal(h.sim.count('read', 'auth/token/lookup-self'), 1, 'a renewal keeps the token: no new lookup');

      clock.advance(27 * MIN); // a fresh login (see the test above)
      const relogin = events.next((e) => e.type === 'login');
      await session.token();
      await relogin;
      const next = await session.ownToken();
      assert.notEqual(next.accessor, first.accessor, 'the new token is described, not the replaced one');
      assert.equal(h.sim.count('read', 'auth/token/lookup-self'), 2);
    } finally {
      await cache.close();
      await h.close();
    }
  });

  void test('a failed renewal falls back to a new login', async () => {
    const clock = fakeClock();
    const events = eventWaiter<TokenCacheEvent>();
    const h = await startHarness({ now: clock.now });
    const cache = new TokenCache({ now: clock.now, onEvent: (e) => events.push(e) });
    try {
      await withRole(h);
      const kv = createKvApi(cache.session(h.client, creds(h)), { mount: 'secret', version: 2 });
      await kv.read('team/one');
      h.sim.inject({ path: 'auth/token/renew-self', status: 500, errors: ['storage unavailable'], times: 1 });
      clock.advance(45 * MIN);
      const failed = events.next((e) => e.type === 'renew_failed');
      const relogin = events.next((e) => e.type === 'login');
      await kv.read('team/one');
      await failed;
      await relogin;
      assert.equal(h.sim.loginCount(), 2);
    } finally {
      await cache.close();
      await h.close();
    }
  });

  void test('an expired token is replaced by a login before use (no 403 round trip)', async () => {
    const clock = fakeClock();
    const h = await startHarness({ now: clock.now });
    const cache = new TokenCache({ now: clock.now });
    try {
      await withRole(h, { ttl: '10m' });
      const kv = createKvApi(cache.session(h.client, creds(h)), { mount: 'secret', version: 2 });
      await kv.read('team/one');
      clock.advance(11 * MIN);
      assert.equal((await kv.read('team/one'))?.data.v, 'one');
      assert.equal(h.sim.loginCount(), 2);
      assert.equal(h.sim.count('read', 'secret/data/team/one'), 2, 'no failed read with the expired token');
    } finally {
      await cache.close();
      await h.close();
    }
  });

  void test('403 after the role gained a policy → one re-login and the read succeeds; a really forbidden path does not loop', async () => {
    const h = await startHarness();
    const cache = new TokenCache({ forbiddenReloginIntervalMs: 30_000 });
    try {
      await withRole(h, { policies: ['p-one'] });
      const kv = createKvApi(cache.session(h.client, creds(h)), { mount: 'secret', version: 2 });
      assert.equal((await kv.read('team/one'))?.data.v, 'one');
      await createSysApi(h.root).writeKubernetesRole('kubernetes', 'app', {
        bound_service_account_names: ['app'],
        bound_service_account_namespaces: ['team'],
        token_policies: ['p-one', 'p-two'],
        token_ttl: '1h',
      });
      // 20 concurrent readers hit the stale token; they share one re-login.
      const reads = await Promise.all(Array.from({ length: 20 }, () => kv.read('team/two')));
      assert.ok(reads.every((r) => r?.data.v === 'two'));
      assert.equal(h.sim.loginCount(), 2);

      await assert.rejects(kv.read('team/three'), (e: unknown) => (e as VaultError).kind === 'forbidden');
      await assert.rejects(kv.read('team/three'), (e: unknown) => (e as VaultError).kind === 'forbidden');
      assert.equal(h.sim.loginCount(), 2, 'no re-login within forbiddenReloginIntervalMs');
    } finally {
      await cache.close();
      await h.close();
    }
  });

  void test('roleChanged: a role vaultgate just rewrote is used with a fresh token at once, the stale one revoked', async () => {
    const events = eventWaiter<TokenCacheEvent>();
    const h = await startHarness();
    const cache = new TokenCache({ forbiddenReloginIntervalMs: 30_000, onEvent: (e) => events.push(e) });
    try {
      await withRole(h, { policies: ['p-one'] });
      const kv = createKvApi(cache.session(h.client, creds(h)), { mount: 'secret', version: 2 });
      // Applied in one batch, the store's ExternalSecret reads before the role grants the path: 403 (and
      // the one re-login this 403 allows finds the role unchanged).
      await assert.rejects(kv.read('team/two'), (e: unknown) => (e as VaultError).kind === 'forbidden');
      assert.equal(h.sim.loginCount(), 2);
      await createSysApi(h.root).writeKubernetesRole('kubernetes', 'app', {
        bound_service_account_names: ['app'],
        bound_service_account_namespaces: ['team'],
        token_policies: ['p-one', 'p-two'],
        token_ttl: '1h',
      });
      await assert.rejects(
        kv.read('team/two'),
        (e: unknown) => (e as VaultError).kind === 'forbidden',
        'without the notice the stale token is kept for 30 s',
      );
      cache.roleChanged('kubernetes', 'another-role');
      await assert.rejects(
        kv.read('team/two'),
        (e: unknown) => (e as VaultError).kind === 'forbidden',
        'another role changed: this token is kept',
      );
      assert.equal(h.sim.loginCount(), 2);
      cache.roleChanged('/kubernetes/', 'app');
      const revoked = events.next((e) => e.type === 'revoked');
      assert.equal((await kv.read('team/two'))?.data.v, 'two');
      assert.equal(h.sim.loginCount(), 3);
      await revoked;
      assert.equal(h.sim.liveTokens, 1, 'the stale token is revoked');
    } finally {
      await cache.close();
      await h.close();
    }
  });

  void test('LRU eviction revokes the evicted login token; close() revokes the rest', async () => {
    const events = eventWaiter<TokenCacheEvent>();
    const h = await startHarness();
    const cache = new TokenCache({ maxEntries: 1, onEvent: (e) => events.push(e) });
    try {
      await withRole(h);
      await createSysApi(h.root).writeKubernetesRole('kubernetes', 'other', {
        bound_service_account_names: ['other'],
        bound_service_account_namespaces: ['team'],
        token_policies: ['default'],
      });
      await cache.session(h.client, creds(h)).token();
      assert.equal(h.sim.liveTokens, 1);
      const revoked = events.next((e) => e.type === 'revoked' && e.identity.includes('app'));
      await cache
        .session(h.client, {
          method: 'kubernetes',
          mount: 'kubernetes',
          role: 'other',
          subject: 'team/other',
          jwt: () => Promise.resolve(h.sim.jwtFor('team', 'other')),
        })
        .token();
      await revoked;
      assert.equal(cache.size, 1);
      assert.equal(h.sim.liveTokens, 1);
      await cache.close({ revoke: true });
      assert.equal(h.sim.liveTokens, 0);
    } finally {
      await h.close();
    }
  });

  void test('a static token (tokenSecretRef) is looked up, used, and never revoked', async () => {
    const h = await startHarness();
    const cache = new TokenCache();
    try {
      await withRole(h);
      const token = h.sim.createToken(['p-one'], { ttlSeconds: 3600 });
      const session = cache.session(h.client, {
        method: 'token',
        subject: 'secret team/vault-token#token',
        token: () => Promise.resolve(token),
      });
      assert.equal((await createKvApi(session, { mount: 'secret', version: 2 }).read('team/one'))?.data.v, 'one');
      assert.ok(session.policies().includes('p-one'));
      await cache.close({ revoke: true });
      assert.equal(h.sim.count('write', 'auth/token/revoke-self'), 0);
      assert.equal(h.sim.liveTokens, 1);
    } finally {
      await h.close();
    }
  });

  void test('appRole and jwt logins work through the same cache', async () => {
    const h = await startHarness();
    const cache = new TokenCache();
    try {
      await withRole(h);
      await h.root.request({ operation: 't', method: 'POST', path: 'sys/auth/approle', body: { type: 'approle' } });
      await h.root.request({
        operation: 't',
        method: 'POST',
        path: 'auth/approle/role/ci',
        body: { token_policies: ['p-one'] },
      });
      const roleId =
        (
          await h.root.request<{ data: { role_id: string } }>({
            operation: 't',
            method: 'GET',
            path: 'auth/approle/role/ci/role-id',
          })
        )?.data.role_id ?? '';
      const secretId =
        (
          await h.root.request<{ data: { secret_id: string } }>({
            operation: 't',
            method: 'POST',
            path: 'auth/approle/role/ci/secret-id',
          })
        )?.data.secret_id ?? '';
      const viaAppRole = cache.session(h.client, {
        method: 'appRole',
        mount: 'approle',
        roleId,
        subject: 'secret ci/approle',
        secretId: () => Promise.resolve(secretId),
      });
      assert.equal((await createKvApi(viaAppRole, { mount: 'secret', version: 2 }).read('team/one'))?.data.v, 'one');

      await h.root.request({ operation: 't', method: 'POST', path: 'sys/auth/jwt', body: { type: 'jwt' } });
      await h.root.request({
        operation: 't',
        method: 'POST',
        path: 'auth/jwt/role/ext',
        body: { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['vault'], token_policies: ['p-two'] },
      });
      const jwt = h.sim.jwt.sign({ sub: 'ci', aud: ['vault'], exp: Math.floor(Date.now() / 1000) + 600 });
      const viaJwt = cache.session(h.client, {
        method: 'jwt',
        mount: 'jwt',
        role: 'ext',
        subject: 'ci',
        jwt: () => Promise.resolve(jwt),
      });
      assert.equal((await createKvApi(viaJwt, { mount: 'secret', version: 2 }).read('team/two'))?.data.v, 'two');
      assert.equal(h.sim.loginCount('approle'), 1);
      assert.equal(h.sim.loginCount('jwt'), 1);
    } finally {
      await cache.close();
      await h.close();
    }
  });

  void test('a login refused by Vault surfaces as forbidden and is not cached', async () => {
    const h = await startHarness();
    const cache = new TokenCache();
    try {
      await withRole(h);
      const wrongNs: KubernetesCredentials = {
        method: 'kubernetes',
        mount: 'kubernetes',
        role: 'app',
        subject: 'other/app',
        jwt: () => Promise.resolve(h.sim.jwtFor('other', 'app')),
      };
      const kv = createKvApi(cache.session(h.client, wrongNs), { mount: 'secret', version: 2 });
      await assert.rejects(
        kv.read('team/one'),
        (e: unknown) => (e as VaultError).kind === 'forbidden' && /namespace not authorized/.test((e as Error).message),
      );
      await assert.rejects(kv.read('team/one'));
      assert.equal(h.sim.loginCount(), 2, 'each attempt logs in again (no token was obtained)');
    } finally {
      await cache.close();
      await h.close();
    }
  });
});
