// Prometheus metrics of the webhook process (served on /metrics by the HTTPS app).
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface WebhookMetrics {
  registry: Registry;
  requests: Counter<'webhook' | 'kind' | 'operation' | 'decision'>;
  denials: Counter<'webhook' | 'rule'>;
  latency: Histogram<'webhook'>;
}

export function createWebhookMetrics(registry = new Registry(), opts: { defaultMetrics?: boolean } = {}): WebhookMetrics {
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'vaultgate_webhook_' });
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
  };
}
