// `vaultgate controller`: run the reconcilers (VaultPolicy, VaultRoleBinding, VaultGuardrail, SecretStore, ClusterSecretStore,
// ExternalSecret, ClusterExternalSecret, PushSecret) against Kubernetes and Vault, leader-elected; the leader also keeps
// the webhook's serving certificate when --webhook-cert-secret is given.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { INJECT_SELECTOR } from '../../certs/ca-injector.ts';
import { DEFAULT_CA_VALIDITY_DAYS, DEFAULT_LEAF_VALIDITY_DAYS } from '../../certs/generate.ts';
import {
  buildControllerApp,
  type ControllerAppOptions,
  type ControllerVaultAuth,
  DEFAULT_CONTROLLER_METRICS_PORT,
  DEFAULT_DRIFT_CHECK_MS,
  DEFAULT_LEASE_NAME,
  DEFAULT_VAULT_AUTH_MOUNT,
  DEFAULT_VAULT_SA_TOKEN_FILE,
  DEFAULT_VAULT_TIMEOUT_MS,
  DEFAULT_WORKERS,
} from '../../controller/main.ts';
import type { KubeClient } from '../../kube/kube-client.ts';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import { createLogger, type Logger } from '../../observability/log.ts';
import { DEFAULT_VAULT_RATE_LIMIT } from '../../vault/limiter.ts';
import { parseRateLimit, parseServerRateLimit, VaultRateLimits } from '../../vault/rate-limits.ts';
import { defineCommand, FlagReader, type FlagSection, type FlagValues, HELP_FLAG } from './flags.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import {
  AUDIT_STORE_FLAGS,
  BEHAVIOUR_FLAGS,
  DEFAULT_POD_NAMESPACE,
  KUBECONFIG_FLAG,
  LOG_LEVEL_FLAG,
  NAMESPACE_FLAG,
  POD_NAMESPACE_ENV,
  sharedOptionsFrom,
  VAULT_TARGET_FLAGS,
} from './shared-flags.ts';
import { untilSignal } from './signals.ts';

const rate = DEFAULT_VAULT_RATE_LIMIT;

/** The Audit trail section: `vaultgate run` leaves it out (there the webhook's audit flags decide). */
export const CONTROLLER_AUDIT_SECTION: FlagSection = {
  title: 'Audit trail (signed, hash-chained JSON lines on stdout; off unless --audit or --audit-key-file)',
  flags: [
    {
      name: 'audit',
      type: 'boolean',
      help: 'record every Vault write (policy/role created, updated, deleted, drift repaired, adopted; KV pushed or deleted by a PushSecret); key in Secret vaultgate-audit-key',
    },
    ...AUDIT_STORE_FLAGS,
  ],
};

