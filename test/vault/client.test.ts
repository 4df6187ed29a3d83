import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Registry } from 'prom-client';
import {
  createKvApi,
  createSysApi,
  createVaultClient,
  createVaultMetrics,
  login,
  RequestLimiter,
  VaultClientPool,
  type VaultError,
} from '../../vault/index.ts';
import { debugEnablesNodeVault } from '../../vault/client.ts';
import { startHarness, fakeClock } from './helpers.ts';

const kindIs =
  (kind: string) =>
  (e: unknown): boolean =>
    (e as VaultError).kind === kind;

void describe('Vault client', () => {
  void test('kubernetes login goes to the explicit mount (node-vault#300 would post to auth//login)', async () => {
    const h = await startHarness({ kubernetesMount: 'k8s-prod' });
    try {
      await createSysApi(h.root).writeKubernetesRole('k8s-prod', 'r', {
        bound_service_account_names: ['app'],
        bound_service_account_namespaces: ['a'],
        token_policies: ['default'],
      });
      const info = await login(h.client, {
        method: 'kubernetes',
        mount: '/k8s-prod/',
        role: 'r',
        subject: 'a/app',
        jwt: () => Promise.resolve(h.sim.jwtFor('a', 'app')),
      });
      assert.ok(info.token.length > 0);
      assert.ok(info.ttlSeconds > 0);
      assert.deepEqual(info.policies, ['default']);
      assert.equal(h.sim.count('login', 'auth/k8s-prod/login'), 1);
      assert.equal(h.sim.count('login', 'auth//'), 0);
    } finally {
      await h.close();
    }
  });

  void test(
    'a hanging Vault gives `unavailable` at the timeout instead of hanging the caller',
    { timeout: 10_000 },
    async () => {
      const h = await startHarness({}, { timeoutMs: 200 });
      try {
        h.sim.inject({ path: 'secret/data/slow/*', hang: true });
        const kv = createKvApi(h.root, { mount: 'secret', version: 2 });
        await assert.rejects(
          kv.read('slow/x'),
          (e: unknown) => kindIs('unavailable')(e) && /200ms|ECONNABORTED|ETIMEDOUT/.test((e as Error).message),
        );
        // Other paths still work on the same client.
        assert.equal(await kv.read('fast/x'), undefined);
      } finally {
        await h.close();
      }
    },
  );

  void test('sealed → sealed, 429 → rate_limited, 5xx → unavailable, 400 → invalid, 403 → forbidden', async () => {
    const h = await startHarness();
    try {
      const sys = createSysApi(h.root);
      h.sim.seal();
      await assert.rejects(sys.readPolicy('default'), kindIs('sealed'));
      h.sim.unseal();
      h.sim.rateLimited = true;
      await assert.rejects(
        sys.readPolicy('default'),
        (e: unknown) => kindIs('rate_limited')(e) && (e as VaultError).status === 429 && (e as VaultError).retryable,
      );
      h.sim.rateLimited = false;
      h.sim.inject({ path: 'sys/policies/acl/default', status: 500, errors: ['internal error'], times: 1 });
      await assert.rejects(sys.readPolicy('default'), kindIs('unavailable'));
      await assert.rejects(
        sys.writePolicy('bad', 'path "x" { capabilities = ['),
        (e: unknown) => kindIs('invalid')(e) && !(e as VaultError).retryable,
      );
      const denied = createSysApi({ request: (req) => h.client.request({ ...req, token: 'hvs.bogus' }) });
      await assert.rejects(
        denied.readPolicy('default'),
        (e: unknown) => kindIs('forbidden')(e) && (e as Error).message === 'sys.policy.read: permission denied',
      );
      assert.ok((await sys.readPolicy('default'))?.includes('lookup-self'));
    } finally {
      await h.close();
    }
  });

  void test('connection refused → unavailable', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const client = createVaultClient({ address: `http://127.0.0.1:${port}`, timeoutMs: 2_000 });
    try {
      await assert.rejects(
        client.request({ operation: 'sys.health', method: 'GET', path: 'sys/policies/acl/x', token: 't' }),
        (e: unknown) => kindIs('unavailable')(e) && /ECONNREFUSED/.test((e as Error).message),
      );
    } finally {
      client.close();
    }
  });

  void test('an auth mount that is not enabled is a real not_found error, not an absent role', async () => {
    const h = await startHarness();
    try {
      await assert.rejects(createSysApi(h.root).readKubernetesRole('nope', 'r'), kindIs('not_found'));
      assert.equal(await createSysApi(h.root).readKubernetesRole('kubernetes', 'absent'), undefined);
    } finally {
      await h.close();
    }
  });

  void test('sends the Enterprise namespace header; ignores VAULT_TOKEN / VAULT_NAMESPACE from the environment', async () => {
    const saved = { token: process.env.VAULT_TOKEN, ns: process.env.VAULT_NAMESPACE };
    const h = await startHarness();
    process.env.VAULT_TOKEN = h.sim.rootToken;
    process.env.VAULT_NAMESPACE = 'from-env';
    try {
      const withNs = createVaultClient({ address: h.sim.addr, timeoutMs: 2_000, namespace: 'team-a' });
      const plain = createVaultClient({ address: h.sim.addr, timeoutMs: 2_000 });
      try {
        await withNs.request({
          operation: 'sys.policy.read',
          method: 'GET',
          path: 'sys/policies/acl/default',
          token: h.sim.rootToken,
        });
        assert.ok(h.sim.namespacesSeen.has('team-a'));
        // No token given: the environment's root token must not be used.
        await assert.rejects(
          plain.request({ operation: 'sys.policy.read', method: 'GET', path: 'sys/policies/acl/default' }),
          kindIs('forbidden'),
        );
        assert.ok(!h.sim.namespacesSeen.has('from-env'));
      } finally {
        withNs.close();
        plain.close();
      }
    } finally {
      if (saved.token === undefined) delete process.env.VAULT_TOKEN;
      else process.env.VAULT_TOKEN = saved.token;
      if (saved.ns === undefined) delete process.env.VAULT_NAMESPACE;
      else process.env.VAULT_NAMESPACE = saved.ns;
      await h.close();
    }
  });

  void test('requires a timeout', () => {
    assert.throws(() => createVaultClient({ address: 'http://127.0.0.1:1', timeoutMs: 0 }), /timeoutMs is required/);
  });

  void test('metrics: vault_requests_total by operation and outcome (error kind)', async () => {
    const registry = new Registry();
    const h = await startHarness({}, { metrics: createVaultMetrics(registry) });
    try {
      const kv = createKvApi(h.root, { mount: 'secret', version: 2 });
      await kv.write('m/x', { a: 'b' });
      await kv.read('m/x');
      await kv.read('m/absent');
      h.sim.seal();
      await assert.rejects(kv.read('m/x'));
      h.sim.unseal();
      const text = await registry.metrics();
      assert.match(text, /vault_requests_total\{operation="kv.write",outcome="success"\} 1/);
      assert.match(text, /vault_requests_total\{operation="kv.read",outcome="success"\} 1/);
      assert.match(text, /vault_requests_total\{operation="kv.read",outcome="not_found"\} 1/);
      assert.match(text, /vault_requests_total\{operation="kv.read",outcome="sealed"\} 1/);
      assert.match(text, /vault_request_duration_seconds_count\{operation="kv.read"\} 3/);
      assert.doesNotMatch(text, /m\/x/, 'paths are never metric labels');
    } finally {
      await h.close();
    }
  });

  void test('DEBUG detection follows the debug package rules', () => {
    assert.equal(debugEnablesNodeVault(undefined), false);
    assert.equal(debugEnablesNodeVault('node-vault'), true);
    assert.equal(debugEnablesNodeVault('express:*,node-*'), true);
    assert.equal(debugEnablesNodeVault('*,-node-vault'), false);
    assert.equal(debugEnablesNodeVault('express:*'), false);
  });
});

