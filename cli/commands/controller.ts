// `vaultgate controller`: run the reconcilers (VaultPolicy, VaultRoleBinding, SecretStore, ClusterSecretStore,
// ExternalSecret, ClusterExternalSecret, PushSecret) against Kubernetes and Vault, leader-elected; the leader also keeps
// the webhook's serving certificate when --webhook-cert-secret is given.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { INJECT_SELECTOR } from '../../certs/ca-injector.ts';
import { DEFAULT_CA_VALIDITY_DAYS, DEFAULT_LEAF_VALIDITY_DAYS } from '../../certs/generate.ts';
import { buildControllerApp, type ControllerAppOptions, type ControllerVaultAuth } from '../../controller/main.ts';
import type { KubeClient } from '../../kube/kube-client.ts';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import { createLogger, type Logger } from '../../observability/log.ts';
import { prefixProblem } from '../../schemas/vault-names.ts';
import { parseVaultTarget } from '../../policy/capabilities.ts';
import { DEFAULT_VAULT_RATE_LIMIT } from '../../vault/limiter.ts';
import { parseRateLimit, parseServerRateLimit, VaultRateLimits } from '../../vault/rate-limits.ts';
import { allowedVaultServers, commandOptions, watchedNamespaces, type FlagValues } from './flags.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import { untilSignal } from './signals.ts';

export const summary = 'run the reconcilers (leader-elected) against Kubernetes and Vault';

/** The controller's flag sections (without the usage line), shared with `vaultgate run`'s help. */
export const CONTROLLER_FLAGS_HELP = `Kubernetes:
  --kubeconfig <path>            kubeconfig file (env KUBECONFIG; default: in-cluster, then ~/.kube/config)
  --namespace <ns>               watch only this namespace (repeatable or comma-separated; default: all).
                                 Then nothing is read cluster-wide but VaultGuardrails and these Namespace
                                 objects, and ClusterSecretStores are not served (the chart's watchNamespaces)

Vault (the controller's own identity; tenants' stores use their own):
  --vault-addr <url>             Vault address (env VAULT_ADDR) [required]
  --vault-ca-file <path>         PEM CA bundle to trust for Vault (env VAULT_CACERT)
  --vault-namespace <ns>         Vault Enterprise / OpenBao namespace (env VAULT_NAMESPACE)
  --vault-timeout <ms>           per-request timeout (default 10000)
  --vault-rate-limit <limit>     requests to each Vault server: <per second>[/<burst>[/<in flight>]]
                                 (default ${DEFAULT_VAULT_RATE_LIMIT.requestsPerSecond}/${DEFAULT_VAULT_RATE_LIMIT.burst}/${DEFAULT_VAULT_RATE_LIMIT.maxInFlight}; 0 = no rate limit). Sized to protect Vault
                                 from a refresh storm; every store on that server shares it
  --vault-server-rate-limit <address>=<limit>
                                 the same for one server (repeatable), e.g. https://vault-b:8200=200/400
  --vault-role <role>            log in with kubernetes auth as this role (the bootstrap policy's role)
  --vault-auth-mount <path>      kubernetes auth mount for --vault-role (default kubernetes)
  --vault-sa-token-file <path>   service account token for --vault-role
                                 (default /var/run/secrets/kubernetes.io/serviceaccount/token)
  --vault-token-file <path>      use the token in this file instead (env VAULT_TOKEN also works)
  --vault-flavor <flavor>        openbao (default) or vault (HashiCorp Vault): the server written to
  --vault-version <x.y>          its version (default 2.7 for openbao; required with --vault-flavor=vault);
                                 compared at start with sys/seal-status, a mismatch is logged as a warning

Behaviour:
  --name-prefix <prefix>         prefix of Vault names <prefix>.<namespace>.<name> (default vaultgate)
  --controller-class <class>     ESO spec.controller class to serve (default: stores without a class)
  --allowed-vault-server <url>   a Vault server secret stores may name (repeatable; the chart passes vault.address);
                                 enforce guardrails add more per namespace. None: any server
  --no-eso-kinds                 do not reconcile SecretStore, ClusterSecretStore, ExternalSecret (then the
                                 controller needs no right on Secrets or ServiceAccount tokens)
  --workers <n>                  concurrent reconciles per controller (default 16: they wait on I/O)
  --drift-check <ms>             re-read Vault policies/roles this often (default 300000, ±10%)

Webhook certificate (kept by the leader only; off unless --webhook-cert-secret is given):
  --webhook-cert-secret <name>       Secret holding the CA and the serving certificate (created if missing)
  --webhook-namespace <ns>           namespace of that Secret and of the Service
                                     (env POD_NAMESPACE; default vaultgate-system)
  --webhook-service <name>           the webhook Service: its DNS names go into the certificate
                                     [required with --webhook-cert-secret]
  --webhook-config-selector <sel>    webhook configurations whose caBundle is injected
                                     (default ${INJECT_SELECTOR})
  --webhook-cert-days <n>            serving certificate validity in days (default ${DEFAULT_LEAF_VALIDITY_DAYS})
  --webhook-ca-days <n>              CA validity in days (default ${DEFAULT_CA_VALIDITY_DAYS})

Audit trail (signed, hash-chained JSON lines on stdout; off unless --audit or --audit-key-file):
  --audit                            record every Vault write (policy/role created, updated, deleted,
                                     drift repaired, adopted; KV pushed or deleted by a PushSecret);
                                     key in Secret vaultgate-audit-key
  --audit-namespace <ns>             where that Secret and ConfigMap vaultgate-audit-jwks live
                                     (env POD_NAMESPACE; default vaultgate-system)
  --audit-key-file <path>            sign with this Ed25519 PEM key instead (vaultgate audit keygen)
  --audit-file <path>                also append records to this file (rotated by size)

Operations:
  --leader-elect / --no-leader-elect   Lease-based leader election (default on)
  --leader-election-namespace <ns>     Lease namespace (env POD_NAMESPACE; default vaultgate-system)
  --leader-election-name <name>        Lease name (default vaultgate-controller)
  --metrics-port <port>                /healthz, /readyz, /metrics (default 8080; 0 = random)
  --log-level <level>                  trace|debug|info|warn|error (default info; env LOG_LEVEL)
  -h, --help                           this help
`;

