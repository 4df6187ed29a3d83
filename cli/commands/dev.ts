// `vaultgate dev` (`npm run dev`): a local Kubernetes control plane and Vault with vaultgate running
// against them and the examples applied, torn down on Ctrl-C. With --kubeconfig and --vault-addr it runs
// the webhook and the controller against your cluster and Vault instead.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type DevEnvironment, defaultDevKubeconfig, DEV_NAMESPACE, EXAMPLES_DIR, startAgainstCluster, startLocalDev } from '../../test/harness/e2e-dev.ts';
import { baoAvailable, binaryPath, ensureUpstream, goAvailable, missingBinaries, upstreamBinDir } from '../../test/upstream/paths.ts';

export const summary = 'start a local apiserver + Vault, run vaultgate against them, apply the examples';

const HELP = `Usage: vaultgate dev [options]        (npm run dev)

Starts, on 127.0.0.1, a throwaway Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager
built from the upstream Go modules; the FIRST run builds them, which takes 10-15 minutes on 2 cores) and
Vault, runs \`vaultgate webhook\` and \`vaultgate controller\` against them, applies examples/*.yaml (except
bad-*.yaml) with a Vault secret for the ExternalSecret example, writes a kubeconfig and prints what to try.
Ctrl-C tears everything down.

Vault: a real bao/vault binary when VAULTGATE_BAO_BIN is set; otherwise vaultgate's Vault API simulator
(OpenBao cannot be built from the Go module proxy here), whose kubernetes auth checks every login with a
real TokenReview against the local kube-apiserver.

Options:
  --write-kubeconfig <path>   where to write the local cluster's kubeconfig (default ${defaultDevKubeconfig()})
  --kubeconfig <path>         run against YOUR cluster instead (needs --vault-addr and VAULT_TOKEN; the
                              CRDs must be installed; nothing is applied, admission is not re-routed)
  --vault-addr <url>          your Vault, with --kubeconfig
  --vault-token-file <path>   the controller's Vault token (default: env VAULT_TOKEN)
  -h, --help                  this help
`;

const out = (text: string): void => { process.stdout.write(text); };
const err = (text: string): void => { process.stderr.write(text); };
const log = (line: string): void => err(`${line}\n`);
const seconds = (t: number): string => ((performance.now() - t) / 1000).toFixed(1);

/** Exactly what is missing and how to get it, when the binaries are absent and Go cannot build them. */
export function missingToolchainMessage(missing: string[]): string {
  return [
    'vaultgate dev: cannot start a local cluster: these upstream binaries are missing and Go is not installed to build them:',
    ...missing.map((b) => `  ${b.padEnd(24)} expected at ${binaryPath(b as Parameters<typeof binaryPath>[0])}`),
    '',
    'Install Go >= 1.24 (https://go.dev/dl/) with access to the Go module proxy and run `npm run dev` again',
    `(or \`npm run upstream\` first). The binaries are cached in ${upstreamBinDir()}.`,
    'Or run vaultgate against an existing cluster: vaultgate dev --kubeconfig <path> --vault-addr <url> (VAULT_TOKEN set).',
    '',
  ].join('\n');
}

function readyBlock(env: DevEnvironment, startedMs: number): string {
  const k = env.kubectl;
  const vaultKind = env.vault === 'simulator' ? 'SIMULATED Vault (vaultgate\'s Vault API simulator)' : env.vault === 'bao' ? `real bao (${binaryPath('bao')})` : 'your Vault';
  const lines = [
    '',
    `  kubeconfig:   ${env.kubeconfigPath}`,
    `  VAULT_ADDR:   ${env.vaultAddr}   (${vaultKind})`,
    ...(env.vault === 'external' ? [] : [`  VAULT_TOKEN:  ${env.vaultToken}   (root token of this throwaway dev Vault)`]),
    `  webhook:      ${env.webhook.url}`,
    `  logs:         ${env.logDir}/ (webhook.log: logs and signed audit records; controller.log)`,
    ...(env.clusterDir ? [`  cluster:      ${env.clusterDir}/ (etcd data; logs/ of etcd, kube-apiserver, kube-controller-manager)`] : []),
    `  kubectl:      ${k}`,
    '',
  ];
  if (env.vault !== 'external') {
    lines.push(
      'Try:',
      `  export KUBECONFIG=${env.kubeconfigPath}`,
      `  ${k} apply -f ${EXAMPLES_DIR}/bad-vaultpolicy-sudo-sys.yaml   # refused by the webhook, naming field and rule`,
      `  ${k} get vp -n ${DEV_NAMESPACE} -o yaml                      # mutated: vaultName, managed-by label, who-applied annotations`,
      `  ${k} get secret app-db -n ${DEV_NAMESPACE} -o yaml           # synced from Vault by the ExternalSecret example`,
      '',
    );
  } else {
    lines.push(
      'Admission is not re-routed to this webhook: install the chart with webhook.urlOverride / webhook.caBundle',
      `pointing at ${env.webhook.url} if your apiserver can reach it.`,
      '',
    );
  }
  lines.push(`vaultgate dev: ready in ${seconds(startedMs)}s. Ctrl-C stops everything.`, '');
  return lines.join('\n');
}

