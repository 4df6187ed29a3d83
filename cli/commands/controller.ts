// `vaultgate controller`: run the reconcilers (VaultPolicy, VaultRoleBinding, SecretStore,
// ClusterSecretStore, ExternalSecret) against Kubernetes and Vault, leader-elected.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../observability/log.ts';
import { buildControllerApp, type ControllerVaultAuth } from '../../controller/main.ts';
import { HttpKubeClient } from '../../controller/runtime/http-kube-client.ts';
import { prefixProblem } from '../../schemas/vault-names.ts';

export const summary = 'run the reconcilers (leader-elected) against Kubernetes and Vault';

const HELP = `Usage: vaultgate controller [options]

Runs the vaultgate reconcilers: VaultPolicy → Vault ACL policies, VaultRoleBinding → kubernetes-auth
roles, SecretStore/ClusterSecretStore validation, ExternalSecret → Secret. Only the elected leader
reconciles; standbys keep warm caches.

Kubernetes:
  --kubeconfig <path>            kubeconfig file (env KUBECONFIG; default: in-cluster, then ~/.kube/config)
  --namespace <ns>               watch only this namespace (default: all namespaces)

Vault (the controller's own identity; tenants' stores use their own):
  --vault-addr <url>             Vault address (env VAULT_ADDR) [required]
  --vault-ca-file <path>         PEM CA bundle to trust for Vault (env VAULT_CACERT)
  --vault-namespace <ns>         Vault Enterprise / OpenBao namespace (env VAULT_NAMESPACE)
  --vault-timeout <ms>           per-request timeout (default 10000)
  --vault-role <role>            log in with kubernetes auth as this role (the bootstrap policy's role)
  --vault-auth-mount <path>      kubernetes auth mount for --vault-role (default kubernetes)
  --vault-sa-token-file <path>   service account token for --vault-role
                                 (default /var/run/secrets/kubernetes.io/serviceaccount/token)
  --vault-token-file <path>      use the token in this file instead (env VAULT_TOKEN also works)

Behaviour:
  --name-prefix <prefix>         prefix of Vault names <prefix>.<namespace>.<name> (default vaultgate)
  --controller-class <class>     ESO spec.controller class to serve (default: stores without a class)
  --workers <n>                  concurrent reconciles per controller (default 4)
  --drift-check <ms>             re-read Vault policies/roles this often (default 300000, ±10%)

Operations:
  --leader-elect / --no-leader-elect   Lease-based leader election (default on)
  --leader-election-namespace <ns>     Lease namespace (env POD_NAMESPACE; default vaultgate-system)
  --leader-election-name <name>        Lease name (default vaultgate-controller)
  --metrics-port <port>                /healthz, /readyz, /metrics (default 8080; 0 = random)
  --log-level <level>                  trace|debug|info|warn|error (default info; env LOG_LEVEL)
  -h, --help                           this help
`;

export async function run(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        kubeconfig: { type: 'string' }, namespace: { type: 'string' },
        'vault-addr': { type: 'string' }, 'vault-ca-file': { type: 'string' }, 'vault-namespace': { type: 'string' },
        'vault-timeout': { type: 'string' }, 'vault-role': { type: 'string' }, 'vault-auth-mount': { type: 'string' },
        'vault-sa-token-file': { type: 'string' }, 'vault-token-file': { type: 'string' },
        'name-prefix': { type: 'string' }, 'controller-class': { type: 'string' }, workers: { type: 'string' }, 'drift-check': { type: 'string' },
        'leader-elect': { type: 'boolean' }, 'no-leader-elect': { type: 'boolean' },
        'leader-election-namespace': { type: 'string' }, 'leader-election-name': { type: 'string' },
        'metrics-port': { type: 'string' }, 'log-level': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`vaultgate controller: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? (values[k]) : undefined);
  const int = (k: string, dflt: number): number => {
    const v = str(k);
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${k} must be a non-negative integer`);
    return n;
  };
  const usage = (msg: string): number => {
    process.stderr.write(`vaultgate controller: ${msg}\n(see vaultgate controller --help)\n`);
    return 2;
  };

  const address = str('vault-addr') ?? process.env.VAULT_ADDR;
  if (!address) return usage('--vault-addr (or VAULT_ADDR) is required');
  const prefix = str('name-prefix') ?? 'vaultgate';
  const problem = prefixProblem(prefix);
  if (problem) return usage(problem);
  let auth: ControllerVaultAuth;
  const role = str('vault-role');
  const tokenFile = str('vault-token-file');
  if (role) auth = { method: 'kubernetes', role, mount: str('vault-auth-mount') ?? 'kubernetes', ...(str('vault-sa-token-file') ? { tokenFile: str('vault-sa-token-file') } : {}) };
  else if (tokenFile) auth = { method: 'token', token: readFileSync(tokenFile, 'utf8').trim() };
  else if (process.env.VAULT_TOKEN) auth = { method: 'token', token: process.env.VAULT_TOKEN };
  else return usage('the controller needs a Vault identity: --vault-role (kubernetes auth) or --vault-token-file / VAULT_TOKEN');

  let workers: number, timeoutMs: number, metricsPort: number, driftCheckMs: number;
  try {
    workers = Math.max(1, int('workers', 4));
    timeoutMs = Math.max(1, int('vault-timeout', 10_000));
    metricsPort = int('metrics-port', 8080);
    driftCheckMs = Math.max(1000, int('drift-check', 300_000));
  } catch (err) {
    return usage((err as Error).message);
  }

  const log = createLogger({ level: str('log-level'), name: 'controller' });
  const kc = new KubeConfig();
  const kubeconfig = str('kubeconfig') ?? process.env.KUBECONFIG;
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  const client = new HttpKubeClient(kc);
  const caFile = str('vault-ca-file') ?? process.env.VAULT_CACERT;
  const identity = `${process.env.POD_NAME ?? hostname()}_${randomBytes(4).toString('hex')}`;
  const leaderElect = values['no-leader-elect'] ? false : values['leader-elect'] ?? true;

  const app = buildControllerApp({
    client,
    vault: { address, timeoutMs, auth, ...(caFile ? { caPem: readFileSync(caFile, 'utf8') } : {}), ...((str('vault-namespace') ?? process.env.VAULT_NAMESPACE) ? { namespace: str('vault-namespace') ?? process.env.VAULT_NAMESPACE } : {}) },
    namePrefix: prefix, controllerClass: str('controller-class') ?? '', workers, driftCheckMs,
    ...(str('namespace') ? { namespace: str('namespace') } : {}),
    ...(leaderElect ? { leaderElection: { namespace: str('leader-election-namespace') ?? process.env.POD_NAMESPACE ?? 'vaultgate-system', name: str('leader-election-name') ?? 'vaultgate-controller', identity } } : {}),
    metricsPort, log, eventsInstance: identity,
  });

  const stopped = new Promise<void>((resolve) => {
    const onSignal = (sig: string): void => {
      log.info({ signal: sig }, 'shutting down');
      resolve();
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  log.info({ vault: address, prefix, workers, leaderElect, metricsPort }, 'starting controller');
  await app.start();
  if (app.health) log.info({ port: app.health.port }, 'health and metrics listening');
  await stopped;
  await app.stop();
  return 0;
}
