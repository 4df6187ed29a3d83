// The webhook's answer and its audit record: a client certificate required and verified when a client
// CA is configured (an unauthenticated call is refused before it is read and recorded nowhere; probes
// stay open), the caller recorded in every decision, and no decision answered before it is recorded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateAuditKey, mergeJwks, privateKeyPem } from '../../trail/keys.ts';
import { verifyAuditFiles } from '../../trail/verify.ts';
import { freePort } from '../harness/ports.ts';
import { createWebhookApp, UNRECORDED_MESSAGE, type Caller, type WebhookAppOptions } from '../../webhook/http-app.ts';
import { createWebhookMetrics } from '../../webhook/metrics.ts';
import { startWebhookServer, type WebhookServer } from '../../webhook/server.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import { silentLogger } from '../../observability/log.ts';
import { auditAdmission } from '../../trail/events.ts';
import { startMetricsServer } from '../../webhook/metrics-server.ts';
import { createCA, type CertAndKey, type CertificateAuthority } from '../harness/pki.ts';
import { selfSignedTls, type TestTls } from '../support/tls.ts';
import { policyCreateReview } from './policy-review.ts';

interface Reply {
  status: number;
  body: string;
  json: { error?: string; response?: { uid: string; allowed: boolean; status?: { message: string } } };
}

