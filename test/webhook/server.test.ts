import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { createWebhookApp } from '../../webhook/http-app.ts';
import { createWebhookMetrics } from '../../webhook/metrics.ts';
import { startWebhookServer, type WebhookServer } from '../../webhook/server.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import { silentLogger } from '../../observability/log.ts';
import { selfSignedTls, type TestTls } from '../support/tls.ts';
import { policyCreateReview } from './policy-review.ts';

interface Reply {
  status: number;
  headers: Record<string, unknown>;
  json: {
    error: string;
    apiVersion: string;
    kind: string;
    response: { uid: string; allowed: boolean; status: { message: string } };
  };
}

function post(url: string, ca: string, body: string, path = '/validate'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url + path,
      { method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          data += c;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            json: (data ? JSON.parse(data) : {}) as Reply['json'],
            headers: res.headers,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const review = (uid: string, extra: Record<string, unknown> = {}) => policyCreateReview(uid, { request: extra });

describe('webhook HTTPS server', () => {
  let tls: TestTls;
  let srv: WebhookServer;
  let metrics: ReturnType<typeof createWebhookMetrics>;
  before(async () => {
    tls = await selfSignedTls();
    metrics = createWebhookMetrics(undefined, { defaultMetrics: false });
    const app = createWebhookApp({ context: () => defaultContext(), logger: silentLogger, metrics, ready: () => true });
    srv = await startWebhookServer(app, { host: '127.0.0.1', port: 0, tls });
  });
  after(async () => {
    await srv.close();
  });

  test('answers an AdmissionReview with the request uid', async () => {
    for (const path of ['/validate', '/mutate']) {
      const r = await post(srv.url, tls.ca, review('uid-123'), path);
      assert.equal(r.status, 200);
      assert.equal(r.json.apiVersion, 'admission.k8s.io/v1');
      assert.equal(r.json.kind, 'AdmissionReview');
      assert.equal(r.json.response.uid, 'uid-123');
      assert.equal(typeof r.json.response.allowed, 'boolean');
    }
  });

  test('malformed JSON is a 400, not a crash', async () => {
    const r = await post(srv.url, tls.ca, '{"apiVersion": ');
    assert.equal(r.status, 400);
    assert.match(r.json.error, /not valid JSON/);
  });

  test('a body without request.uid is a 400 naming the field', async () => {
    const r = await post(
      srv.url,
      tls.ca,
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }),
    );
    assert.equal(r.status, 400);
    assert.match(r.json.error, /request\.uid/);
  });

  test('an oversize body (over 7 MiB) is a 413', async () => {
    const big = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'x', pad: 'a'.repeat(7.5 * 1024 * 1024) },
    });
    const r = await post(srv.url, tls.ca, big);
    assert.equal(r.status, 413);
  });

  test('an AdmissionReview of another version is denied with a message that says so', async () => {
    const body = JSON.parse(review('uid-v1beta1')) as { apiVersion: string };
    body.apiVersion = 'admission.k8s.io/v1beta1';
    const r = await post(srv.url, tls.ca, JSON.stringify(body));
    assert.equal(r.status, 200);
    assert.equal(r.json.response.uid, 'uid-v1beta1');
    assert.equal(r.json.response.allowed, false);
    assert.match(r.json.response.status.message, /admission\.k8s\.io\/v1 only/);
  });

  test('serves helmet headers and health; counts in the metrics registry, which the admission port does not serve', async () => {
    const r = await post(srv.url, tls.ca, review('uid-m'));
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['x-powered-by'], undefined);
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get(srv.url + '/metrics', { ca: tls.ca }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    });
    assert.equal(status, 404, '/metrics is on its own port (webhook/metrics-server.ts)');
    const text = await metrics.registry.metrics();
    assert.match(
      text,
      /vaultgate_admission_requests_total\{webhook="validate",kind="VaultPolicy",operation="CREATE",decision="allowed"\}/,
    );
    assert.match(text, /vaultgate_admission_duration_seconds_bucket/);
  });

  test('refuses TLS 1.1 clients', async () => {
    await assert.rejects(
      new Promise((resolve, reject) => {
        const req = https.request(
          srv.url + '/healthz',
          { ca: tls.ca, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' },
          resolve,
        );
        req.on('error', reject);
        req.end();
      }),
    );
  });

  test('a new certificate is served to new connections without restart', async () => {
    const next = await selfSignedTls('vaultgate-rotated');
    srv.updateCertificate(next);
    const subject = await new Promise<string>((resolve, reject) => {
      const req = https.request(srv.url + '/healthz', { ca: next.ca, agent: false }, (res) => {
        const peer = (res.socket as import('node:tls').TLSSocket).getPeerCertificate();
        res.resume();
        resolve(String(peer.subject.CN));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(subject, 'vaultgate-rotated');
  });
});
