// Property test: thousands of random and mutated AdmissionReviews against the real HTTPS server.
// Every reply is a well-formed AdmissionReview with the request's uid, or a 400/413 for a body that is
// not one — and the server never crashes or answers 5xx.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import fc from 'fast-check';
import { createWebhookApp } from '../../webhook/http-app.ts';
import { createWebhookMetrics } from '../../webhook/metrics.ts';
import { startWebhookServer, type WebhookServer } from '../../webhook/server.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import { silentLogger } from '../../observability/log.ts';
import { selfSignedTls, type TestTls } from '../support/tls.ts';

let tls: TestTls;
let srv: WebhookServer;
const agent = new https.Agent({ keepAlive: true, maxSockets: 8 });

before(async () => {
  tls = await selfSignedTls();
  const app = createWebhookApp({
    context: () => defaultContext(),
    logger: silentLogger,
    metrics: createWebhookMetrics(undefined, { defaultMetrics: false }),
    ready: () => true,
  });
  srv = await startWebhookServer(app, { host: '127.0.0.1', port: 0, tls });
});
after(async () => {
  agent.destroy();
  await srv.close();
});

function post(path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      srv.url + path,
      { method: 'POST', ca: tls.ca, agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const kinds = [
  { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy', resource: 'vaultpolicies' },
  { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultRoleBinding', resource: 'vaultrolebindings' },
  { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultGuardrail', resource: 'vaultguardrails' },
  { group: 'external-secrets.io', version: 'v1', kind: 'ExternalSecret', resource: 'externalsecrets' },
  { group: 'external-secrets.io', version: 'v1', kind: 'SecretStore', resource: 'secretstores' },
  { group: 'external-secrets.io', version: 'v1', kind: 'ClusterSecretStore', resource: 'clustersecretstores' },
  { group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments' },
];

// Plausible specs with random holes and random junk: the core must answer every one of them.
const capability = fc.constantFrom(
  'read',
  'create',
  'update',
  'patch',
  'delete',
  'list',
  'sudo',
  'deny',
  'READ',
  'root',
  '',
);
const path = fc.oneof(
  fc.constantFrom('secret/data/team-a/*', 'sys/*', '*', 'auth/+/login', 'secret/data/+/x*', '/abs', 'a//b'),
  fc.string(),
);
const rule = fc.record(
  {
    path,
    capabilities: fc.array(capability, { maxLength: 4 }),
    allowedParameters: fc.option(fc.dictionary(fc.string(), fc.array(fc.anything(), { maxLength: 2 }))),
  },
  { requiredKeys: [] },
);
const spec = fc.oneof(
  fc.record({ rules: fc.array(rule, { maxLength: 4 }) }, { requiredKeys: [] }),
  fc.record({ policy: fc.oneof(fc.string(), fc.constant('path "secret/data/team-a/*" { capabilities = ["read"] }')) }),
  fc.record(
    {
      serviceAccounts: fc.array(fc.string(), { maxLength: 3 }),
      policies: fc.array(fc.string(), { maxLength: 3 }),
      tokenTTL: fc.oneof(fc.constantFrom('1h', '90s', '-1h', 'x'), fc.string()),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    { provider: fc.anything(), target: fc.anything(), data: fc.anything(), dataFrom: fc.anything() },
    { requiredKeys: [] },
  ),
  fc.anything(),
);
const review = fc
  .record({
    uid: fc.uuid(),
    kind: fc.constantFrom(...kinds),
    operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'BOGUS'),
    namespace: fc.oneof(fc.constantFrom('team-a', 'kube-system', ''), fc.string()),
    name: fc.string(),
    spec,
    withOld: fc.boolean(),
    dryRun: fc.boolean(),
    junk: fc.option(fc.dictionary(fc.string(), fc.anything(), { maxKeys: 3 })),
  })
  .map((r) => {
    const object: Record<string, unknown> = {
      apiVersion: `${r.kind.group}/${r.kind.version}`,
      kind: r.kind.kind,
      metadata: { name: r.name, namespace: r.namespace, ...(r.junk ? { annotations: r.junk } : {}) },
      spec: r.spec,
    };
    return {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: r.uid,
        operation: r.operation,
        dryRun: r.dryRun,
        namespace: r.namespace,
        name: r.name,
        kind: { group: r.kind.group, version: r.kind.version, kind: r.kind.kind },
        resource: { group: r.kind.group, version: r.kind.version, resource: r.kind.resource },
        userInfo: { username: 'fuzz', groups: ['system:authenticated'] },
        object: r.operation === 'DELETE' ? null : object,
        oldObject: r.withOld ? object : null,
      },
    };
  });

// Structural damage to a valid review: drop, retype or replace any field at any depth.
function mutate(value: unknown, seed: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  const clone = structuredClone(value) as Record<string, unknown>;
  const keys = Object.keys(clone);
  if (keys.length === 0) return clone;
  const k = keys[seed % keys.length]!;
  switch (seed % 5) {
    case 0:
      delete clone[k];
      break;
    case 1:
      clone[k] = null;
      break;
    case 2:
      clone[k] = [clone[k]];
      break;
    case 3:
      clone[k] = String(seed);
      break;
    default:
      clone[k] = mutate(clone[k], Math.floor(seed / 5));
      break;
  }
  return clone;
}

function checkReply(sent: unknown, reply: { status: number; text: string }): void {
  assert.ok(reply.status < 500, `5xx for input: ${reply.status} ${reply.text.slice(0, 200)}`);
  if (reply.status === 400 || reply.status === 413) return;
  assert.equal(reply.status, 200);
  const body = JSON.parse(reply.text) as {
    apiVersion: string;
    kind: string;
    response: { uid: string; allowed: boolean; patch?: string; patchType?: string };
  };
  assert.equal(body.apiVersion, 'admission.k8s.io/v1');
  assert.equal(body.kind, 'AdmissionReview');
  assert.equal(body.response.uid, (sent as { request: { uid: string } }).request.uid);
  assert.equal(typeof body.response.allowed, 'boolean');
  if (body.response.patch !== undefined) {
    assert.equal(body.response.patchType, 'JSONPatch');
    const ops = JSON.parse(Buffer.from(body.response.patch, 'base64').toString('utf8')) as unknown;
    assert.ok(Array.isArray(ops));
  }
}

test('random AdmissionReviews always get a well-formed answer with their uid', async () => {
  await fc.assert(
    fc.asyncProperty(review, fc.constantFrom('/validate', '/mutate'), async (r, p) => {
      checkReply(r, await post(p, JSON.stringify(r)));
    }),
    { numRuns: 1500 },
  );
});

test('structurally damaged AdmissionReviews get a 400 or an answer with their uid', async () => {
  await fc.assert(
    fc.asyncProperty(review, fc.nat(), fc.constantFrom('/validate', '/mutate'), async (r, seed, p) => {
      const damaged = mutate(r, seed);
      checkReply(damaged, await post(p, JSON.stringify(damaged)));
    }),
    { numRuns: 1500 },
  );
});

test('random bytes get a 400, never a crash', async () => {
  await fc.assert(
    fc.asyncProperty(fc.string({ maxLength: 200 }), async (s) => {
      const reply = await post('/validate', s);
      assert.ok(reply.status === 400 || reply.status === 200, `status ${reply.status}`);
    }),
    { numRuns: 300 },
  );
  // The server is still up and answering.
  const ok = await post('/validate', JSON.stringify(fc.sample(review, 1)[0]));
  assert.equal(ok.status, 200);
});
