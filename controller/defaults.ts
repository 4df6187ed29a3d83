// The controller's defaults, one constant each: buildControllerApp reads them for an option left out and
// `vaultgate controller`'s flag declarations (cli/commands/controller.ts) show and apply them, so the help,
// the flags and the app agree (as controller-runtime binds a flag to its option's default).

/** Concurrent reconciles per controller (the chart's controller.workers): reconciles wait on I/O. */
export const DEFAULT_WORKERS = 16;
/** Per-request timeout of the controller's Vault requests. */
export const DEFAULT_VAULT_TIMEOUT_MS = 10_000;
/** How often the Vault policies and roles the controller owns are re-read to undo drift (±10%). */
export const DEFAULT_DRIFT_CHECK_MS = 300_000;
/** /healthz, /readyz, /metrics of `vaultgate controller` (the webhook's /metrics is 8081: both fit in `vaultgate run`). */
export const DEFAULT_CONTROLLER_METRICS_PORT = 8080;
/** The kubernetes auth mount the controller logs in at with --vault-role. */
export const DEFAULT_VAULT_AUTH_MOUNT = 'kubernetes';
/** The ServiceAccount token the controller logs in to Vault with (the kubelet's projected token). */
export const DEFAULT_VAULT_SA_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';
/** The Lease the controller replicas elect a leader with. */
export const DEFAULT_LEASE_NAME = 'vaultgate-controller';
