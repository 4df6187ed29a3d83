// The webhook process's defaults, one constant each: `vaultgate webhook`'s flag declarations
// (cli/commands/webhook.ts) show and apply them, and whoever builds a WebhookProcess without the CLI
// (tests, `vaultgate dev`) can start from the same values.
import { availableParallelism } from 'node:os';

export const DEFAULT_WEBHOOK_HOST = '0.0.0.0';
/** The admission port (HTTPS); the chart's webhook.port. */
export const DEFAULT_WEBHOOK_PORT = 8443;
/** Plain-HTTP /metrics (the controller's is 8080: both fit in `vaultgate run`). */
export const DEFAULT_WEBHOOK_METRICS_PORT = 8081;
export const DEFAULT_TLS_CERT_FILE = '/etc/vaultgate/tls/tls.crt';
export const DEFAULT_TLS_KEY_FILE = '/etc/vaultgate/tls/tls.key';
/** How long the webhook keeps serving after SIGTERM, while the endpoints drop it. */
export const DEFAULT_DRAIN_SECONDS = 5;
/**
 * Processes answering admission reviews (node:cluster workers, one audit trail writer in the primary):
 * 1 = one process, no workers. Not the core count: measured quiet on 2 cores, 2 workers answered fewer
 * reviews than one process (2,468 vs 2,695 per s) at 1.6x the CPU per review, and the core count Node
 * sees ignores a pod's CPU limit (docs/decisions/admission-workers.md).
 */
export const DEFAULT_ADMISSION_WORKERS = 1;
/** What the bench's workers row runs: one worker per core. */
export const CORE_ADMISSION_WORKERS = availableParallelism();
/** More workers than this buys nothing on a webhook's node and costs a whole process each. */
export const MAX_ADMISSION_WORKERS = 64;