function request(
  url: string,
  path: string,
  opts: { ca: string; client?: CertAndKey; method?: string; body?: string },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url + path,
      {
        method: opts.method ?? 'POST',
        ca: opts.ca,
        agent: false,
        headers: { 'content-type': 'application/json' },
        ...(opts.client ? { cert: opts.client.certPem, key: opts.client.keyPem } : {}),
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          data += c;
        });
        res.on('end', () => {
          let json: Reply['json'] = {};
          try {
            json = JSON.parse(data) as Reply['json'];
          } catch {
            /* text */
          }
          resolve({ status: res.statusCode ?? 0, body: data, json });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const review = (uid: string): string => policyCreateReview(uid, { username: 'system:admin' });

interface Recorded {
  uid: string;
  caller: Caller;
}

async function serve(opts: Partial<WebhookAppOptions> & { clientCa?: string }, tls: TestTls): Promise<WebhookServer> {
  const { clientCa, ...app } = opts;
  return startWebhookServer(
    createWebhookApp({
      context: () => defaultContext(),
      logger: silentLogger,
      metrics: opts.metrics ?? createWebhookMetrics(undefined, { defaultMetrics: false }),
      ready: () => true,
      ...app,
    }),
    { host: '127.0.0.1', port: 0, tls, ...(clientCa ? { clientCa } : {}) },
  );
}

void describe('client certificate required (--client-ca-file)', () => {
  let tls: TestTls;
  let apiserverCa: CertificateAuthority;
  let apiserver: CertAndKey;
  let stranger: CertAndKey;
  let srv: WebhookServer;
  let otherSubject: CertAndKey;
  const metrics = createWebhookMetrics(undefined, { defaultMetrics: false });
  const recorded: Recorded[] = [];
  before(async () => {
    tls = await selfSignedTls('127.0.0.1');
    apiserverCa = await createCA('apiserver-webhook-client-ca');
    apiserver = await apiserverCa.issue({ commonName: 'kube-apiserver-webhook-client', usage: 'client' });
    stranger = await (
      await createCA('someone-else')
    ).issue({ commonName: 'kube-apiserver-webhook-client', usage: 'client' });
    // the same CA, another subject: e.g. a certificate the CA issued for a tenant's workload
    otherSubject = await apiserverCa.issue({
      commonName: 'system:kube-apiserver',
      organizations: ['system:masters'],
      usage: 'client',
    });
    srv = await serve(
      {
        metrics,
        requireClientCert: true,
        clientCa: apiserverCa.certPem,
        onDecision: (_w, req, _d, caller) => {
          recorded.push({ uid: req.uid, caller });
        },
      },
      tls,
    );
  });
  after(async () => {
    await srv.close();
  });

  void test("the apiserver's certificate is accepted and recorded as the authenticated caller", async () => {
    const r = await request(srv.url, '/validate', { ca: tls.ca, client: apiserver, body: review('with-cert') });
    assert.equal(r.status, 200);
    assert.equal(r.json.response?.uid, 'with-cert');
    const rec = recorded.find((x) => x.uid === 'with-cert');
    assert.equal(rec?.caller.authenticated, true);
    assert.equal(rec?.caller.subject, 'kube-apiserver-webhook-client');
    assert.equal(
      rec?.caller.vouchedBy,
      'verified client certificate CN=kube-apiserver-webhook-client (pinned subject)',
    );
    assert.match(rec?.caller.peer ?? '', /^127\.0\.0\.1:\d+$/);
  });

  void test('a certificate of the same CA with another subject is refused (401, naming the accepted subject) and recorded nowhere', async () => {
    for (const path of ['/validate', '/mutate']) {
      const r = await request(srv.url, path, {
        ca: tls.ca,
        client: otherSubject,
        body: review(`other-subject${path}`),
      });
      assert.equal(r.status, 401);
      assert.match(
        r.json.error ?? '',
        /subject is not one this webhook accepts \(accepted: CN=kube-apiserver-webhook-client; see --client-subject\)/,
      );
      assert.equal(r.json.response, undefined);
    }
    assert.deepEqual(
      recorded.filter((x) => x.uid.startsWith('other-subject')),
      [],
    );
  });

  void test('a POST without a certificate is refused with 401 and recorded nowhere', async () => {
    for (const path of ['/validate', '/mutate']) {
      const r = await request(srv.url, path, { ca: tls.ca, body: review(`no-cert${path}`) });
      assert.equal(r.status, 401);
      assert.match(r.json.error ?? '', /client certificate/);
      assert.equal(r.json.response, undefined, 'no AdmissionReview answer');
    }
    assert.deepEqual(
      recorded.filter((x) => x.uid.startsWith('no-cert')),
      [],
    );
  });

  void test('a certificate from another CA (same CN) is refused and recorded nowhere', async () => {
    const r = await request(srv.url, '/validate', { ca: tls.ca, client: stranger, body: review('stranger') });
    assert.equal(r.status, 401);
    assert.deepEqual(
      recorded.filter((x) => x.uid === 'stranger'),
      [],
    );
  });

  void test('health probes need no certificate (the kubelet presents none); /metrics is not on this port', async () => {
    assert.equal((await request(srv.url, '/healthz', { ca: tls.ca, method: 'GET' })).status, 200);
    assert.equal((await request(srv.url, '/readyz', { ca: tls.ca, method: 'GET' })).status, 200);
    assert.equal((await request(srv.url, '/metrics', { ca: tls.ca, method: 'GET' })).status, 404);
    assert.match(
      await metrics.registry.metrics(),
      /vaultgate_admission_requests_total\{webhook="validate",kind="unknown",operation="unknown",decision="unauthenticated"\} [1-9]/,
    );
  });

  void test('a rotated serving certificate keeps requiring client certificates', async () => {
    const next = await selfSignedTls('127.0.0.1');
    srv.updateCertificate(next);
    assert.equal((await request(srv.url, '/validate', { ca: next.ca, body: review('rot-none') })).status, 401);
    assert.equal(
      (await request(srv.url, '/validate', { ca: next.ca, client: apiserver, body: review('rot-ok') })).status,
      200,
    );
    srv.updateCertificate(tls);
  });
});

void describe('client subjects pinned with --client-subject', () => {
  void test('only the configured subjects are accepted: the default one is then refused too', async () => {
    const tls = await selfSignedTls('127.0.0.1');
    const ca = await createCA('managed-apiserver-client-ca');
    const ours = await ca.issue({ commonName: 'apiserver-webhooks', usage: 'client' });
    const usual = await ca.issue({ commonName: 'kube-apiserver-webhook-client', usage: 'client' });
    const recorded: Recorded[] = [];
    const srv = await serve(
      {
        requireClientCert: true,
        clientCa: ca.certPem,
        clientSubjects: ['apiserver-webhooks'],
        onDecision: (_w, req, _d, caller) => {
          recorded.push({ uid: req.uid, caller });
        },
      },
      tls,
    );
    try {
      assert.equal(
        (await request(srv.url, '/validate', { ca: tls.ca, client: ours, body: review('pinned') })).status,
        200,
      );
      const refused = await request(srv.url, '/validate', { ca: tls.ca, client: usual, body: review('unpinned') });
      assert.equal(refused.status, 401);
      assert.match(refused.json.error ?? '', /accepted: CN=apiserver-webhooks/);
      assert.deepEqual(
        recorded.map((r) => [r.uid, r.caller.vouchedBy]),
        [['pinned', 'verified client certificate CN=apiserver-webhooks (pinned subject)']],
      );
    } finally {
      await srv.close();
    }
  });
});

void describe('a review the core cannot decide is a 400 naming the field (issue #21 item 9)', () => {
  const envelope = (request: Record<string, unknown>): string =>
    JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
  const full = JSON.parse(review('x')) as { request: Record<string, unknown> };
  const without = (field: string): Record<string, unknown> => {
    const r: Record<string, unknown> = { ...full.request, uid: `no-${field}` };
    delete r[field];
    return r;
  };

  for (const [field, pattern] of [
    ['kind', /request\.kind must be an object with string group, version and kind/],
    ['operation', /request\.operation must be a non-empty string/],
    ['userInfo', /request\.userInfo must be an object/],
  ] as const) {
    void test(`without request.${field}: HTTP 400 naming request.${field}, not a 500 "could not record"; nothing recorded`, async () => {
      const tls = await selfSignedTls('127.0.0.1');
      const recorded: string[] = [];
      // as webhook/main.ts wires the trail: the record is built from the request
      const srv = await serve(
        {
          onDecision: (_w, req, d, caller) => {
            recorded.push(JSON.stringify(auditAdmission(d, req, { caller })));
          },
        },
        tls,
      );
      try {
        for (const path of ['/validate', '/mutate']) {
          const r = await request(srv.url, path, { ca: tls.ca, body: envelope(without(field)) });
          assert.equal(r.status, 400, r.body);
          assert.match(r.json.error ?? '', pattern);
          assert.ok(!r.body.includes(UNRECORDED_MESSAGE));
        }
        assert.deepEqual(recorded, []);
      } finally {
        await srv.close();
      }
    });
  }
});

void describe('/metrics on its own port (webhook/metrics-server.ts)', () => {
  void test('GET /metrics answers there; nothing else does (no AdmissionReview is taken on it)', async () => {
    const metrics = createWebhookMetrics(undefined, { defaultMetrics: false });
    metrics.requests.inc({ webhook: 'validate', kind: 'VaultPolicy', operation: 'CREATE', decision: 'allowed' });
    const m = await startMetricsServer(metrics.registry, { host: '127.0.0.1', port: 0 });
    try {
      const ok = await fetch(`http://127.0.0.1:${m.port}/metrics`);
      assert.equal(ok.status, 200);
      assert.match(
        await ok.text(),
        /vaultgate_admission_requests_total\{webhook="validate",kind="VaultPolicy",operation="CREATE",decision="allowed"\} 1/,
      );
      for (const [path, method] of [
        ['/validate', 'POST'],
        ['/mutate', 'POST'],
        ['/metrics', 'POST'],
        ['/healthz', 'GET'],
      ] as const) {
        const r = await fetch(`http://127.0.0.1:${m.port}${path}`, {
          method,
          ...(method === 'POST' ? { body: review('on-metrics-port') } : {}),
        });
        assert.equal(r.status, 404, `${method} ${path}`);
      }
    } finally {
      await m.close();
    }
  });
});

void describe('without client authentication', () => {
  let tls: TestTls;
  before(async () => {
    tls = await selfSignedTls('127.0.0.1');
  });

  void test('every decision records the caller as unauthenticated, with its TLS peer', async () => {
    const recorded: Recorded[] = [];
    const srv = await serve(
      {
        onDecision: (_w, req, _d, caller) => {
          recorded.push({ uid: req.uid, caller });
        },
      },
      tls,
    );
    try {
      const r = await request(srv.url, '/mutate', { ca: tls.ca, body: review('anon') });
      assert.equal(r.status, 200);
      assert.equal(recorded.length, 1);
      assert.equal(recorded[0]?.caller.authenticated, false);
      assert.equal(recorded[0]?.caller.subject, undefined);
      assert.match(recorded[0]?.caller.peer ?? '', /^127\.0\.0\.1:\d+$/);
    } finally {
      await srv.close();
    }
  });

  void test('the answer is sent only after the record is written', async () => {
    const events: string[] = [];
    let release: () => void = () => undefined;
    const srv = await serve(
      {
        onDecision: () => {
          events.push('decided');
          return new Promise<void>((r) => {
            release = () => {
              events.push('recorded');
              r();
            };
          });
        },
      },
      tls,
    );
    try {
      const answer = request(srv.url, '/validate', { ca: tls.ca, body: review('ordered') }).then((r) => {
        events.push('answered');
        return r;
      });
      while (!events.includes('decided')) await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(events, ['decided'], 'no answer while the record is not written');
      release();
      const r = await answer;
      assert.equal(r.json.response?.allowed, true);
      assert.deepEqual(events, ['decided', 'recorded', 'answered']);
    } finally {
      await srv.close();
    }
  });

  void test('a decision that cannot be recorded is not answered as made: a denial says why', async () => {
    const metrics = createWebhookMetrics(undefined, { defaultMetrics: false });
    const srv = await serve({ metrics, onDecision: () => Promise.reject(new Error('disk full')) }, tls);
    try {
      const r = await request(srv.url, '/validate', { ca: tls.ca, body: review('unrecorded') });
      assert.equal(r.status, 200);
      assert.equal(r.json.response?.uid, 'unrecorded');
      assert.equal(r.json.response?.allowed, false);
      assert.equal(r.json.response?.status?.message, UNRECORDED_MESSAGE);
      assert.match(await metrics.registry.metrics(), /vaultgate_admission_unrecorded_total\{webhook="validate"\} 1/);
    } finally {
      await srv.close();
    }
  });
});

void describe('the webhook process: a SIGKILL loses no answered decision', () => {
  void test(
    'every answered review is in the audit file, hash-chained and covered by a signed checkpoint, when the process is killed right after the answers',
    { timeout: 60_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'vaultgate-kill-'));
      const tls = await selfSignedTls('127.0.0.1');
      const key = await generateAuditKey();
      writeFileSync(join(dir, 'tls.crt'), tls.cert);
      writeFileSync(join(dir, 'tls.key'), tls.key);
      writeFileSync(join(dir, 'audit.pem'), privateKeyPem(key), { mode: 0o600 });
      const port = await freePort();
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'cli/main.ts',
          'webhook',
          '--no-kube',
          '--host=127.0.0.1',
          `--port=${port}`,
          `--tls-cert-file=${join(dir, 'tls.crt')}`,
          `--tls-key-file=${join(dir, 'tls.key')}`,
          `--audit-key-file=${join(dir, 'audit.pem')}`,
          `--audit-file=${join(dir, 'audit.log')}`,
          '--replica=webhook-0',
          '--log-level=error',
        ],
        { cwd: new URL('../..', import.meta.url).pathname, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      const url = `https://127.0.0.1:${port}`;
      try {
        for (let i = 0; ; i++) {
          const up = await request(url, '/healthz', { ca: tls.ca, method: 'GET' }).then(
            () => true,
            () => false,
          );
          if (up) break;
          if (i > 300 || child.exitCode !== null) throw new Error(`webhook did not start: ${stderr}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const uids = Array.from({ length: 200 }, (_, i) => `kill-${i}`);
        const answers = await Promise.all(
          uids.map((uid, i) => request(url, i % 2 ? '/mutate' : '/validate', { ca: tls.ca, body: review(uid) })),
        );
        child.kill('SIGKILL');
        assert.ok(
          answers.every((a) => a.status === 200 && a.json.response !== undefined),
          'every review answered',
        );
        await new Promise((r) => child.once('exit', r));
        const text = readFileSync(join(dir, 'audit.log'), 'utf8');
        const recordedUids = new Set(
          text
            .split('\n')
            .filter(Boolean)
            .map((l) => (JSON.parse(l) as { event: { uid?: string } }).event.uid),
        );
        assert.deepEqual(
          uids.filter((u) => !recordedUids.has(u)),
          [],
          'answered but not recorded',
        );
        const report = await verifyAuditFiles([{ name: 'audit.log', text }], mergeJwks(undefined, key.publicJwk));
        assert.deepEqual(report.issues, []);
        assert.equal(report.admissions, 200);
        assert.equal(report.unauthenticated, 200);
        assert.ok((report.chains[0]?.checkpoints ?? 0) < report.records, 'concurrent decisions share checkpoints');
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
