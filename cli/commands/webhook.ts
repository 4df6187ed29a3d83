// `vaultgate webhook`: the validating + mutating admission webhook over HTTPS.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import { createLogger } from '../../observability/log.ts';
import {
  DEFAULT_ADMISSION_WORKERS,
  DEFAULT_DRAIN_SECONDS,
  DEFAULT_TLS_CERT_FILE,
  DEFAULT_TLS_KEY_FILE,
  DEFAULT_WEBHOOK_HOST,
  DEFAULT_WEBHOOK_METRICS_PORT,
  DEFAULT_WEBHOOK_PORT,
  MAX_ADMISSION_WORKERS,
} from '../../webhook/defaults.ts';
import { DEFAULT_CLIENT_SUBJECTS } from '../../webhook/http-app.ts';
import { buildWebhookProcess, type WebhookProcessOptions } from '../../webhook/main.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import { untilSignal } from './signals.ts';
import { defineCommand, type Flag, FlagReader, type FlagSection, type FlagValues, HELP_FLAG } from './flags.ts';
import {
  AUDIT_STORE_FLAGS,
  BEHAVIOUR_FLAGS,
  KUBECONFIG_FLAG,
  LOG_LEVEL_FLAG,
  NAMESPACE_FLAG,
  sharedOptionsFrom,
  VAULT_TARGET_FLAGS,
} from './shared-flags.ts';
import { audiencesOf } from '../../kube/api-audiences.ts';

export { DEFAULT_WEBHOOK_METRICS_PORT };

/** --metrics-port of `vaultgate webhook`; `vaultgate run` gives the webhook WEBHOOK_METRICS_PORT_IN_RUN instead. */
export const WEBHOOK_METRICS_PORT_FLAG: Flag = {
  name: 'metrics-port',
  type: 'integer',
  arg: 'port',
  max: 65535,
  default: DEFAULT_WEBHOOK_METRICS_PORT,
  help: 'plain-HTTP GET /metrics, apart from the admission port; 0 = any free port',
};

/** --admission-workers: `vaultgate run` leaves it out (one process with the controller: 1). */
export const ADMISSION_WORKERS_FLAG: Flag = {
  name: 'admission-workers',
  type: 'integer',
  arg: 'n',
  min: 1,
  max: MAX_ADMISSION_WORKERS,
  default: DEFAULT_ADMISSION_WORKERS,
  help: 'processes answering reviews (one audit trail writer for all); 1 = this process alone',
};

/** Every flag of `vaultgate webhook`, by help section. */
export const WEBHOOK_SECTIONS: readonly FlagSection[] = [
  {
    title: 'TLS',
    flags: [
      {
        name: 'tls-cert-file',
        type: 'string',
        arg: 'path',
        default: DEFAULT_TLS_CERT_FILE,
        help: 'serving certificate',
      },
      { name: 'tls-key-file', type: 'string', arg: 'path', default: DEFAULT_TLS_KEY_FILE, help: 'its private key' },
      { name: 'host', type: 'string', arg: 'addr', default: DEFAULT_WEBHOOK_HOST, help: 'listen address' },
      { name: 'port', type: 'integer', arg: 'port', max: 65535, default: DEFAULT_WEBHOOK_PORT, help: 'listen port' },
      {
        name: 'client-ca-file',
        type: 'string',
        arg: 'path',
        help: "require a client certificate verified by this CA on /mutate and /validate (the apiserver's webhook client credentials); others get 401, unrecorded",
      },
      {
        name: 'client-subject',
        type: 'string',
        arg: 'cn',
        multiple: true,
        defaultHelp: DEFAULT_CLIENT_SUBJECTS.join(', '),
        help: 'with --client-ca-file: a certificate subject (CN) accepted (repeatable); any other CN gets 401, unrecorded',
      },
      WEBHOOK_METRICS_PORT_FLAG,
    ],
  },
  {
    title: 'Cluster knowledge (guardrails, namespace labels, policies, stores; cached by informers)',
    flags: [
      KUBECONFIG_FLAG,
      { name: 'no-kube', type: 'boolean', help: 'run without a cluster: built-in guardrails only (local trials)' },
      NAMESPACE_FLAG,
      {
        name: 'service-account-token-file',
        type: 'string',
        arg: 'path',
        defaultHelp: 'the in-cluster token, when there is one',
        help: "a token of the webhook's own ServiceAccount, read once at start for the apiserver's audiences (its aud): a store asking for one is refused (rule eso.store.token-audience)",
      },
    ],
  },
  {
    title: 'Behaviour',
    flags: [...BEHAVIOUR_FLAGS, ...VAULT_TARGET_FLAGS],
  },
  {
    title: 'Audit trail (hash-chained JSON lines on stdout, signed per batch; recorded before it is answered)',
    flags: [
      { name: 'audit', type: 'boolean', negation: 'no-audit', default: true, help: 'record every decision' },
      ...AUDIT_STORE_FLAGS,
      {
        name: 'audit-fsync',
        type: 'boolean',
        help: 'fdatasync the file after every batch, before its decisions are answered',
      },
      {
        name: 'replica',
        type: 'string',
        arg: 'id',
        env: 'POD_NAME',
        defaultHelp: 'the hostname',
        help: 'replica id in every record',
      },
    ],
  },
  {
    title: 'Operations',
    flags: [
      {
        name: 'drain-seconds',
        type: 'integer',
        arg: 'n',
        max: 65535,
        default: DEFAULT_DRAIN_SECONDS,
        help: 'keep serving this long after SIGTERM',
      },
      ADMISSION_WORKERS_FLAG,
      LOG_LEVEL_FLAG,
      HELP_FLAG,
    ],
  },
];