/** Every flag of `vaultgate controller`, by help section. */
export const CONTROLLER_SECTIONS: readonly FlagSection[] = [
  { title: 'Kubernetes', flags: [KUBECONFIG_FLAG, NAMESPACE_FLAG] },
  {
    title: "Vault (the controller's own identity; tenants' stores use their own)",
    flags: [
      { name: 'vault-addr', type: 'string', arg: 'url', env: 'VAULT_ADDR', required: true, help: 'Vault address' },
      {
        name: 'vault-ca-file',
        type: 'string',
        arg: 'path',
        env: 'VAULT_CACERT',
        help: 'PEM CA bundle to trust for Vault',
      },
      {
        name: 'vault-namespace',
        type: 'string',
        arg: 'ns',
        env: 'VAULT_NAMESPACE',
        help: 'Vault Enterprise / OpenBao namespace',
      },
      {
        name: 'vault-timeout',
        type: 'integer',
        arg: 'ms',
        default: DEFAULT_VAULT_TIMEOUT_MS,
        help: 'per-request timeout',
      },
      {
        name: 'vault-rate-limit',
        type: 'string',
        arg: 'limit',
        default: `${rate.requestsPerSecond}/${rate.burst}/${rate.maxInFlight}`,
        help: 'requests to each Vault server: <per second>[/<burst>[/<in flight>]]; 0 = no rate limit. Sized to protect Vault from a refresh storm; every store on that server shares it',
      },
      {
        name: 'vault-server-rate-limit',
        type: 'string',
        arg: 'address>=<limit',
        multiple: true,
        help: 'the same for one server (repeatable), e.g. https://vault-b:8200=200/400',
      },
      {
        name: 'vault-role',
        type: 'string',
        arg: 'role',
        help: "log in with kubernetes auth as this role (the bootstrap policy's role)",
      },
      {
        name: 'vault-auth-mount',
        type: 'string',
        arg: 'path',
        default: DEFAULT_VAULT_AUTH_MOUNT,
        help: 'kubernetes auth mount for --vault-role',
      },
      {
        name: 'vault-sa-token-file',
        type: 'string',
        arg: 'path',
        default: DEFAULT_VAULT_SA_TOKEN_FILE,
        help: 'service account token for --vault-role',
      },
      {
        name: 'vault-token-file',
        type: 'string',
        arg: 'path',
        help: 'use the token in this file instead (env VAULT_TOKEN also works)',
      },
      ...VAULT_TARGET_FLAGS,
    ],
  },
  {
    title: 'Behaviour',
    flags: [
      ...BEHAVIOUR_FLAGS,
      {
        name: 'no-eso-kinds',
        type: 'boolean',
        help: 'do not reconcile SecretStore, ClusterSecretStore, ExternalSecret (then the controller needs no right on Secrets or ServiceAccount tokens)',
      },
      {
        name: 'workers',
        type: 'integer',
        arg: 'n',
        default: DEFAULT_WORKERS,
        help: 'concurrent reconciles per controller: they wait on I/O',
      },
      {
        name: 'drift-check',
        type: 'integer',
        arg: 'ms',
        default: DEFAULT_DRIFT_CHECK_MS,
        help: 're-read Vault policies/roles this often, ±10%',
      },
    ],
  },
  {
    title: 'Webhook certificate (kept by the leader only; off unless --webhook-cert-secret is given)',
    flags: [
      {
        name: 'webhook-cert-secret',
        type: 'string',
        arg: 'name',
        help: 'Secret holding the CA and the serving certificate (created if missing)',
      },
      {
        name: 'webhook-namespace',
        type: 'string',
        arg: 'ns',
        env: POD_NAMESPACE_ENV,
        default: DEFAULT_POD_NAMESPACE,
        help: 'namespace of that Secret and of the Service',
      },
      {
        name: 'webhook-service',
        type: 'string',
        arg: 'name',
        required: '--webhook-cert-secret',
        help: 'the webhook Service: its DNS names go into the certificate',
      },
      {
        name: 'webhook-config-selector',
        type: 'string',
        arg: 'sel',
        default: INJECT_SELECTOR,
        help: 'webhook configurations whose caBundle is injected',
      },
      {
        name: 'webhook-cert-days',
        type: 'integer',
        arg: 'n',
        min: 1,
        default: DEFAULT_LEAF_VALIDITY_DAYS,
        help: 'serving certificate validity in days',
      },
      {
        name: 'webhook-ca-days',
        type: 'integer',
        arg: 'n',
        min: 1,
        default: DEFAULT_CA_VALIDITY_DAYS,
        help: 'CA validity in days',
      },
    ],
  },
  CONTROLLER_AUDIT_SECTION,
  {
    title: 'Operations',
    flags: [
      {
        name: 'leader-elect',
        type: 'boolean',
        negation: 'no-leader-elect',
        default: true,
        help: 'Lease-based leader election',
      },
      {
        name: 'leader-election-namespace',
        type: 'string',
        arg: 'ns',
        env: POD_NAMESPACE_ENV,
        default: DEFAULT_POD_NAMESPACE,
        help: 'Lease namespace',
      },
      { name: 'leader-election-name', type: 'string', arg: 'name', default: DEFAULT_LEASE_NAME, help: 'Lease name' },
      {
        name: 'metrics-port',
        type: 'integer',
        arg: 'port',
        max: 65535,
        default: DEFAULT_CONTROLLER_METRICS_PORT,
        help: '/healthz, /readyz, /metrics; 0 = any free port',
      },
      LOG_LEVEL_FLAG,
      HELP_FLAG,
    ],
  },
];

