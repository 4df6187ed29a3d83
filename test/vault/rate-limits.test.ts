// Per-Vault-server request limits: one budget per server, whichever clients talk to it; the flags that
// set them; and the defaults, sized so an ordinary sync is not paced by them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { CONTROLLER_OPTIONS, controllerOptionsFrom } from '../../cli/commands/controller.ts';
import { silentLogger } from '../../observability/log.ts';
import { createVaultClient } from '../../vault/client.ts';
import { DEFAULT_VAULT_RATE_LIMIT } from '../../vault/limiter.ts';
import { parseRateLimit, parseServerRateLimit, VaultRateLimits } from '../../vault/rate-limits.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';
import { helmSkip, one, render } from '../chart/render.ts';

void describe('VaultRateLimits', () => {
  let server: Server;
  let addr = '';
  let inFlight = 0;
  let maxInFlight = 0;
  before(async () => {
    server = createServer((_req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.setHeader('content-type', 'application/json');
        res.end('{"data":{}}');
      }, 30);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    addr = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  void test('clients of one server share its in-flight limit (two stores, one budget)', async () => {
    const limits = new VaultRateLimits({ requestsPerSecond: 0, maxInFlight: 2 });
    const a = createVaultClient({ address: addr, timeoutMs: 5000, limiter: limits });
    const b = createVaultClient({ address: `${addr}/`, timeoutMs: 5000, namespace: 'team-b', limiter: limits });
    maxInFlight = 0;
    try {
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? a : b).request({ operation: 'kv.read', method: 'GET', path: 'secret/data/x' }),
        ),
      );
    } finally {
      a.close();
      b.close();
    }
    assert.equal(maxInFlight, 2, 'never more than 2 at the server, whichever client sent them');
  });

  void test('a server of its own gets its own limits; the others the defaults', () => {
    const limits = new VaultRateLimits(
      { requestsPerSecond: 500 },
      { 'https://VAULT-B:8200/': { requestsPerSecond: 20, burst: 5, maxInFlight: 4 } },
    );
    assert.deepEqual(limits.limitFor('https://vault-b:8200'), { requestsPerSecond: 20, burst: 5, maxInFlight: 4 });
    assert.deepEqual(limits.limitFor('https://vault-a:8200'), {
      requestsPerSecond: 500,
      burst: 500,
      maxInFlight: DEFAULT_VAULT_RATE_LIMIT.maxInFlight,
    });
    assert.equal(
      limits.limiterFor('https://vault-b:8200/'),
      limits.limiterFor('https://vault-b:8200'),
      'one limiter per server',
    );
    assert.notEqual(limits.limiterFor('https://vault-b:8200'), limits.limiterFor('https://vault-a:8200'));
  });

  void test('the default lets 1,000 requests go in one burst (a sync is not paced by it)', () => {
    const limits = new VaultRateLimits();
    assert.ok(limits.limitFor('http://v:8200').burst >= 1000);
  });
});

void describe('--vault-rate-limit and --vault-server-rate-limit', () => {
  const deps = { client: new FakeKubeClient(), log: silentLogger, env: { VAULT_TOKEN: 't' } };
  const parse = (args: string[]) =>
    controllerOptionsFrom(
      parseArgs({ args: ['--vault-addr=http://vault:8200', ...args], options: CONTROLLER_OPTIONS, strict: true })
        .values,
      deps,
    );

  void test('set the limits per server', () => {
    const o = parse([
      '--vault-rate-limit=300/600/8',
      '--vault-server-rate-limit=https://vault-b:8200=50',
      '--vault-server-rate-limit=http://vault-c:8200=0',
    ]);
    const limits = o.vault.rateLimits!;
    assert.deepEqual(limits.limitFor('http://vault:8200'), { requestsPerSecond: 300, burst: 600, maxInFlight: 8 });
    assert.deepEqual(limits.limitFor('https://vault-b:8200'), { requestsPerSecond: 50, burst: 50, maxInFlight: 8 });
    assert.equal(limits.limitFor('http://vault-c:8200').requestsPerSecond, 0, '0 = no rate limit');
    assert.deepEqual(parse([]).vault.rateLimits!.limitFor('http://vault:8200'), { ...DEFAULT_VAULT_RATE_LIMIT });
  });

  void test('a bad value is refused naming the flag and the expected form', () => {
    assert.throws(
      () => parse(['--vault-rate-limit=fast']),
      /--vault-rate-limit: "fast" is not <requests per second>\[\/<burst>\[\/<in flight>\]\]/,
    );
    assert.throws(
      () => parse(['--vault-rate-limit=10/0']),
      /--vault-rate-limit: the burst in "10\/0" must be at least 1/,
    );
    assert.throws(
      () => parse(['--vault-server-rate-limit=vault-b=10']),
      /--vault-server-rate-limit: "vault-b=10" is not <Vault address>=<limit>/,
    );
    assert.throws(() => parseRateLimit('1/2/3/4', '--x'), /--x/);
    assert.deepEqual(parseServerRateLimit('https://v:8200=7/9', '--x'), [
      'https://v:8200',
      { requestsPerSecond: 7, burst: 9 },
    ]);
  });
});

void describe("the chart's vault.rateLimit", { skip: helmSkip() }, () => {
  void test('becomes the controller flags, per server; a bad value fails the install naming the value', () => {
    const deployment = one(
      render({
        set: [
          'vault.rateLimit.requestsPerSecond=200',
          'vault.rateLimit.servers[0].address=https://vault-b:8200',
          'vault.rateLimit.servers[0].requestsPerSecond=20',
          'vault.rateLimit.servers[0].maxInFlight=4',
        ],
      }),
      'Deployment',
      '-controller',
    );
    const args = (deployment as { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } }).spec
      .template.spec.containers[0]!.args;
    const values = parseArgs({ args: args.slice(1), options: CONTROLLER_OPTIONS, strict: true }).values;
    const limits = controllerOptionsFrom(values, {
      client: new FakeKubeClient(),
      log: silentLogger,
      env: { VAULT_TOKEN: 't' },
    }).vault.rateLimits!;
    assert.deepEqual(limits.limitFor('https://vault.vault.svc:8200'), {
      requestsPerSecond: 200,
      burst: 1000,
      maxInFlight: 32,
    });
    assert.deepEqual(limits.limitFor('https://vault-b:8200'), { requestsPerSecond: 20, burst: 20, maxInFlight: 4 });
    assert.throws(() => render({ set: ['vault.rateLimit.maxInFlight=0'] }), /vault\/rateLimit\/maxInFlight/);
  });
});
