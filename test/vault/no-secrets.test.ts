import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { createLogger } from '../../observability/log.ts';
import { createKvApi, createSysApi, createVaultMetrics, TokenCache, type VaultError } from '../../vault/index.ts';
import { startHarness } from './helpers.ts';

/** A logger writing into an array of lines. */
function capture(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { lines, logger: createLogger({ level: 'debug', name: 'vault', destination }) };
}

void describe('no secret in logs, errors or metrics', () => {
  void test('login, KV write/read, and failing calls log no token, JWT or secret value', async () => {
    const { lines, logger } = capture();
    const registry = new Registry();
    const h = await startHarness({}, { logger, metrics: createVaultMetrics(registry, { esoCompatible: true }) });
    const cache = new TokenCache({ logger });
    const secretValue = 'hunter2-SUPER-secret-value';
    const errors: string[] = [];
    try {
      const sys = createSysApi(h.root);
      await sys.writePolicy('p', 'path "secret/data/app/*" { capabilities = ["read", "create", "update"] }');
      await sys.writeKubernetesRole('kubernetes', 'r', {
        bound_service_account_names: ['app'],
        bound_service_account_namespaces: ['a'],
        token_policies: ['p'],
      });
      const jwt = h.sim.jwtFor('a', 'app');
      const session = cache.session(h.client, {
        method: 'kubernetes',
        mount: 'kubernetes',
        role: 'r',
        subject: 'a/app',
        jwt: () => Promise.resolve(jwt),
      });
      const kv = createKvApi(session, { mount: 'secret', version: 2 });
      await kv.write('app/db', { password: secretValue });
      assert.equal((await kv.read('app/db'))?.data.password, secretValue);
      const token = await session.token();

      // Failing calls: CAS mismatch (400, body held the secret), 403, sealed, a refused login, a timeout.
      const fail = async (p: Promise<unknown>): Promise<void> => {
        await p.then(
          () => assert.fail('expected a failure'),
          (e: unknown) => {
            errors.push((e as Error).message, JSON.stringify(e), (e as Error).stack ?? '');
          },
        );
      };
      await fail(kv.write('app/db', { password: secretValue }, { cas: 7 }));
      await fail(kv.read('other/x')); // 403 → one re-login: a second token
      const token2 = await session.token();
      h.sim.inject({
        path: 'secret/data/app/db',
        status: 400,
        errors: [`bad value ${secretValue} for token ${token2}`],
        times: 1,
      });
      await fail(kv.write('app/db', { password: secretValue }));
      h.sim.seal();
      await fail(kv.read('app/db'));
      h.sim.unseal();
      const badLogin = cache.session(h.client, {
        method: 'kubernetes',
        mount: 'kubernetes',
        role: 'r',
        subject: 'b/app',
        jwt: () => Promise.resolve(h.sim.jwtFor('b', 'app')),
      });
      await fail(createKvApi(badLogin, { mount: 'secret', version: 2 }).read('app/db'));

      const scrubbed = errors.find((m) => m.includes('bad value'));
      assert.ok(scrubbed?.includes('[REDACTED]'), 'a Vault message quoting the written value or token is scrubbed');
      const everything = [...lines, ...errors, await registry.metrics()].join('\n');
      assert.ok(lines.length > 5, 'debug logging was on');
      for (const s of [secretValue, token, token2, jwt]) assert.ok(!everything.includes(s), `leaked ${s.slice(0, 6)}…`);
      assert.ok(everything.includes('vault request'), 'requests are logged (without secrets)');
    } finally {
      await cache.close();
      await h.close();
    }
  });

  void test('VaultError.toJSON carries only kind, status, operation and message', async () => {
    const h = await startHarness();
    try {
      const err = await createSysApi({ request: (req) => h.client.request({ ...req, token: 'hvs.very-secret-token' }) })
        .readPolicy('x')
        .catch((e: unknown) => e as VaultError);
      assert.deepEqual(Object.keys((err as VaultError).toJSON()).sort(), ['kind', 'message', 'operation', 'status']);
      assert.ok(!JSON.stringify(err).includes('very-secret-token'));
    } finally {
      await h.close();
    }
  });

  void test('DEBUG=node-vault does not print secrets (node-vault debug output is neutralised, with a warning)', () => {
    const fixture = fileURLToPath(new URL('./fixtures/debug-leak.ts', import.meta.url));
    const secret = 'debug-leak-canary-31337';
    const r = spawnSync(process.execPath, ['--import', 'tsx', fixture, secret], {
      env: { ...process.env, DEBUG: 'node-vault', DEBUG_COLORS: 'no', LOG_LEVEL: 'debug' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const check = /CHECK (\S+) (\S+)/.exec(r.stderr);
    assert.ok(check, 'the fixture reports its JWT and token on a CHECK line');
    const [, jwt = '', token = ''] = check;
    const output = `${r.stdout}\n${r.stderr.replace(check[0], '')}`;
    assert.match(r.stdout, /DEBUG enables node-vault/);
    for (const s of [secret, jwt, token]) assert.ok(!output.includes(s), `leaked ${s.slice(0, 8)}…`);
  });
});
