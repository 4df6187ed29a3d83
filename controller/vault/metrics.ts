// Vault client metrics. Labels are bounded: `operation` is a fixed string chosen by the caller
// (`kv.read`, `auth.login.kubernetes`, …), `outcome` is `success` or a VaultErrorKind. Paths, roles and
// namespaces are never labels (unbounded cardinality, and paths can be sensitive).
import { Counter, Histogram, type Registry } from 'prom-client';

export interface VaultMetrics {
  /** One finished HTTP request to Vault. */
  request(operation: string, outcome: string, seconds: number): void;
  /** A login attempt through the token cache (`method` = kubernetes|jwt|appRole|token). */
  login(method: string, outcome: string): void;
  /** A renew-self attempt through the token cache. */
  renewal(outcome: string): void;
}

export const noopVaultMetrics: VaultMetrics = { request() {}, login() {}, renewal() {} };

export interface VaultMetricsOptions {
  /**
   * Also count ESO's `externalsecret_provider_api_calls_count{provider,call,status}` (provider
   * `HashiCorp/Vault`, status `success|error`), so dashboards built for ESO keep working. Off by default:
   * it duplicates `vault_requests_total`.
   */
  esoCompatible?: boolean;
}

/** Register the Vault client metrics into `registry` (call once per registry). */
export function createVaultMetrics(registry: Registry, opts: VaultMetricsOptions = {}): VaultMetrics {
  const requests = new Counter({
    name: 'vault_requests_total',
    help: 'Requests sent to Vault, by logical operation and outcome (success or error kind).',
    labelNames: ['operation', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'vault_request_duration_seconds',
    help: 'Duration of requests to Vault, by logical operation.',
    labelNames: ['operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const logins = new Counter({
    name: 'vault_logins_total',
    help: 'Vault logins performed by the token cache, by auth method and outcome. Should stay near the number of identities.',
    labelNames: ['method', 'outcome'] as const,
    registers: [registry],
  });
  const renewals = new Counter({
    name: 'vault_token_renewals_total',
    help: 'Vault token renew-self calls by the token cache, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const eso = opts.esoCompatible
    ? new Counter({
        name: 'externalsecret_provider_api_calls_count',
        help: 'Provider API calls (ESO-compatible name).',
        labelNames: ['provider', 'call', 'status'] as const,
        registers: [registry],
      })
    : undefined;
  return {
    request(operation, outcome, seconds) {
      requests.inc({ operation, outcome });
      duration.observe({ operation }, seconds);
      eso?.inc({ provider: 'HashiCorp/Vault', call: operation, status: outcome === 'success' ? 'success' : 'error' });
    },
    login(method, outcome) {
      logins.inc({ method, outcome });
    },
    renewal(outcome) {
      renewals.inc({ outcome });
    },
  };
}
