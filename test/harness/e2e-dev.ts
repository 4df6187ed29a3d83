// The environment behind `vaultgate dev`: the end-to-end stack (test/harness/e2e-stack.ts: a local
// control plane with kube-controller-manager, a real OpenBao 2.7.2 dev server set up as a user would,
// or the simulator only when asked for; `vaultgate webhook` and `vaultgate controller` as child
// processes, the controller logging in with the chart's bootstrap policy), the examples applied, and a
// bin/ of the tools the printed commands name. Or, against a user's cluster and Vault, only the two
// vaultgate processes.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { generateCA, issueServingCert } from '../../certs/generate.ts';
import { baoAvailable, binaryPath } from '../upstream/paths.ts';
import { type ClusterTarget, REPO_ROOT, VaultgateProcesses, type WebhookHandle } from './e2e-processes.ts';
import { type E2EStack, startE2E, toYaml } from './e2e-stack.ts';
import { vaultCall, type VaultKind } from './e2e-vault.ts';
import { runTool } from './tools.ts';

type Obj = Record<string, unknown> & { kind?: string; metadata?: { name?: string; namespace?: string } };
type Log = (line: string) => void;

export const EXAMPLES_DIR = join(REPO_ROOT, 'examples');
export const DEV_NAMESPACE = 'team-a';

export interface DevEnvironment {
  kubeconfigPath: string;
  vaultAddr: string;
  vaultToken: string;
  /** A real OpenBao, the simulator (asked for), or the user's own Vault. */
  vault: VaultKind | 'external';
  /** `OpenBao v2.7.2`, `simulator`, or undefined for the user's Vault. */
  vaultVersion?: string;
  /** How the printed commands call kubectl: `kubectl` (from binDir) or a path. */
  kubectl: string;
  /** The dir to put first on PATH: kubectl, helm and (with OpenBao) bao. */
  binDir?: string;
  /** Tool names in binDir. */
  tools?: string[];
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
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && !f.startsWith('bad-'))
    .sort();
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
export async function applyExamples(
  kubectl: (args: string[], stdin?: string) => Promise<string>,
  vaultAddr: string,
  log: Log,
): Promise<void> {
  const all = [...SUPPORTING_OBJECTS, ...exampleObjects(vaultAddr)];
  for (const [i, inPhase] of PHASES.entries()) {
    const batch = all.filter(inPhase);
    if (batch.length > 0) log((await kubectl(['apply', '-f', '-'], toYaml(batch))).trim());
    // A store whose role does not exist yet is re-validated only minutes later: wait for the bindings.
    if (i === 0)
      await kubectl([
        'wait',
        '--for=condition=Ready',
        '--timeout=120s',
        '-n',
        DEV_NAMESPACE,
        'vaultrolebinding',
        '--all',
      ]);
  }
}

async function writeVaultData(addr: string, token: string): Promise<void> {
  for (const [path, data] of Object.entries(EXAMPLE_VAULT_DATA)) {
    const res = await vaultCall(addr, token, 'POST', path, { data });
    if (res.status >= 300) throw new Error(`writing ${path} to Vault: HTTP ${res.status}`);
  }
}

/** The tools the printed commands use by name: symlinks in a bin/ the user puts first on PATH. */
export function writeToolsDir(binDir: string, vault: VaultKind): Record<string, string> {
  rmSync(binDir, { recursive: true, force: true });
  mkdirSync(binDir, { recursive: true });
  const tools: Record<string, string> = { kubectl: binaryPath('kubectl'), helm: binaryPath('helm') };
  if (vault === 'openbao' || baoAvailable()) tools.bao = binaryPath('bao');
  for (const [name, target] of Object.entries(tools)) symlinkSync(target, join(binDir, name));
  return tools;
}

/** Local control plane + Vault (real OpenBao unless `vault: 'simulator'`) + vaultgate, examples applied. */
export async function startLocalDev(opts: {
  log: Log;
  kubeconfigOut: string;
  vault?: VaultKind;
}): Promise<DevEnvironment> {
  const { log } = opts;
  const kind = opts.vault ?? 'openbao';
  const stack: E2EStack = await startE2E({
    controllerManager: true,
    vault: kind,
    controller: { driftCheckMs: 30_000 },
    log,
  });
  const binDir = join(dirname(opts.kubeconfigOut), 'bin');
  const stop = async (): Promise<void> => {
    await stack.stop();
    rmSync(opts.kubeconfigOut, { force: true });
    rmSync(binDir, { recursive: true, force: true });
  };
  try {
    const { cp, vault } = stack;
    await writeVaultData(vault.addr, vault.rootToken);
    await applyExamples((args, stdin) => cp.kubectl(args, stdin === undefined ? {} : { stdin }), vault.addr, log);
    // "ready" means the third command to try shows a synced Secret.
    await cp.kubectl([
      'wait',
      '--for=condition=Ready',
      '--timeout=120s',
      '-n',
      DEV_NAMESPACE,
      'externalsecret',
      '--all',
    ]);
    mkdirSync(dirname(opts.kubeconfigOut), { recursive: true });
    writeFileSync(opts.kubeconfigOut, readFileSync(cp.kubeconfigPath), { mode: 0o600 });
    const tools = writeToolsDir(binDir, kind);
    if (!stack.webhook) throw new Error('the dev stack has no webhook');
    return {
      kubeconfigPath: opts.kubeconfigOut,
      vaultAddr: vault.addr,
      vaultToken: vault.rootToken,
      vault: kind,
      vaultVersion: vault.version,
      kubectl: 'kubectl',
      binDir,
      tools: Object.keys(tools),
      webhook: stack.webhook,
      logDir: join(stack.procs.dir, 'logs'),
      clusterDir: cp.dir,
      dirs: [cp.dir, stack.procs.dir],
      stop,
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
      const leaf = await issueServingCert({
        ca,
        dnsNames: hosts.filter((h) => !isIp(h)),
        ipAddresses: hosts.filter(isIp),
      });
      return { certPem: leaf.cert, keyPem: leaf.key, caPem: ca.cert };
    },
  };
}

/** `vaultgate dev --kubeconfig --vault-addr`: only the webhook and the controller, against the user's cluster and Vault. */
export async function startAgainstCluster(opts: {
  log: Log;
  kubeconfig: string;
  vaultAddr: string;
  vaultToken: string;
}): Promise<DevEnvironment> {
  const procs = new VaultgateProcesses(userClusterTarget(opts.kubeconfig), { log: opts.log });
  const kubectl = existsSync(binaryPath('kubectl')) ? binaryPath('kubectl') : 'kubectl';
  try {
    // Fails early with kubectl's own message when the cluster is unreachable or the CRDs are missing.
    await runTool(kubectl, [
      '--kubeconfig',
      opts.kubeconfig,
      'get',
      'crd',
      'vaultpolicies.vaultgate.io',
      '-o',
      'name',
    ]).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ''; // no kubectl at all: the processes will say it
      throw new Error(
        `the cluster in ${opts.kubeconfig} has no vaultgate CRDs or cannot be reached (install them: kubectl apply -f charts/vaultgate/crds/): ${(err as Error).message}`,
      );
    });
    const webhook = await procs.startWebhook();
    await procs.startController({ vaultAddr: opts.vaultAddr, vaultToken: opts.vaultToken });
    return {
      kubeconfigPath: opts.kubeconfig,
      vaultAddr: opts.vaultAddr,
      vaultToken: opts.vaultToken,
      vault: 'external',
      kubectl,
      webhook,
      logDir: join(procs.dir, 'logs'),
      dirs: [procs.dir],
      stop: () => procs.stopAll(),
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
