// `vaultgate webhook`: the validating + mutating admission webhook over HTTPS.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import { createLogger } from '../../observability/log.ts';
import { prefixProblem } from '../../schemas/vault-names.ts';
import { parseVaultTarget } from '../../policy/capabilities.ts';
import { buildWebhookProcess, type WebhookProcessOptions } from '../../webhook/main.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import { untilSignal } from './signals.ts';
import { allowedVaultServers, watchedNamespaces } from './flags.ts';
import { audiencesOf } from '../../kube/api-audiences.ts';

export const summary = 'serve the validating + mutating admission webhook (HTTPS)';

export const WEBHOOK_HELP = `Usage: vaultgate webhook [options]

Serves POST /mutate and POST /validate (AdmissionReview admission.k8s.io/v1) over HTTPS (TLS >= 1.2),
plus /healthz and /readyz; /metrics on a port of its own (--metrics-port). Decisions are the same as \`vaultgate validate\` makes offline.
The certificate files are re-read every 5 s and swapped in without a restart.

TLS:
  --tls-cert-file <path>       serving certificate (default /etc/vaultgate/tls/tls.crt)
  --tls-key-file <path>        its private key (default /etc/vaultgate/tls/tls.key)
  --host <addr>                listen address (default 0.0.0.0)
  --port <port>                listen port (default 8443)
  --client-ca-file <path>      require a client certificate verified by this CA on /mutate and /validate
                               (the apiserver's webhook client credentials); others get 401, unrecorded
  --client-subject <cn>        with --client-ca-file: a certificate subject (CN) accepted (repeatable;
                               default kube-apiserver-webhook-client); any other CN gets 401, unrecorded
  --metrics-port <port>        plain-HTTP GET /metrics, apart from the admission port (default 8081;
                               0 = any free port)

Cluster knowledge (guardrails, namespace labels, policies, stores; cached by informers):
  --kubeconfig <path>          kubeconfig (env KUBECONFIG; default in-cluster, then ~/.kube/config)
  --no-kube                    run without a cluster: built-in guardrails only (local trials)
  --namespace <ns>             read only this namespace (repeatable or comma-separated; default all): the
                               chart's watchNamespaces, whose Roles allow no cluster-wide list
  --service-account-token-file <path>
                               a token of the webhook's own ServiceAccount, read once at start for the
                               apiserver's audiences (its aud): a store asking for one is refused (rule
                               eso.store.token-audience). Default: the in-cluster token, when there is one

Behaviour (a capability the target Vault lacks is denied: OpenBao has scan, not subscribe/recover):
  --name-prefix <prefix>       prefix of Vault-side names <prefix>.<namespace>.<name> (default vaultgate)
  --controller-class <class>   ESO spec.controller class vaultgate serves (default: objects without a class)
  --allowed-vault-server <url> a Vault server secret stores may name (repeatable; the chart passes
                               vault.address); enforce guardrails add more per namespace. None: any server
  --vault-flavor <flavor>      the Vault policies go to: openbao (default) or vault (HashiCorp Vault)
  --vault-version <x.y>        its version (default 2.7 for openbao; required with --vault-flavor=vault)

Audit trail (hash-chained JSON lines on stdout, one signed checkpoint per batch; every decision is
written before it is answered):
  --audit / --no-audit         record every decision (default on)
  --audit-namespace <ns>       Secret vaultgate-audit-key and ConfigMap vaultgate-audit-jwks live here
                               (env POD_NAMESPACE; default vaultgate-system)
  --audit-key-file <path>      use this Ed25519 PEM key instead (vaultgate audit keygen makes one)
  --audit-file <path>          also append records to this file (rotated by size)
  --audit-fsync                fdatasync the file after every batch, before its decisions are answered
  --replica <id>               replica id in every record (env POD_NAME; default the hostname)

Operations:
  --drain-seconds <n>          keep serving this long after SIGTERM (default 5)
  --log-level <level>          trace|debug|info|warn|error (default info; env LOG_LEVEL)
  -h, --help                   this help
`;

export const WEBHOOK_OPTIONS = {
  'tls-cert-file': { type: 'string' }, 'tls-key-file': { type: 'string' }, host: { type: 'string' }, port: { type: 'string' },
  'client-ca-file': { type: 'string' }, 'client-subject': { type: 'string', multiple: true }, 'metrics-port': { type: 'string' }, 'audit-fsync': { type: 'boolean' },
  kubeconfig: { type: 'string' }, 'no-kube': { type: 'boolean' }, namespace: { type: 'string', multiple: true }, 'service-account-token-file': { type: 'string' },
  'name-prefix': { type: 'string' }, 'controller-class': { type: 'string' }, 'allowed-vault-server': { type: 'string', multiple: true },
  'vault-flavor': { type: 'string' }, 'vault-version': { type: 'string' },
  audit: { type: 'boolean' }, 'no-audit': { type: 'boolean' }, 'audit-namespace': { type: 'string' },
  'audit-key-file': { type: 'string' }, 'audit-file': { type: 'string' }, replica: { type: 'string' },
  'drain-seconds': { type: 'string' }, 'log-level': { type: 'string' }, help: { type: 'boolean', short: 'h' },
} as const;

