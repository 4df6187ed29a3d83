// The environment behind `vaultgate dev`: a local control plane (etcd + kube-apiserver +
// kube-controller-manager from test/upstream), Vault (the simulator, or a real bao when
// VAULTGATE_BAO_BIN is set), `vaultgate webhook` and `vaultgate controller` as child processes, and the
// examples applied. Or, against a user's cluster and Vault, only the two vaultgate processes.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { generateCA, issueServingCert } from '../../certs/generate.ts';
import { baoAvailable, binaryPath } from '../upstream/paths.ts';
import { type ControlPlane, startControlPlane } from './control-plane.ts';
import { type ClusterTarget, REPO_ROOT, VaultgateProcesses, type WebhookHandle } from './e2e-processes.ts';
import { installAllCRDs, toYaml } from './e2e-stack.ts';
import { type SimulatedVault, startSimulatedVault, vaultCall } from './e2e-vault.ts';
import { runTool } from './tools.ts';

type Obj = Record<string, unknown> & { kind?: string; metadata?: { name?: string; namespace?: string } };
type Log = (line: string) => void;

export const EXAMPLES_DIR = join(REPO_ROOT, 'examples');
export const DEV_NAMESPACE = 'team-a';

export interface DevEnvironment {
  kubeconfigPath: string;
  vaultAddr: string;
  vaultToken: string;
  /** 'simulator' | 'bao' | 'external' */
  vault: 'simulator' | 'bao' | 'external';
  kubectl: string;
  webhook: WebhookHandle;
  logDir: string;
  /** The local control plane's temp dir (none against a user's cluster). */
  clusterDir?: string;
  /** Directories whose processes and files belong to this environment (for leak checks). */
  dirs: string[];
  stop(): Promise<void>;
}

/**
 * Objects the examples assume but do not define. Empty: examples/00-namespace.yaml and
 * examples/eso-vault-access.yaml define the namespace, ServiceAccounts, policy and binding themselves.
 */
export const SUPPORTING_OBJECTS: Obj[] = [];

/** The Vault data the ExternalSecret example reads (made-up development values). */
export const EXAMPLE_VAULT_DATA: Record<string, Record<string, string>> = {
  'secret/data/team-a/db': { username: 'app', password: 'dev-only-password' },
  'secret/data/team-a/app-config': { LOG_LEVEL: 'debug', FEATURE_FLAGS: 'search,export' },
};

const STORE_KINDS = new Set(['SecretStore', 'ClusterSecretStore']);
const PHASES: Array<(o: Obj) => boolean> = [
  (o) => !STORE_KINDS.has(o.kind ?? '') && o.kind !== 'ExternalSecret',
  (o) => STORE_KINDS.has(o.kind ?? ''),
  (o) => o.kind === 'ExternalSecret',
];

/** examples/*.yaml except bad-*.yaml, as objects; stores point at `vaultAddr` (no CA: the local Vault speaks http). */
export function exampleObjects(vaultAddr: string, dir = EXAMPLES_DIR): Obj[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && !f.startsWith('bad-')).sort();
  const out: Obj[] = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, f), 'utf8'))) {
      const obj = doc.toJS() as Obj | null;
      if (!obj?.kind) continue;
      const vault = (obj.spec as { provider?: { vault?: Record<string, unknown> } } | undefined)?.provider?.vault;
      if (STORE_KINDS.has(obj.kind) && vault) {
        vault.server = vaultAddr;
        delete vault.caProvider;
        delete vault.caBundle;
      }
      out.push(obj);
    }
  }
  return out;
}

/** Applies the supporting objects and the examples in dependency order: policies and bindings, stores once their roles exist, then ExternalSecrets. */
export async function applyExamples(kubectl: (args: string[], stdin?: string) => Promise<string>, vaultAddr: string, log: Log): Promise<void> {
  const all = [...SUPPORTING_OBJECTS, ...exampleObjects(vaultAddr)];
  for (const [i, inPhase] of PHASES.entries()) {
    const batch = all.filter(inPhase);
    if (batch.length > 0) log((await kubectl(['apply', '-f', '-'], toYaml(batch))).trim());
    // A store whose role does not exist yet is re-validated only minutes later: wait for the bindings.
    if (i === 0) await kubectl(['wait', '--for=condition=Ready', '--timeout=120s', '-n', DEV_NAMESPACE, 'vaultrolebinding', '--all']);
  }
}

async function writeVaultData(addr: string, token: string): Promise<void> {
  for (const [path, data] of Object.entries(EXAMPLE_VAULT_DATA)) {
    const res = await vaultCall(addr, token, 'POST', path, { data });
    if (res.status >= 300) throw new Error(`writing ${path} to Vault: HTTP ${res.status}`);
  }
}

