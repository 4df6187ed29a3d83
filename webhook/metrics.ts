// Prometheus metrics of the webhook process (served on /metrics by the HTTPS app).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from '../observability/process-metrics.ts';
import type { AuditTrailStats } from '../trail/trail.ts';

export interface WebhookMetrics {
  registry: Registry;
  requests: Counter<'webhook' | 'kind' | 'operation' | 'decision'>;
  denials: Counter<'webhook' | 'rule'>;
  latency: Histogram<'webhook'>;
  /** Decisions not answered as made because the audit trail could not record them. */
  unrecorded: Counter<'webhook'>;
}

/** What the audit trail reports: the part of its stats the gauges read. */
export interface AuditStatsSource {
  stats(): AuditGaugeStats;
}
type AuditGaugeStats = Pick<
  AuditTrailStats,
  'records' | 'batches' | 'queued' | 'queuedHighWater' | 'waitedForRoom' | 'lagMaxMs'
>;

/** The audit trail's gauges: name, help, and the value read from its stats at scrape time. */
const AUDIT_GAUGES: ReadonlyArray<readonly [string, string, (s: AuditGaugeStats) => number]> = [
  ['vaultgate_audit_records_written', 'Audit records written by this process.', (s) => s.records],
  [
    'vaultgate_audit_checkpoints_written',
    'Signed checkpoints (= batches, = signatures) written by this process.',
    (s) => s.batches,
  ],
  [
    'vaultgate_audit_queue_depth',
    'Audit records waiting for the next write (bounded; admission waits when full).',
    (s) => s.queued,
  ],
  [
    'vaultgate_audit_queue_high_water',
    'Most audit records ever waiting for a write at once.',
    (s) => s.queuedHighWater,
  ],
  [
    'vaultgate_audit_backpressure_waits',
    'Appends that waited for room in the full audit queue.',
    (s) => s.waitedForRoom,
  ],
  [
    'vaultgate_audit_lag_max_seconds',
    'Longest time from a decision to its record written and signed.',
    (s) => s.lagMaxMs / 1000,
  ],
];

/** Gauges read from the audit trail at scrape time. */
export function registerAuditMetrics(registry: Registry, trail: () => AuditStatsSource | undefined): void {
  for (const [name, help, pick] of AUDIT_GAUGES) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const t = trail();
        if (t) this.set(pick(t.stats()));
      },
    });
  }
}

export function createWebhookMetrics(
  registry = new Registry(),
  opts: { defaultMetrics?: boolean } = {},
): WebhookMetrics {
  if (opts.defaultMetrics ?? true) collectProcessMetrics(registry, 'vaultgate_webhook_');
  return {
    registry,
    requests: new Counter({
      name: 'vaultgate_admission_requests_total',
      help: 'Admission reviews answered, by webhook (mutate/validate), kind, operation and decision (allowed, mutated, denied, bad_request).',
      labelNames: ['webhook', 'kind', 'operation', 'decision'] as const,
      registers: [registry],
    }),
    denials: new Counter({
      name: 'vaultgate_admission_denials_total',
      help: 'Denials by the rule that fired.',
      labelNames: ['webhook', 'rule'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'vaultgate_admission_duration_seconds',
      help: 'Time to answer an admission review, from body parsed to response written.',
      labelNames: ['webhook'] as const,
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
      registers: [registry],
    }),
    unrecorded: new Counter({
      name: 'vaultgate_admission_unrecorded_total',
      help: 'Decisions the audit trail could not record; each was answered as a denial instead.',
      labelNames: ['webhook'] as const,
      registers: [registry],
    }),
  };
}
