// Removes everything a node stack creates on the host, whether it stopped cleanly or crashed: processes
// (by cgroup and by their command line naming NODE_ROOT), mounts under NODE_ROOT (pod volumes,
// container root filesystems, sandbox /dev/shm, network namespaces, the kubelet's bind mount of its
// root), the pods' cgroups, kube-proxy's nftables tables, any KUBE-*/CNI-* iptables chain (the
// kubelet's KUBE-FIREWALL drops non-loopback-sourced traffic to 127.0.0.0/8 and must never outlive a
// test), the bridge, the kernel settings the kubelet changed, and NODE_ROOT itself. Idempotent; runs
// at stop(), at the start of the next stack (a crashed run's leftovers) and from the reaper.
import { existsSync, readdirSync, readFileSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BRIDGE, CGROUP_ROOT, NFT_TABLES, NODE_ROOT, paths, SERVICE_CIDR } from './layout.ts';
import { NODE_BINARIES, nodeBinaryPath } from '../../upstream/node-binaries.ts';
import { kill, linkExists, mountPoints, processes, readSysctl, sh, writeSysctl } from './host.ts';

export interface NodeState {
  ownerPid: number;
  startedAt: string;
  /** Kernel settings as they were before the kubelet started (restored on teardown). */
  sysctls: Record<string, string>;
  /** /run/containerd did not exist before: containerd's shim sockets go there, so it is removed after. */
  createdRunContainerd: boolean;
  reaperPid?: number;
}

export function readState(): NodeState | undefined {
  try {
    return JSON.parse(readFileSync(paths.state, 'utf8')) as NodeState;
  } catch {
    return undefined;
  }
}

export function writeState(s: NodeState): void {
  writeFileSync(paths.state, JSON.stringify(s, null, 2));
}

const CGROUP_FS = '/sys/fs/cgroup';

/** Our parent cgroup in each hierarchy that has one. */
export function cgroupDirs(): string[] {
  if (!existsSync(CGROUP_FS)) return [];
  return readdirSync(CGROUP_FS)
    .map((h) => join(CGROUP_FS, h, CGROUP_ROOT))
    .filter((d) => existsSync(d));
}

/** Every cgroup below (and including) `dir`, deepest first. */
function cgroupTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries: string[] = [];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e);
      try {
        if (statSync(p).isDirectory()) walk(p);
      } catch {
        // removed meanwhile
      }
    }
    out.push(d);
  };
  walk(dir);
  return out;
}

function cgroupPids(): number[] {
  const pids = new Set<number>();
  for (const root of cgroupDirs()) {
    for (const cg of cgroupTree(root)) {
      try {
        for (const l of readFileSync(join(cg, 'cgroup.procs'), 'utf8').split('\n'))
          if (/^\d+$/.test(l)) pids.add(Number(l));
      } catch {
        // gone
      }
    }
  }
  return [...pids];
}

/**
 * Processes of the node stack: in our cgroups, started with a path under NODE_ROOT (containerd, its shims,
 * kubelet, kube-proxy), or running a node binary (kube-scheduler's command line names neither: it was left
 * running, orphaned, after a full run). One node stack runs at a time (lock.ts), so any of them is ours.
 */
export function nodeProcesses(): number[] {
  const binaries = NODE_BINARIES.map((b) => nodeBinaryPath(b.name));
  const ours = (cmdline: string): boolean => cmdline.includes(NODE_ROOT) || binaries.some((b) => cmdline.startsWith(b));
  const byPath = processes()
    .filter((p) => p.pid !== process.pid && ours(p.cmdline))
    .map((p) => p.pid);
  return [...new Set([...byPath, ...cgroupPids()])].filter((p) => p !== process.pid);
}

export function nodeMounts(): string[] {
  return mountPoints().filter((m) => m === NODE_ROOT || m.startsWith(`${NODE_ROOT}/`));
}

export function nftTables(): string[] {
  const r = sh('nft', ['list', 'tables']);
  if (r.code !== 0) return [];
  return r.stdout
    .split('\n')
    .map((l) => l.replace(/^table\s+/, '').trim())
    .filter((t) => (NFT_TABLES as readonly string[]).includes(t));
}

const OURS = /^(KUBE-|CNI-)/;

