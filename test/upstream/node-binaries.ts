// What the one-node cluster (test/harness/node/) needs besides the control plane (setup.ts builds and installs it):
//  - kubelet, kube-scheduler and kube-proxy, built from the wrapper module test/upstream/node (same
//    Kubernetes version and replace list as test/upstream/kube) into a cache directory with a key of its
//    own, so adding them never changes the control-plane binaries' key (which would rebuild everything);
//  - Debian's containerd, runc, CNI plugins and nft, installed with apt-get when missing (we are root on
//    these machines; CI starts cold).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BinarySpec, K8S_VERSION, kubeStamps, type NodeBinaryName, UPSTREAM_DIR } from './catalog.ts';
import type { Log } from './builder.ts';
import { stderrLog, upstreamCacheRoot, withLock } from './paths.ts';

export type { NodeBinaryName } from './catalog.ts';

/** Build order: the kubelet first (the longest, and the one a failure is most likely in). */
export const NODE_BINARIES: readonly BinarySpec<NodeBinaryName>[] = [
  { name: 'kubelet', module: 'node', pkg: 'k8s.io/kubernetes/cmd/kubelet', stamps: kubeStamps(K8S_VERSION) },
  {
    name: 'kube-scheduler',
    module: 'node',
    pkg: 'k8s.io/kubernetes/cmd/kube-scheduler',
    stamps: kubeStamps(K8S_VERSION),
  },
  { name: 'kube-proxy', module: 'node', pkg: 'k8s.io/kubernetes/cmd/kube-proxy', stamps: kubeStamps(K8S_VERSION) },
];

/** Debian packages and the file each one provides (what we check before calling apt-get). */
export const NODE_PACKAGES: ReadonlyArray<{ pkg: string; file: string }> = [
  { pkg: 'containerd', file: '/usr/bin/containerd' },
  { pkg: 'containerd', file: '/usr/bin/containerd-shim-runc-v2' },
  { pkg: 'containerd', file: '/usr/bin/ctr' },
  { pkg: 'runc', file: '/usr/sbin/runc' },
  { pkg: 'containernetworking-plugins', file: '/usr/lib/cni/bridge' },
  { pkg: 'containernetworking-plugins', file: '/usr/lib/cni/host-local' },
  { pkg: 'containernetworking-plugins', file: '/usr/lib/cni/loopback' },
  // kube-proxy runs in nftables mode: all its rules in its own tables, removed in one command.
  { pkg: 'nftables', file: '/usr/sbin/nft' },
];

/** Debian's CNI plugin directory. */
export const CNI_BIN_DIR = '/usr/lib/cni';

let cachedKey: string | undefined;
export function nodeVersionsKey(): string {
  if (cachedKey) return cachedKey;
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum']) h.update(`node/${f}\0`).update(readFileSync(join(UPSTREAM_DIR, 'node', f)));
  h.update(JSON.stringify(NODE_BINARIES));
  cachedKey = `node-${K8S_VERSION}_${h.digest('hex').slice(0, 12)}`;
  return cachedKey;
}

export function nodeBinDir(): string {
  return join(upstreamCacheRoot(), nodeVersionsKey(), 'bin');
}

export function nodeBinaryPath(name: NodeBinaryName): string {
  return join(nodeBinDir(), name);
}

export function missingNodeBinaries(): NodeBinaryName[] {
  return NODE_BINARIES.map((b) => b.name).filter((n) => !existsSync(nodeBinaryPath(n)));
}

export function missingNodePackages(): string[] {
  return [...new Set(NODE_PACKAGES.filter((p) => !existsSync(p.file)).map((p) => p.pkg))];
}

/** Why the one-node cluster cannot run on this machine at all, or undefined. */
export function nodeUnsupportedReason(): string | undefined {
  if (process.platform !== 'linux') return `the one-node cluster needs Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'the one-node cluster needs root (containerd, cgroups, network namespaces)';
  return undefined;
}

/** One apt-get run (non-interactive); the error carries apt-get's last stderr lines. */
export function aptGet(args: string[], log: Log): Promise<void> {
  return new Promise((resolve, reject) => {
    log(`[upstream] apt-get ${args.join(' ')}`);
    const child = spawn('apt-get', args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(
              `apt-get ${args.join(' ')} failed (exit ${code}): ${err.trim().split('\n').slice(-5).join(' | ')}`,
            ),
          ),
    );
  });
}

/** apt-get installs the missing Debian packages (an `apt-get update` first only when the install fails). */
export async function ensureNodePackages(opts: { log?: Log } = {}): Promise<string[]> {
  const log = opts.log ?? stderrLog;
  if (missingNodePackages().length === 0) return [];
  const unsupported = nodeUnsupportedReason();
  if (unsupported) throw new Error(`${unsupported}; missing Debian packages: ${missingNodePackages().join(', ')}`);
  return withLock('node-packages', log, async () => {
    const missing = missingNodePackages();
    if (missing.length === 0) return [];
    const install = ['install', '-y', '--no-install-recommends', ...missing];
    await aptGet(install, log).catch(async () => {
      await aptGet(['update'], log);
      await aptGet(install, log);
    });
    const still = missingNodePackages();
    if (still.length > 0)
      throw new Error(
        `apt-get installed ${missing.join(', ')} but these files are still missing: ${NODE_PACKAGES.filter((p) =>
          still.includes(p.pkg),
        )
          .map((p) => p.file)
          .join(', ')}`,
      );
    return missing;
  });
}

/** `containerd --version` etc., for the build summary. */
export function nodePackageVersions(): string[] {
  const v = (cmd: string, args: string[]): string =>
    spawnSync(cmd, args, { encoding: 'utf8', timeout: 10_000 }).stdout?.split('\n')[0]?.trim() ?? '?';
  return [v('containerd', ['--version']), v('runc', ['--version']), v('nft', ['--version'])];
}