type Values = Record<string, string | boolean | string[] | undefined>;

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
    throw new Error(`--service-account-token-file: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const audiences = audiencesOf(token);
  if (audiences.length === 0) throw new Error(`--service-account-token-file: ${path} holds no ServiceAccount token with an audience`);
  return { apiServerAudiences: audiences };
}

/** The webhook's /metrics port by default (the controller's is 8080: both fit in `vaultgate run`). */
export const DEFAULT_WEBHOOK_METRICS_PORT = 8081;

/** --client-subject: CNs, only with --client-ca-file (a pin without client authentication would pin nothing). */
function clientSubjectsFrom(v: unknown, clientAuth: boolean): { clientSubjects?: string[] } {
  const subjects = (Array.isArray(v) ? v : []).flatMap((x) => String(x).split(',')).map((x) => x.trim()).filter(Boolean);
  if (subjects.length === 0) return {};
  if (!clientAuth) throw new Error('--client-subject needs --client-ca-file: without client certificates there is no subject to pin');
  return { clientSubjects: subjects };
}

/** Flags → process options; throws with a message naming the flag. */
export function webhookOptionsFrom(values: Values): WebhookProcessOptions {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  const int = (k: string, dflt: number): number => {
    const v = str(k);
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--${k} must be a whole number between 0 and 65535, got "${v}"`);
    return n;
  };
  const namePrefix = str('name-prefix') ?? 'vaultgate';
  const problem = prefixProblem(namePrefix);
  if (problem) throw new Error(`--name-prefix: ${problem}`);
  const vaultTarget = parseVaultTarget(str('vault-flavor'), str('vault-version'));
  const logger = createLogger({ level: str('log-level'), name: 'webhook' });
  const client = values['no-kube'] ? undefined : new HttpKubeClient(loadKubeConfig(str('kubeconfig')));
  const auditOn = values['no-audit'] ? false : (values.audit ?? true);
  const keyFile = str('audit-key-file');
  return {
    host: str('host') ?? '0.0.0.0',
    port: int('port', 8443),
    certFile: str('tls-cert-file') ?? '/etc/vaultgate/tls/tls.crt',
    keyFile: str('tls-key-file') ?? '/etc/vaultgate/tls/tls.key',
    ...(client ? { client } : {}),
    namePrefix,
    controllerClass: str('controller-class') ?? '',
    vaultTarget,
    ...(allowedVaultServers(values['allowed-vault-server']) ?? {}),
    ...(watchedNamespaces(values.namespace) ? { namespaces: watchedNamespaces(values.namespace) } : {}),
    ...apiServerAudiencesFrom(str('service-account-token-file')),
    logger,
    drainSeconds: int('drain-seconds', 5),
    ...(auditOn ? {
      audit: {
        replica: str('replica') ?? process.env.POD_NAME ?? hostname(),
        ...(keyFile ? { keyFile } : { namespace: str('audit-namespace') ?? process.env.POD_NAMESPACE ?? 'vaultgate-system' }),
        ...(str('audit-file') ? { file: str('audit-file') } : {}),
        ...(values['audit-fsync'] ? { fsync: true } : {}),
      },
    } : {}),
    ...(str('client-ca-file') ? { clientCaFile: str('client-ca-file') } : {}),
    ...clientSubjectsFrom(values['client-subject'], str('client-ca-file') !== undefined),
    metricsPort: int('metrics-port', DEFAULT_WEBHOOK_METRICS_PORT),
  };
}

export { untilSignal };

export async function run(argv: string[]): Promise<number> {
  let values: Values;
  try {
    ({ values } = parseArgs({ args: argv, options: WEBHOOK_OPTIONS, strict: true }));
  } catch (err) {
    process.stderr.write(`vaultgate webhook: ${(err as Error).message}\n(see vaultgate webhook --help)\n`);
    return 2;
  }
  if (values.help) { process.stdout.write(WEBHOOK_HELP); return 0; }
  let opts: WebhookProcessOptions;
  try {
    opts = webhookOptionsFrom(values);
  } catch (err) {
    process.stderr.write(`vaultgate webhook: ${(err as Error).message}\n`);
    return 2;
  }
  const proc = buildWebhookProcess(opts);
  const signal = untilSignal();
  await proc.start();
  opts.logger.info({ signal: await signal }, 'shutting down');
  await proc.stop();
  return 0;
}
