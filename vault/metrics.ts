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
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const requests = counter(
    'vault_requests_total',
    'Requests sent to Vault, by logical operation and outcome (success or error kind).',
    ['operation', 'outcome'],
  );
  const duration = new Histogram({
    name: 'vault_request_duration_seconds',
    help: 'Duration of requests to Vault, by logical operation.',
    labelNames: ['operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const logins = counter(
    'vault_logins_total',
    'Vault logins performed by the token cache, by auth method and outcome. Should stay near the number of identities.',
    ['method', 'outcome'],
  );
  const renewals = counter(
    'vault_token_renewals_total',
    'Vault token renew-self calls by the token cache, by outcome.',
    ['outcome'],
  );
  // ESO's name, so dashboards built for ESO keep working (off by default: it duplicates vault_requests_total).
  const eso = opts.esoCompatible
    ? counter('externalsecret_provider_api_calls_count', 'Provider API calls (ESO-compatible name).', [
        'provider',
        'call',
        'status',
      ])
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
