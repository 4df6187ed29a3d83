// Process metrics must not wake an idle process 100 times a second (issue #24.5): prom-client's event-loop
// lag histogram samples on a libuv timer at its `resolution`, 10 ms unless told otherwise. Both processes'
// registries, as they are built, ask for EVENT_LOOP_SAMPLE_MS.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import perfHooks from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { RuntimeMetrics } from '../../kube/metrics.ts';
import { EVENT_LOOP_SAMPLE_MS } from '../../observability/process-metrics.ts';
import { createWebhookMetrics } from '../../webhook/metrics.ts';

describe('process metrics', () => {
  const asked: Array<number | undefined> = [];
  const original = perfHooks.monitorEventLoopDelay;
  before(() => {
    // prom-client reads perf_hooks.monitorEventLoopDelay when a registry is set up: record what it asks for.
    perfHooks.monitorEventLoopDelay = (o) => {
      asked.push(o?.resolution);
      return original(o);
    };
  });
  after(() => {
    perfHooks.monitorEventLoopDelay = original;
  });

  test('the webhook samples the event loop every 500 ms, not every 10 ms', () => {
    asked.length = 0;
    createWebhookMetrics(new Registry());
    assert.deepEqual(asked, [EVENT_LOOP_SAMPLE_MS]);
    assert.ok(EVENT_LOOP_SAMPLE_MS >= 500);
  });

  test('the controller samples the event loop every 500 ms, not every 10 ms', () => {
    asked.length = 0;
    new RuntimeMetrics().collectProcessMetrics();
    assert.deepEqual(asked, [EVENT_LOOP_SAMPLE_MS]);
  });

  test('the process metrics are served under each process prefix', async () => {
    const text = await createWebhookMetrics(new Registry()).registry.metrics();
    assert.match(text, /^vaultgate_webhook_nodejs_eventloop_lag_p99_seconds /m);
    assert.match(text, /^vaultgate_webhook_process_cpu_seconds_total /m);
  });
});