/** Resolves on Ctrl-C / SIGTERM. Holds the event loop open until then or release(): the children are
 * unref'd and, against a user's cluster, nothing else in this process would keep it alive. */
function untilSignal(): { signal: Promise<string>; release: () => void } {
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const release = (): void => clearInterval(keepAlive);
  const signal = new Promise<string>((resolve) => {
    const on = (sig: string) => (): void => {
      release();
      resolve(sig);
    };
    process.once('SIGINT', on('SIGINT'));
    process.once('SIGTERM', on('SIGTERM'));
  });
  return { signal, release };
}

/** Starts the environment the flags ask for, or returns an exit code. */
async function start(str: (k: string) => string | undefined): Promise<DevEnvironment | number> {
  const kubeconfig = str('kubeconfig');
  const vaultAddr = str('vault-addr');
  if (kubeconfig || vaultAddr) {
    if (!kubeconfig || !vaultAddr) {
      err('vaultgate dev: --kubeconfig and --vault-addr go together (your cluster and your Vault)\n');
      return 2;
    }
    const tokenFile = str('vault-token-file');
    const vaultToken = tokenFile ? readFileSync(tokenFile, 'utf8').trim() : process.env.VAULT_TOKEN;
    if (!vaultToken) {
      err('vaultgate dev: the controller needs a Vault token: set VAULT_TOKEN or --vault-token-file\n');
      return 2;
    }
    log(`vaultgate dev: running the webhook and the controller against ${kubeconfig} and ${vaultAddr}`);
    return startAgainstCluster({ log, kubeconfig, vaultAddr, vaultToken });
  }
  const missing = missingBinaries();
  if (missing.length > 0) {
    if (!goAvailable()) {
      err(missingToolchainMessage(missing));
      return 1;
    }
    log(`vaultgate dev: building ${missing.join(', ')} from Go modules. The FIRST run takes 10-15 minutes on 2 cores; later runs start in seconds.`);
    await ensureUpstream({ log });
  }
  log(baoAvailable()
    ? `vaultgate dev: Vault is a real bao/vault dev server (${binaryPath('bao')})`
    : 'vaultgate dev: Vault is SIMULATED (vaultgate\'s Vault API simulator: OpenBao cannot be built here; set VAULTGATE_BAO_BIN for a real one). Kubernetes-auth logins are checked by a real TokenReview.');
  return startLocalDev({ log, kubeconfigOut: str('write-kubeconfig') ?? defaultDevKubeconfig() });
}

export async function run(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'write-kubeconfig': { type: 'string' }, kubeconfig: { type: 'string' }, 'vault-addr': { type: 'string' },
        'vault-token-file': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    err(`vaultgate dev: ${(e as Error).message}\n(see vaultgate dev --help)\n`);
    return 2;
  }
  if (values.help) { out(HELP); return 0; }
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  const started = performance.now();

  // A Ctrl-C during start-up exits at once; the process-group exit hooks (test/harness/processes.ts)
  // kill every child and remove the temp dirs.
  let ready = false;
  const { signal, release } = untilSignal();
  void signal.then((sig) => {
    if (ready) return;
    err(`\nvaultgate dev: ${sig} during start-up: cleaning up\n`);
    process.exit(130);
  });

  let env: DevEnvironment;
  try {
    const result = await start(str);
    if (typeof result === 'number') {
      release();
      return result;
    }
    env = result;
  } catch (e) {
    release(); // let the process exit with the error (the exit hooks clean up)
    throw e;
  }
  ready = true;
  out(readyBlock(env, started));
  const sig = await signal;
  const t = performance.now();
  log(`vaultgate dev: ${sig}: stopping`);
  await env.stop();
  log(`vaultgate dev: stopped in ${seconds(t)}s`);
  return 0;
}