const helpText = (flagsHelp: string): string => `Usage: vaultgate controller [options]

Runs the vaultgate reconcilers: VaultPolicy → Vault ACL policies, VaultRoleBinding → kubernetes-auth
roles, VaultGuardrail status, SecretStore/ClusterSecretStore validation, ExternalSecret → Secret. Only the
elected leader reconciles (and keeps the webhook certificate); standbys keep warm caches.

${flagsHelp}`;

const COMMAND = defineCommand('controller', CONTROLLER_SECTIONS, helpText);
export const { help: CONTROLLER_HELP, options: CONTROLLER_OPTIONS } = COMMAND;

export interface ControllerFlagDeps {
  /** Use this client instead of one built from --kubeconfig (tests, `vaultgate run` sharing one). */
  client?: KubeClient;
  log?: Logger;
  env?: NodeJS.ProcessEnv;
}

/** Flags → app options; throws with a message naming the flag. */
export function controllerOptionsFrom(values: FlagValues, deps: ControllerFlagDeps = {}): ControllerAppOptions {
  const env = deps.env ?? process.env;
  const flags = new FlagReader(CONTROLLER_SECTIONS, values, env);
  const str = (k: string): string | undefined => flags.string(k);

  const address = str('vault-addr');
  if (!address) throw new Error('--vault-addr (or VAULT_ADDR) is required');
  const shared = sharedOptionsFrom(flags);
  let auth: ControllerVaultAuth;
  const role = str('vault-role');
  const tokenFile = str('vault-token-file');
  if (role)
    auth = { method: 'kubernetes', role, mount: str('vault-auth-mount')!, tokenFile: str('vault-sa-token-file')! };
  else if (tokenFile) auth = { method: 'token', token: readFileSync(tokenFile, 'utf8').trim() };
  else if (env.VAULT_TOKEN) auth = { method: 'token', token: env.VAULT_TOKEN };
  else
    throw new Error(
      'the controller needs a Vault identity: --vault-role (kubernetes auth) or --vault-token-file / VAULT_TOKEN',
    );

  // 0 workers or a 0 ms timeout would stop the controller: taken as 1, as they always were.
  const workers = Math.max(1, flags.int('workers'));
  const timeoutMs = Math.max(1, flags.int('vault-timeout'));
  const rateLimits = vaultRateLimitsFrom(str('vault-rate-limit'), flags.list('vault-server-rate-limit'));
  const metricsPort = flags.int('metrics-port');
  const driftCheckMs = Math.max(1000, flags.int('drift-check'));

  const certSecret = str('webhook-cert-secret');
  const service = str('webhook-service');
  if (certSecret && !service)
    throw new Error('--webhook-service is required with --webhook-cert-secret (its DNS names go into the certificate)');
  if (!certSecret) {
    const stray = [
      'webhook-service',
      'webhook-namespace',
      'webhook-config-selector',
      'webhook-cert-days',
      'webhook-ca-days',
    ].find((k) => flags.given(k));
    if (stray) throw new Error(`--${stray} needs --webhook-cert-secret`);
  }
  const leafDays = flags.int('webhook-cert-days');
  const caDays = flags.int('webhook-ca-days');
  if (certSecret && caDays <= leafDays)
    throw new Error(`--webhook-ca-days (${caDays}) must be longer than --webhook-cert-days (${leafDays})`);

  const log = deps.log ?? createLogger({ level: str('log-level'), name: 'controller' });
  const client = deps.client ?? new HttpKubeClient(loadKubeConfig(str('kubeconfig')));
  const caFile = str('vault-ca-file');
  const vaultNamespace = str('vault-namespace');
  const identity = `${env.POD_NAME ?? hostname()}_${randomBytes(4).toString('hex')}`;
  const auditKeyFile = str('audit-key-file');
  const auditOn = flags.bool('audit') || auditKeyFile !== undefined;
  if (!auditOn) {
    const stray = ['audit-namespace', 'audit-file'].find((k) => flags.given(k));
    if (stray) throw new Error(`--${stray} needs --audit (or --audit-key-file)`);
  }
  return {
    client,
    vault: {
      address,
      timeoutMs,
      auth,
      rateLimits,
      ...(caFile ? { caPem: readFileSync(caFile, 'utf8') } : {}),
      ...(vaultNamespace ? { namespace: vaultNamespace } : {}),
    },
    ...shared,
    esoKinds: !flags.bool('no-eso-kinds'),
    workers,
    driftCheckMs,
    // The rollout coordinator's HMAC key lives in the controller's own namespace (controller/rollouts/hmac.ts).
    rolloutRestarts: { namespace: env[POD_NAMESPACE_ENV] ?? DEFAULT_POD_NAMESPACE },
    ...(flags.bool('leader-elect')
      ? {
          leaderElection: {
            namespace: str('leader-election-namespace')!,
            name: str('leader-election-name')!,
            identity,
          },
        }
      : {}),
    ...(certSecret && service
      ? {
          webhookCerts: {
            namespace: str('webhook-namespace')!,
            secretName: certSecret,
            service,
            configSelector: str('webhook-config-selector')!,
            leafValidityDays: leafDays,
            caValidityDays: caDays,
          },
        }
      : {}),
    ...(auditOn
      ? {
          audit: {
            replica: identity.replace(/\s/g, '-'),
            ...(auditKeyFile ? { keyFile: auditKeyFile } : { namespace: str('audit-namespace')! }),
            ...(str('audit-file') ? { file: str('audit-file') } : {}),
          },
        }
      : {}),
    metricsPort,
    log,
    eventsInstance: identity,
  };
}