/** KUBE- and CNI- chains and the rules that jump to them, per iptables family and table (iptables-save format). */
export function iptablesLeftovers(): Array<{ cmd: string; table: string; chains: string[]; rules: string[] }> {
  const out: Array<{ cmd: string; table: string; chains: string[]; rules: string[] }> = [];
  for (const cmd of ['iptables', 'ip6tables']) {
    const r = sh(`${cmd}-save`, []);
    if (r.code !== 0) continue;
    let table = '';
    let chains: string[] = [];
    let rules: string[] = [];
    for (const line of r.stdout.split('\n')) {
      if (line.startsWith('*')) {
        table = line.slice(1);
        chains = [];
        rules = [];
        continue;
      }
      if (line.startsWith(':')) {
        const c = line.slice(1).split(' ')[0] ?? '';
        if (OURS.test(c)) chains.push(c);
        continue;
      }
      if (line.startsWith('-A ')) {
        const chain = line.split(' ')[1] ?? '';
        if (!OURS.test(chain) && /\s-[jg]\s+(KUBE-|CNI-)/.test(line)) rules.push(line);
        continue;
      }
      if (line === 'COMMIT' && (chains.length > 0 || rules.length > 0)) out.push({ cmd, table, chains, rules });
    }
  }
  return out;
}

function removeIptables(): void {
  for (const t of iptablesLeftovers()) {
    const script = [
      `*${t.table}`,
      ...t.rules.map((r) => r.replace(/^-A /, '-D ')),
      ...t.chains.map((c) => `-F ${c}`),
      ...t.chains.map((c) => `-X ${c}`),
      'COMMIT',
      '',
    ].join('\n');
    sh(`${t.cmd}-restore`, ['--noflush'], { input: script });
  }
}

function serviceRoute(): boolean {
  return sh('ip', ['route', 'show', SERVICE_CIDR]).stdout.trim() !== '';
}

/** What of a node stack is still on this machine (empty after a clean teardown). */
export function leftovers(): string[] {
  const found: string[] = [];
  const procs = nodeProcesses();
  if (procs.length > 0)
    found.push(
      `processes: ${procs.map((p) => `${p} (${(processes().find((x) => x.pid === p)?.cmdline ?? '').slice(0, 80)})`).join('; ')}`,
    );
  const mounts = nodeMounts();
  if (mounts.length > 0) found.push(`mounts: ${mounts.join(', ')}`);
  const cgs = cgroupDirs();
  if (cgs.length > 0) found.push(`cgroups: ${cgs.join(', ')}`);
  const tables = nftTables();
  if (tables.length > 0) found.push(`nftables tables: ${tables.join(', ')}`);
  for (const t of iptablesLeftovers())
    found.push(`${t.cmd} ${t.table}: chains ${t.chains.join(', ') || '-'}; rules ${t.rules.join(' | ') || '-'}`);
  if (linkExists(BRIDGE)) found.push(`bridge ${BRIDGE}`);
  if (serviceRoute()) found.push(`route ${SERVICE_CIDR}`);
  const state = readState();
  for (const [k, v] of Object.entries(state?.sysctls ?? {}))
    if (readSysctl(k) !== v) found.push(`sysctl ${k}=${readSysctl(k)} (was ${v})`);
  if (existsSync(NODE_ROOT)) found.push(`directory ${NODE_ROOT}`);
  return found;
}

/** Removes everything; returns what could not be removed (empty on success). */
export function teardownNode(log: (line: string) => void = () => {}): string[] {
  const state = readState();
  // 1. Processes: SIGKILL until none is left (a dying shim may still be reaping its container).
  for (let round = 0; round < 50; round++) {
    const pids = nodeProcesses().filter((p) => p !== state?.reaperPid);
    if (pids.length === 0) break;
    for (const p of pids) kill(p);
    sh('sleep', ['0.1']);
  }
  // 2. Mounts under NODE_ROOT, deepest first; lazily when busy (a file still open in a dying process).
  for (let round = 0; round < 3; round++) {
    const mounts = nodeMounts();
    if (mounts.length === 0) break;
    for (const m of mounts) if (sh('umount', [m]).code !== 0) sh('umount', ['-l', m]);
  }
  // 3. cgroups, deepest first (empty now that their processes are gone).
  for (const root of cgroupDirs())
    for (const cg of cgroupTree(root)) {
      try {
        rmdirSync(cg);
      } catch {
        // reported by leftovers()
      }
    }
  // 4. Packet filtering and the network.
  for (const t of nftTables()) sh('nft', ['delete', 'table', ...t.split(' ')]);
  removeIptables();
  if (linkExists(BRIDGE)) sh('ip', ['link', 'delete', 'dev', BRIDGE]);
  if (serviceRoute()) sh('ip', ['route', 'delete', SERVICE_CIDR]);
  // 5. Kernel settings the kubelet changed.
  for (const [k, v] of Object.entries(state?.sysctls ?? {})) if (readSysctl(k) !== v) writeSysctl(k, v);
  if (state?.createdRunContainerd && nodeProcesses().length === 0)
    rmSync('/run/containerd', { recursive: true, force: true });
  // 6. The directory, only once nothing is mounted below it (rm -r through a mount would delete the mounted data).
  if (nodeMounts().length === 0) rmSync(NODE_ROOT, { recursive: true, force: true });
  const left = leftovers();
  if (left.length > 0) log(`[node] teardown left: ${left.join(' / ')}`);
  return left;
}
