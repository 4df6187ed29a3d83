import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { createWebhookMetrics, registerAuditMetrics } from '../../webhook/metrics.ts';

test("the audit gauges read the trail's stats at scrape time, and read 0 while there is no trail", async () => {
  const registry = new Registry();
  let trail: { stats: () => Record<string, number> } | undefined;
  registerAuditMetrics(registry, () =>
    trail
      ? {
          stats: () => ({
            records: 0,
            batches: 0,
            queued: 0,
            queuedHighWater: 0,
            waitedForRoom: 0,
            lagMaxMs: 0,
            ...trail?.stats(),
          }),
        }
      : undefined,
  );
  const value = async (name: string) =>
    (await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values[0]?.value;
  assert.equal(await value('vaultgate_audit_records_written'), 0);
  trail = { stats: () => ({ records: 7, batches: 2, lagMaxMs: 1500 }) };
  assert.equal(await value('vaultgate_audit_records_written'), 7);
  assert.equal(await value('vaultgate_audit_checkpoints_written'), 2);
  assert.equal(await value('vaultgate_audit_lag_max_seconds'), 1.5, 'seconds, as Prometheus wants');
  trail = { stats: () => ({ records: 9 }) };
  assert.equal(await value('vaultgate_audit_records_written'), 9, 'read again at the next scrape');
});

test('admission counters count by webhook, kind, operation and decision; denials by rule', async () => {
  const m = createWebhookMetrics(new Registry(), { defaultMetrics: false });
  m.requests.inc({ webhook: 'validate', kind: 'VaultPolicy', operation: 'CREATE', decision: 'denied' });
  m.denials.inc({ webhook: 'validate', rule: 'guardrail.forbidden-path' });
  const text = await m.registry.metrics();
  assert.match(
    text,
    /vaultgate_admission_requests_total\{webhook="validate",kind="VaultPolicy",operation="CREATE",decision="denied"\} 1/,
  );
  assert.match(text, /rule="guardrail.forbidden-path"\} 1/);
  assert.doesNotMatch(text, /vaultgate_webhook_process_/, 'process metrics only when asked for');
});