void describe('RequestLimiter', () => {
  void test('never runs more than maxConcurrent at once and runs everything', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 3, ratePerSecond: Infinity });
    let active = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const runs = Array.from({ length: 10 }, (_, i) =>
      limiter.run(async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise<void>((resolve) => gates.push(resolve));
        active--;
        return i;
      }),
    );
    // Release whoever is waiting until all ten finished.
    const all = Promise.all(runs);
    let done = false;
    void all.then(() => {
      done = true;
    });
    while (!done) {
      await new Promise((r) => setImmediate(r));
      gates.splice(0).forEach((g) => g());
    }
    assert.deepEqual(await all, [...Array(10).keys()]);
    assert.equal(peak, 3);
  });

  void test('token bucket: beyond the burst, requests wait for the clock', async () => {
    const clock = fakeClock();
    const limiter = new RequestLimiter({ maxConcurrent: 10, ratePerSecond: 10, burst: 2, now: clock.now });
    const order: number[] = [];
    const runs = [0, 1, 2].map((i) =>
      limiter.run(() => {
        order.push(i);
        return Promise.resolve(i);
      }),
    );
    await Promise.all(runs.slice(0, 2));
    assert.deepEqual(order, [0, 1]);
    assert.equal(limiter.queued, 1, 'the third waits for a token');
    clock.advance(100); // one token at 10/s
    assert.equal(await runs[2], 2);
  });
});

void describe('VaultClientPool', () => {
  void test('one client per config, one limiter per address', () => {
    const pool = new VaultClientPool();
    try {
      const a = pool.get({ address: 'http://127.0.0.1:8200/', timeoutMs: 1000 });
      assert.equal(pool.get({ address: 'http://127.0.0.1:8200', timeoutMs: 1000 }), a);
      assert.notEqual(pool.get({ address: 'http://127.0.0.1:8200', timeoutMs: 1000, namespace: 'team' }), a);
      assert.notEqual(pool.get({ address: 'http://127.0.0.1:8200', timeoutMs: 1000, tls: { ca: 'pem' } }), a);
      assert.equal(pool.size, 3);
    } finally {
      pool.close();
    }
  });
});
