// While the webhook drains before exit, each answer says `Connection: close`: the apiserver then stops
// reusing its pooled connections to this replica, so no review is sent into a connection the final close()
// cuts (found by the real-pods test: 1 of 288 calls failed when a webhook pod was deleted under load).
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

const review = policyCreateReview('u1');

/** POSTs twice over one keep-alive agent; returns each answer's Connection header and whether the socket was reused. */
async function twice(
  url: string,
  ca: string,
  path: string,
): Promise<{ connection: Array<string | undefined>; reused: boolean[] }> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
  const out = { connection: [] as Array<string | undefined>, reused: [] as boolean[] };
  for (let i = 0; i < 2; i++) {
    await new Promise<void>((resolve, reject) => {
      const req = https.request(
        url + path,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          out.connection.push(res.headers.connection);
          res.resume();
          res.on('end', () => setImmediate(resolve));
        },
      );
      req.on('socket', (s) => {
        out.reused.push((s as { _vgSeen?: boolean })._vgSeen === true);
        (s as { _vgSeen?: boolean })._vgSeen = true;
      });
      req.on('error', reject);
      req.end(review);
    });
  }
  agent.destroy();
  return out;
}

void describe('draining: answers close their connection', () => {
  let tls: TestTls;
  let srv: WebhookServer;
  let draining = false;
  before(async () => {
    tls = await selfSignedTls();
    const app = createWebhookApp({
      context: () => defaultContext(),
      logger: silentLogger,
      metrics: createWebhookMetrics(undefined, { defaultMetrics: false }),
      ready: () => !draining,
      draining: () => draining,
    });
    srv = await startWebhookServer(app, { host: '127.0.0.1', port: 0, tls });
  });
  after(async () => {
    await srv.close();
  });

  void test('serving: keep-alive, the second review reuses the connection', async () => {
    draining = false;
    for (const path of ['/validate', '/mutate']) {
      const r = await twice(srv.url, tls.ca, path);
      assert.deepEqual(r.connection, ['keep-alive', 'keep-alive']);
      assert.deepEqual(r.reused, [false, true]);
    }
  });

  void test('draining: every answer says Connection: close, so the next review opens a new connection', async () => {
    draining = true;
    for (const path of ['/validate', '/mutate']) {
      const r = await twice(srv.url, tls.ca, path);
      assert.deepEqual(r.connection, ['close', 'close']);
      assert.deepEqual(r.reused, [false, false]);
    }
  });
});