export const CONTROLLER_HELP = `Usage: vaultgate controller [options]

Runs the vaultgate reconcilers: VaultPolicy → Vault ACL policies, VaultRoleBinding → kubernetes-auth
roles, SecretStore/ClusterSecretStore validation, ExternalSecret → Secret. Only the elected leader
reconciles (and keeps the webhook certificate); standbys keep warm caches.

${CONTROLLER_FLAGS_HELP}`;

export const CONTROLLER_OPTIONS = {
  kubeconfig: { type: 'string' }, namespace: { type: 'string', multiple: true },
  'vault-addr': { type: 'string' }, 'vault-ca-file': { type: 'string' }, 'vault-namespace': { type: 'string' },
  'vault-timeout': { type: 'string' }, 'vault-role': { type: 'string' }, 'vault-auth-mount': { type: 'string' },
  'vault-sa-token-file': { type: 'string' }, 'vault-token-file': { type: 'string' },
  'vault-flavor': { type: 'string' }, 'vault-version': { type: 'string' },
  'vault-rate-limit': { type: 'string' }, 'vault-server-rate-limit': { type: 'string', multiple: true },
  'name-prefix': { type: 'string' }, 'controller-class': { type: 'string' }, 'no-eso-kinds': { type: 'boolean' }, 'allowed-vault-server': { type: 'string', multiple: true }, workers: { type: 'string' }, 'drift-check': { type: 'string' },
  'webhook-cert-secret': { type: 'string' }, 'webhook-namespace': { type: 'string' }, 'webhook-service': { type: 'string' },
  'webhook-config-selector': { type: 'string' }, 'webhook-cert-days': { type: 'string' }, 'webhook-ca-days': { type: 'string' },
  'leader-elect': { type: 'boolean' }, 'no-leader-elect': { type: 'boolean' },
  'leader-election-namespace': { type: 'string' }, 'leader-election-name': { type: 'string' },
  audit: { type: 'boolean' }, 'audit-namespace': { type: 'string' }, 'audit-key-file': { type: 'string' }, 'audit-file': { type: 'string' },
  'metrics-port': { type: 'string' }, 'log-level': { type: 'string' }, help: { type: 'boolean', short: 'h' },
} as const;