const helpText = (flagsHelp: string): string => `Usage: vaultgate webhook [options]

Serves POST /mutate and POST /validate (AdmissionReview admission.k8s.io/v1) over HTTPS (TLS >= 1.2),
plus /healthz and /readyz; /metrics on a port of its own (--metrics-port). Decisions are the same as
\`vaultgate validate\` makes offline. The certificate files are re-read every 5 s and swapped in without a
restart.

${flagsHelp}`;

const COMMAND = defineCommand('webhook', WEBHOOK_SECTIONS, helpText);
export const { help: WEBHOOK_HELP, options: WEBHOOK_OPTIONS } = COMMAND;

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * The apiserver's own audiences, from the `aud` of a token the kubelet projected with no audience asked
 * (the pod's own ServiceAccount token): `--service-account-token-file`, or the in-cluster one when it
 * exists. Unknown (no file) = rule eso.store.token-audience is left to the controller.
 */
function apiServerAudiencesFrom(file: string | undefined): { apiServerAudiences?: string[] } {
  const path = file ?? (existsSync(IN_CLUSTER_TOKEN) ? IN_CLUSTER_TOKEN : undefined);
  if (!path) return {};
  let token: string;
  try {
    token = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new Error(
      `--service-account-token-file: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  const audiences = audiencesOf(token);
  if (audiences.length === 0)
    throw new Error(`--service-account-token-file: ${path} holds no ServiceAccount token with an audience`);
  return { apiServerAudiences: audiences };
}

/** --client-subject: CNs, only with --client-ca-file (a pin without client authentication would pin nothing). */
function clientSubjectsFrom(v: unknown, clientAuth: boolean): { clientSubjects?: string[] } {
  const subjects = (Array.isArray(v) ? v : [])
    .flatMap((x) => String(x).split(','))
    .map((x) => x.trim())
    .filter(Boolean);
  if (subjects.length === 0) return {};
  if (!clientAuth)
    throw new Error('--client-subject needs --client-ca-file: without client certificates there is no subject to pin');
  return { clientSubjects: subjects };
}

/** Flags → process options; throws with a message naming the flag. */
export function webhookOptionsFrom(values: FlagValues): WebhookProcessOptions {
  const flags = new FlagReader(WEBHOOK_SECTIONS, values);
  const str = (k: string): string | undefined => flags.string(k);
  const shared = sharedOptionsFrom(flags);
  const logger = createLogger({ level: str('log-level'), name: 'webhook' });
  const client = flags.bool('no-kube') ? undefined : new HttpKubeClient(loadKubeConfig(str('kubeconfig')));
  const keyFile = str('audit-key-file');
  return {
    host: str('host')!,
    port: flags.int('port'),
    certFile: str('tls-cert-file')!,
    keyFile: str('tls-key-file')!,
    ...(client ? { client } : {}),
    ...shared,
    ...apiServerAudiencesFrom(str('service-account-token-file')),
    logger,
    drainSeconds: flags.int('drain-seconds'),
    ...(flags.bool('audit')
      ? {
          audit: {
            replica: str('replica') ?? hostname(),
            ...(keyFile ? { keyFile } : { namespace: str('audit-namespace')! }),
            ...(str('audit-file') ? { file: str('audit-file') } : {}),
            ...(flags.bool('audit-fsync') ? { fsync: true } : {}),
          },
        }
      : {}),
    ...(str('client-ca-file') ? { clientCaFile: str('client-ca-file') } : {}),
    ...clientSubjectsFrom(flags.list('client-subject'), str('client-ca-file') !== undefined),
    metricsPort: flags.int('metrics-port'),
    admissionWorkers: flags.int('admission-workers'),
  };
}

export { untilSignal };

export async function run(argv: string[]): Promise<number> {
  const opts = COMMAND.parse(argv, (values) => webhookOptionsFrom(values));
  if (typeof opts === 'number') return opts;
  const proc = buildWebhookProcess(opts);
  const signal = untilSignal();
  await proc.start();
  opts.logger.info({ signal: await signal }, 'shutting down');
  await proc.stop();
  return 0;
}
