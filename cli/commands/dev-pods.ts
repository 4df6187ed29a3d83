// `vaultgate dev --pods`: the real thing, locally. A one-node cluster (kubelet on containerd, kube-proxy,
// the bridge CNI: test/harness/node/), the vaultgate image built from this checkout without Docker
// (test/image/), `helm install` of the chart with that image, a real OpenBao 2.7.2 the pods reach on the
// node IP, and the examples applied. Needs root on Linux (containerd, cgroups, network namespaces);
// the first run installs Debian's containerd/runc/CNI plugins/nftables and builds the node binaries.
// Ctrl-C tears everything down, host network and cgroups included.
import { join } from 'node:path';
import {
  applyExamples,
  DEV_NAMESPACE,
  EXAMPLE_VAULT_DATA,
  EXAMPLES_DIR,
  writeToolsDir,
} from '../../test/harness/e2e-dev.ts';
import { startNodeCluster, type NodeCluster } from '../../test/harness/node/cluster.ts';
import { NODE_IP, NODE_ROOT } from '../../test/harness/node/layout.ts';
import {
  grantControllerVaultIdentity,
  helmInstall,
  RELEASE,
  RELEASE_NS,
} from '../../test/harness/node/vaultgate-release.ts';
import { vaultRequest } from '../../test/harness/vault.ts';
import { buildVaultgateImage } from '../../test/image/images.ts';
import { nodeUnsupportedReason } from '../../test/upstream/node-binaries.ts';
import { runSetup, setupSteps } from '../../test/upstream/setup.ts';
import { defineCommand, type FlagSection, HELP_FLAG } from './flags.ts';

/** Every flag of `vaultgate dev --pods`: only --help. */
export const DEV_PODS_SECTIONS: readonly FlagSection[] = [{ title: 'Options', flags: [HELP_FLAG] }];

const helpText = (flagsHelp: string): string => `Usage: vaultgate dev --pods [options]     (sudo npm run dev -- --pods)

Runs vaultgate as \`helm install\` runs it, on a throwaway one-node cluster on this machine: etcd,
kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy and a kubelet on containerd (pods on
bridge ${NODE_IP}/24), the vaultgate image built from this checkout (no Docker), the chart installed with
it (2 webhook and 2 controller pods), a real OpenBao 2.7.2 dev server on ${NODE_IP}, and examples/ applied.
Needs root on Linux. The first run installs containerd, runc, the CNI plugins and nftables (apt-get) and
builds the Kubernetes binaries from Go modules (10-20 minutes on 2 cores). Ctrl-C removes everything it
created, on disk (${NODE_ROOT}) and in the host's network.

${flagsHelp}`;

const COMMAND = defineCommand('dev --pods', DEV_PODS_SECTIONS, helpText);
export const { help: DEV_PODS_HELP, options: DEV_PODS_OPTIONS } = COMMAND;

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

export async function run(argv: string[]): Promise<number> {
  // Only --help to read: an exit code when there is nothing to run.
  const exit = COMMAND.parse(argv, () => undefined);
  if (exit !== undefined) return exit;
  const unsupported = nodeUnsupportedReason();
  if (unsupported) {
    process.stderr.write(`vaultgate dev --pods: ${unsupported}\n`);
    return 1;
  }
  const started = performance.now();
  const keepAlive = setInterval(() => undefined, 1 << 30);
  let cluster: NodeCluster | undefined;
  const stop = async (): Promise<void> => {
    clearInterval(keepAlive);
    const left = await cluster?.stop();
    if (left?.length) process.stderr.write(`vaultgate dev --pods: could not remove: ${left.join(' / ')}\n`);
  };
  const signalled = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  try {
    await runSetup({ log, steps: setupSteps(['cluster', 'node']) });
    const image = await buildVaultgateImage({ log });
    cluster = await startNodeCluster({ images: [image], log });
    const cp = cluster.cp;
    await cp.startVault({ host: NODE_IP });
    await grantControllerVaultIdentity(cp);
    log(`[dev --pods] helm install ${RELEASE} (image ${image.ref}) ...`);
    await helmInstall(cp, image);
    for (const [path, data] of Object.entries(EXAMPLE_VAULT_DATA))
      await vaultRequest({ addr: cp.vaultAddr ?? '', token: cp.vaultToken ?? '' }, 'POST', path, { data });
    await applyExamples(
      (args, stdin) => cp.kubectl(args, stdin === undefined ? {} : { stdin }),
      cp.vaultAddr ?? '',
      log,
    );
    // The commands below name kubectl (and bao, helm) as a user types them: from a bin/ put first on PATH.
    const binDir = join(cp.dir, 'bin');
    writeToolsDir(binDir, 'openbao');
    process.stdout.write(
      [
        '',
        `  kubeconfig:   ${cp.kubeconfigPath}`,
        `  VAULT_ADDR:   ${cp.vaultAddr}   (real OpenBao dev server on the node IP)`,
        `  VAULT_TOKEN:  ${cp.vaultToken}   (root token of this throwaway dev OpenBao)`,
        `  release:      ${RELEASE} in namespace ${RELEASE_NS}, image ${image.ref}`,
        `  tools:        ${binDir} (kubectl, helm, bao)`,
        '',
        'Try:',
        `  export PATH=${binDir}:$PATH KUBECONFIG=${cp.kubeconfigPath} VAULT_ADDR=${cp.vaultAddr ?? ''} VAULT_TOKEN=${cp.vaultToken ?? ''}`,
        `  kubectl -n ${RELEASE_NS} get pods -o wide                              # 2 webhook + 2 controller pods`,
        `  kubectl apply -f ${EXAMPLES_DIR}/bad-vaultpolicy-sudo-sys.yaml   # refused by the webhook pods, through their Service`,
        `  kubectl get vp -n ${DEV_NAMESPACE}                                        # written to OpenBao by the leader controller pod`,
        `  kubectl -n ${RELEASE_NS} delete pod -l app.kubernetes.io/component=controller --wait=false   # watch the Lease move`,
        `  bao policy read vaultgate.${DEV_NAMESPACE}.app-read                           # the policy as OpenBao holds it`,
        '',
        `vaultgate dev --pods: ready in ${((performance.now() - started) / 1000).toFixed(1)}s. Ctrl-C stops everything.`,
        '',
      ].join('\n'),
    );
    const sig = await signalled;
    log(`\nvaultgate dev --pods: ${sig}: tearing down`);
    await stop();
    return 0;
  } catch (e) {
    process.stderr.write(`vaultgate dev --pods: ${(e as Error).message}\n`);
    await stop();
    return 1;
  }
}