export interface ControllerFlagDeps {
  /** Use this client instead of one built from --kubeconfig (tests, `vaultgate run` sharing one). */
  client?: KubeClient;
  log?: Logger;
  env?: NodeJS.ProcessEnv;
}

/** Flags → app options; throws with a message naming the flag. */
export function controllerOptionsFrom(values: FlagValues, deps: ControllerFlagDeps = {}): ControllerAppOptions {
  const env = deps.env ?? process.env;
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  const int = (k: string, dflt: number, min = 0): number => {
    const v = str(k);
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${k} must be a whole number of at least ${min}, got "${v}"`);
    return n;
  };

  const address = str('vault-addr') ?? env.VAULT_ADDR;
  if (!address) throw new Error('--vault-addr (or VAULT_ADDR) is required');
  const namePrefix = str('name-prefix') ?? 'vaultgate';
  const problem = prefixProblem(namePrefix);
  if (problem) throw new Error(`--name-prefix: ${problem}`);
  const vaultTarget = parseVaultTarget(str('vault-flavor'), str('vault-version'));
  let auth: ControllerVaultAuth;
  const role = str('vault-role');
  const tokenFile = str('vault-token-file');
  const saTokenFile = str('vault-sa-token-file');
  if (role) auth = { method: 'kubernetes', role, mount: str('vault-auth-mount') ?? 'kubernetes', ...(saTokenFile ? { tokenFile: saTokenFile } : {}) };
  else if (tokenFile) auth = { method: 'token', token: readFileSync(tokenFile, 'utf8').trim() };
  else if (env.VAULT_TOKEN) auth = { method: 'token', token: env.VAULT_TOKEN };
  else throw new Error('the controller needs a Vault identity: --vault-role (kubernetes auth) or --vault-token-file / VAULT_TOKEN');

  const workers = Math.max(1, int('workers', 16));
  const timeoutMs = Math.max(1, int('vault-timeout', 10_000));
  const rateLimits = vaultRateLimitsFrom(str('vault-rate-limit'), values['vault-server-rate-limit']);
  const metricsPort = int('metrics-port', 8080);
  if (metricsPort > 65535) throw new Error(`--metrics-port must be a port number, got "${metricsPort}"`);
  const driftCheckMs = Math.max(1000, int('drift-check', 300_000));

  const certSecret = str('webhook-cert-secret');
  const service = str('webhook-service');
  if (certSecret && !service) throw new Error('--webhook-service is required with --webhook-cert-secret (its DNS names go into the certificate)');
  if (!certSecret) {
    const stray = ['webhook-service', 'webhook-namespace', 'webhook-config-selector', 'webhook-cert-days', 'webhook-ca-days'].find((k) => str(k) !== undefined);
    if (stray) throw new Error(`--${stray} needs --webhook-cert-secret`);
  }
  const leafDays = int('webhook-cert-days', DEFAULT_LEAF_VALIDITY_DAYS, 1);
  const caDays = int('webhook-ca-days', DEFAULT_CA_VALIDITY_DAYS, 1);
  if (certSecret && caDays <= leafDays) throw new Error(`--webhook-ca-days (${caDays}) must be longer than --webhook-cert-days (${leafDays})`);

  const log = deps.log ?? createLogger({ level: str('log-level'), name: 'controller' });
  const client = deps.client ?? new HttpKubeClient(loadKubeConfig(str('kubeconfig')));
  const caFile = str('vault-ca-file') ?? env.VAULT_CACERT;
  const vaultNamespace = str('vault-namespace') ?? env.VAULT_NAMESPACE;
  const identity = `${env.POD_NAME ?? hostname()}_${randomBytes(4).toString('hex')}`;
  const leaderElect = values['no-leader-elect'] ? false : values['leader-elect'] ?? true;
  const podNamespace = env.POD_NAMESPACE ?? 'vaultgate-system';
  const auditKeyFile = str('audit-key-file');
  const auditOn = values.audit === true || auditKeyFile !== undefined;
  if (!auditOn) {
    const stray = ['audit-namespace', 'audit-file'].find((k) => str(k) !== undefined);
    if (stray) throw new Error(`--${stray} needs --audit (or --audit-key-file)`);
  }
  return {
    client,
    vault: { address, timeoutMs, auth, rateLimits, ...(caFile ? { caPem: readFileSync(caFile, 'utf8') } : {}), ...(vaultNamespace ? { namespace: vaultNamespace } : {}) },
    namePrefix, controllerClass: str('controller-class') ?? '', esoKinds: values['no-eso-kinds'] !== true, ...(allowedVaultServers(values['allowed-vault-server']) ?? {}), workers, driftCheckMs, vaultTarget,
    ...(watchedNamespaces(values.namespace) ? { namespaces: watchedNamespaces(values.namespace) } : {}),
    // The rollout coordinator's HMAC key lives in the controller's own namespace (controller/rollouts/hmac.ts).
    rolloutRestarts: { namespace: podNamespace },
    ...(leaderElect ? { leaderElection: { namespace: str('leader-election-namespace') ?? podNamespace, name: str('leader-election-name') ?? 'vaultgate-controller', identity } } : {}),
    ...(certSecret && service ? {
      webhookCerts: {
        namespace: str('webhook-namespace') ?? podNamespace, secretName: certSecret, service,
        configSelector: str('webhook-config-selector') ?? INJECT_SELECTOR, leafValidityDays: leafDays, caValidityDays: caDays,
      },
    } : {}),
    ...(auditOn ? {
      audit: {
        replica: identity.replace(/\s/g, '-'),
        ...(auditKeyFile ? { keyFile: auditKeyFile } : { namespace: str('audit-namespace') ?? podNamespace }),
        ...(str('audit-file') ? { file: str('audit-file') } : {}),
      },
    } : {}),
    metricsPort, log, eventsInstance: identity,
  };
}

/** --vault-rate-limit and the repeated --vault-server-rate-limit → the process's per-server limits. */
export function vaultRateLimitsFrom(defaults: string | undefined, perServer: unknown): VaultRateLimits {
  const servers = (Array.isArray(perServer) ? perServer : perServer === undefined ? [] : [perServer]).map((v) => parseServerRateLimit(String(v), '--vault-server-rate-limit'));
  return new VaultRateLimits(defaults === undefined ? DEFAULT_VAULT_RATE_LIMIT : parseRateLimit(defaults, '--vault-rate-limit'), Object.fromEntries(servers));
}

export async function run(argv: string[]): Promise<number> {
  const opts = commandOptions('controller', argv, CONTROLLER_OPTIONS, CONTROLLER_HELP, (values) => controllerOptionsFrom(values));
  if (typeof opts === 'number') return opts;
  const log = opts.log!;
  const app = buildControllerApp(opts);
  const signal = untilSignal();
  log.info({ vault: opts.vault.address, prefix: opts.namePrefix, workers: opts.workers, leaderElect: Boolean(opts.leaderElection), metricsPort: opts.metricsPort, certKeeper: Boolean(opts.webhookCerts) }, 'starting controller');
  try {
    // A signal may arrive before the caches sync: stop() then also ends start().
    await Promise.race([app.start().then(() => { if (app.health) log.info({ port: app.health.port }, 'health and metrics listening'); }), signal]);
    log.info({ signal: await signal }, 'shutting down');
  } finally {
    await app.stop();
  }
  return 0;
}
