// Both processes serve prom-client's default process metrics, under their prefix, with the event-loop lag from
// observability/event-loop-lag.ts in place of prom-client's never-stopping sampler (issue #24.5).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RuntimeMetrics } from '../../kube/metrics.ts';
import { PROM_CLIENT_METRICS } from '../../observability/process-metrics.ts';
import { createWebhookMetrics } from '../../webhook/metrics.ts';

describe('process metrics', () => {
  test("prom-client's default metrics, all but its never-stopping event-loop sampler", () => {
    const ours = Object.keys(PROM_CLIENT_METRICS);
    assert.deepEqual(
      ours,
      collectDefaultMetrics.metricsList.filter((n) => n !== 'eventLoopLag'),
    );
  });

  test("the same metric names as prom-client's defaults, under each process prefix", async () => {
    const theirs = new Registry();
    collectDefaultMetrics({ register: theirs, prefix: 'vaultgate_webhook_' });
    const names = async (r: Registry): Promise<string[]> => (await r.getMetricsAsJSON()).map((m) => m.name).sort();
    const webhook = createWebhookMetrics(new Registry()).registry;
    const expected = await names(theirs);
    const served = await names(webhook);
    assert.deepEqual(
      served.filter((n) => expected.includes(n)),
      expected,
    );
    const text = await webhook.metrics();
    assert.match(text, /^vaultgate_webhook_nodejs_eventloop_lag_p99_seconds 0$/m);
    assert.match(text, /^vaultgate_webhook_process_cpu_seconds_total /m);
    const controller = new RuntimeMetrics();
    controller.collectProcessMetrics();
    assert.match(await controller.registry.metrics(), /^nodejs_eventloop_lag_p99_seconds /m);
  });
});