/** Local control plane + Vault + vaultgate, examples applied. */
export async function startLocalDev(opts: { log: Log; kubeconfigOut: string }): Promise<DevEnvironment> {
  const { log } = opts;
  const useBao = baoAvailable();
  const cp: ControlPlane = await startControlPlane({ controllerManager: true, vault: useBao, log });
  let sim: SimulatedVault | undefined;
  let procs: VaultgateProcesses | undefined;
  const stop = async (): Promise<void> => {
    await procs?.stopAll();
    await sim?.stop();
    await cp.stop();
    rmSync(opts.kubeconfigOut, { force: true });
  };
  try {
    await installAllCRDs(cp);
    await cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vaultgate-system' } });
    let vaultAddr: string;
    let vaultToken: string;
    if (useBao && cp.vaultAddr && cp.vaultToken) {
      vaultAddr = cp.vaultAddr;
      vaultToken = cp.vaultToken;
    } else {
      sim = await startSimulatedVault(cp, { log });
      vaultAddr = sim.addr;
      vaultToken = sim.rootToken;
    }
    procs = new VaultgateProcesses(cp, { log });
    const webhook = await procs.startWebhook();
    await cp.registerWebhooks({ url: webhook.url, caBundlePem: webhook.caPem });
    await procs.startController({ vaultAddr, vaultToken, driftCheckMs: 30_000 });
    await writeVaultData(vaultAddr, vaultToken);
    await applyExamples((args, stdin) => cp.kubectl(args, stdin === undefined ? {} : { stdin }), vaultAddr, log);
    // "ready" means the third command to try shows a synced Secret.
    await cp.kubectl(['wait', '--for=condition=Ready', '--timeout=120s', '-n', DEV_NAMESPACE, 'externalsecret', '--all']);
    mkdirSync(dirname(opts.kubeconfigOut), { recursive: true });
    writeFileSync(opts.kubeconfigOut, readFileSync(cp.kubeconfigPath), { mode: 0o600 });
    return {
      kubeconfigPath: opts.kubeconfigOut, vaultAddr, vaultToken, vault: useBao ? 'bao' : 'simulator',
      kubectl: binaryPath('kubectl'), webhook, logDir: join(procs.dir, 'logs'), clusterDir: cp.dir, dirs: [cp.dir, procs.dir], stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A ClusterTarget for a user's cluster: a throwaway CA and a 127.0.0.1/localhost certificate for the local webhook. */
function userClusterTarget(kubeconfigPath: string): ClusterTarget {
  return {
    kubeconfigPath,
    async issueServingCert(hosts) {
      const ca = await generateCA({ commonName: 'vaultgate-dev-webhook-ca' });
      const isIp = (h: string): boolean => /^[\d.]+$/.test(h) || h.includes(':');
      const leaf = await issueServingCert({ ca, dnsNames: hosts.filter((h) => !isIp(h)), ipAddresses: hosts.filter(isIp) });
      return { certPem: leaf.cert, keyPem: leaf.key, caPem: ca.cert };
    },
  };
}

/** `vaultgate dev --kubeconfig --vault-addr`: only the webhook and the controller, against the user's cluster and Vault. */
export async function startAgainstCluster(opts: { log: Log; kubeconfig: string; vaultAddr: string; vaultToken: string }): Promise<DevEnvironment> {
  const procs = new VaultgateProcesses(userClusterTarget(opts.kubeconfig), { log: opts.log });
  const kubectl = existsSync(binaryPath('kubectl')) ? binaryPath('kubectl') : 'kubectl';
  try {
    // Fails early with kubectl's own message when the cluster is unreachable or the CRDs are missing.
    await runTool(kubectl, ['--kubeconfig', opts.kubeconfig, 'get', 'crd', 'vaultpolicies.vaultgate.io', '-o', 'name']).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ''; // no kubectl at all: the processes will say it
      throw new Error(`the cluster in ${opts.kubeconfig} has no vaultgate CRDs or cannot be reached (install them: kubectl apply -f charts/vaultgate/crds/): ${(err as Error).message}`);
    });
    const webhook = await procs.startWebhook();
    await procs.startController({ vaultAddr: opts.vaultAddr, vaultToken: opts.vaultToken });
    return {
      kubeconfigPath: opts.kubeconfig, vaultAddr: opts.vaultAddr, vaultToken: opts.vaultToken, vault: 'external', kubectl,
      webhook, logDir: join(procs.dir, 'logs'), dirs: [procs.dir], stop: () => procs.stopAll(),
    };
  } catch (err) {
    await procs.stopAll();
    throw err;
  }
}

/** Default place for the dev kubeconfig: stable across runs, outside the repository. */
export function defaultDevKubeconfig(): string {
  return join(tmpdir(), 'vaultgate-dev', 'kubeconfig');
}