/** --vault-rate-limit and the repeated --vault-server-rate-limit → the process's per-server limits. */
export function vaultRateLimitsFrom(defaults: string | undefined, perServer: unknown): VaultRateLimits {
  const servers = (Array.isArray(perServer) ? perServer : perServer === undefined ? [] : [perServer]).map((v) =>
    parseServerRateLimit(String(v), '--vault-server-rate-limit'),
  );
  return new VaultRateLimits(
    defaults === undefined ? DEFAULT_VAULT_RATE_LIMIT : parseRateLimit(defaults, '--vault-rate-limit'),
    Object.fromEntries(servers),
  );
}

export async function run(argv: string[]): Promise<number> {
  const opts = COMMAND.parse(argv, (values) => controllerOptionsFrom(values));
  if (typeof opts === 'number') return opts;
  const log = opts.log!;
  const app = buildControllerApp(opts);
  const signal = untilSignal();
  log.info(
    {
      vault: opts.vault.address,
      prefix: opts.namePrefix,
      workers: opts.workers,
      leaderElect: Boolean(opts.leaderElection),
      metricsPort: opts.metricsPort,
      certKeeper: Boolean(opts.webhookCerts),
    },
    'starting controller',
  );
  try {
    // A signal may arrive before the caches sync: stop() then also ends start().
    await Promise.race([
      app.start().then(() => {
        if (app.health) log.info({ port: app.health.port }, 'health and metrics listening');
      }),
      signal,
    ]);
    log.info({ signal: await signal }, 'shutting down');
  } finally {
    await app.stop();
  }
  return 0;
}
