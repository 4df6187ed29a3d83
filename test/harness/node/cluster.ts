// A one-node Kubernetes cluster for the real tier: etcd, kube-apiserver (on the node IP, lease endpoint
// reconciler, ServiceAccount admission), kube-controller-manager (the controllers Deployments, Services,
// PDBs and pod tokens need), kube-scheduler, kube-proxy (nftables), and the kubelet on containerd with
// the bridge CNI. Images are OCI archives imported into containerd (test/image/); nothing is pulled.
// One stack per machine at a time (lock.ts). Teardown (teardown.ts) runs at stop(), at the start of the
// next stack, and from a detached reaper when the test process dies.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPauseImage } from '../../image/images.ts';
import type { OciImage } from '../../image/oci.ts';
import { missingNodeBinaries, missingNodePackages, nodeUnsupportedReason } from '../../upstream/node-binaries.ts';
import { type ControlPlane, startControlPlane } from '../control-plane.ts';
import { NODE_CONTROLLERS } from '../controller-manager.ts';
import { freePorts } from '../ports.ts';
import { ProcessGroup } from '../processes.ts';
import { importImage, startContainerd } from './containerd.ts';
import { kill, readSysctl } from './host.ts';
import { createCgroupRoot, startKubelet, waitNodeReady } from './kubelet.ts';
import { HOST_SYSCTLS, NODE_IP, NODE_NAME, NODE_ROOT, paths, POD_CIDR, SERVICE_CIDR } from './layout.ts';
import { acquireNodeLock } from './lock.ts';
import { setUpHostNetwork } from './network.ts';
import { startKubeProxy } from './proxy.ts';
import { startScheduler } from './scheduler.ts';
import { leftovers, teardownNode, writeState } from './teardown.ts';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const REAPER = fileURLToPath(new URL('./reaper.ts', import.meta.url));

export interface NodeClusterOptions {
  /** Images to import besides the pause image (e.g. buildVaultgateImage()). */
  images?: OciImage[];
  log?: (line: string) => void;
}

const seconds = (t: number): number => Math.round(performance.now() - t) / 1000;

/** Why the node tier cannot run here (not root, not Linux, packages or binaries missing), or false. */
export function nodeSkipReason(): false | string {
  const unsupported = nodeUnsupportedReason();
  if (unsupported) return unsupported;
  const pkgs = missingNodePackages();
  if (pkgs.length > 0) return `Debian packages missing: ${pkgs.join(', ')} (npm run upstream installs them)`;
  const bins = missingNodeBinaries();
  if (bins.length > 0) return `node binaries missing: ${bins.join(', ')} (npm run upstream builds them)`;
  return false;
}

export class NodeCluster {
  readonly nodeName = NODE_NAME;
  readonly nodeIp = NODE_IP;
  readonly podCidr = POD_CIDR;
  readonly serviceCidr = SERVICE_CIDR;
  readonly timings: Record<string, number>;
  #stopped = false;

  /** @internal use startNodeCluster() */
  constructor(
    readonly cp: ControlPlane,
    readonly group: ProcessGroup,
    timings: Record<string, number>,
    readonly log: (line: string) => void,
    private readonly release: () => void,
    private readonly reaperPid: number | undefined,
  ) {
    this.timings = timings;
  }

  /** Imports another OCI archive into containerd (e.g. a rebuilt image). */
  importImage(image: OciImage): void {
    importImage(image.archivePath, image.ref);
  }

  /** The container log files the kubelet wrote for a pod (by name prefix), newest lines last. */
  podLogs(namespace: string, podPrefix: string, lines = 40): string {
    if (!existsSync(paths.kubelet.podLogs)) return '';
    const out: string[] = [];
    for (const d of readdirSync(paths.kubelet.podLogs).filter((x) => x.startsWith(`${namespace}_${podPrefix}`))) {
      for (const c of readdirSync(join(paths.kubelet.podLogs, d))) {
        for (const f of readdirSync(join(paths.kubelet.podLogs, d, c)).sort()) {
          const text = readFileSync(join(paths.kubelet.podLogs, d, c, f), 'utf8')
            .trimEnd()
            .split('\n')
            .slice(-lines)
            .join('\n');
          out.push(`--- ${d}/${c}/${f}\n${text}`);
        }
      }
    }
    return out.join('\n');
  }

  /** Tail of a node component's log (kubelet, containerd, kube-proxy, kube-scheduler). */
  componentLog(name: string, lines = 30): string {
    return this.group.logTail(name, lines);
  }

  /** Kills everything, removes what the stack created on the host; returns what is left (empty = clean). */
  async stop(): Promise<string[]> {
    if (this.#stopped) return [];
    this.#stopped = true;
    const t = performance.now();
    await this.group.stopAll();
    const left = teardownNode(this.log);
    await this.cp.stop();
    if (this.reaperPid) kill(this.reaperPid, 'SIGTERM');
    this.release();
    this.log(
      `[node] cluster torn down in ${seconds(t)}s${left.length ? ` (LEFT: ${left.join(' / ')})` : ', nothing left behind'}`,
    );
    return left;
  }
}

function startReaper(): number | undefined {
  const child = spawn(process.execPath, ['--import', 'tsx', REAPER, String(process.pid)], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  return child.pid;
}

export async function startNodeCluster(opts: NodeClusterOptions = {}): Promise<NodeCluster> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const skip = nodeSkipReason();
  if (skip) throw new Error(`cannot start the one-node cluster: ${skip}`);
  const started = performance.now();
  const release = await acquireNodeLock(log);
  const timings: Record<string, number> = {};
  let cp: ControlPlane | undefined;
  let group: ProcessGroup | undefined;
  let reaperPid: number | undefined;
  try {
    const before = leftovers();
    if (before.length > 0) {
      log(`[node] removing what an earlier node stack left: ${before.join(' / ')}`);
      const still = teardownNode(log);
      if (still.length > 0) throw new Error(`could not remove an earlier node stack's leftovers: ${still.join(' / ')}`);
    }
    mkdirSync(NODE_ROOT, { recursive: true });
    const sysctls: Record<string, string> = {};
    for (const k of HOST_SYSCTLS) {
      const v = readSysctl(k);
      if (v !== undefined) sysctls[k] = v;
    }
    const state = {
      ownerPid: process.pid,
      startedAt: new Date().toISOString(),
      sysctls,
      createdRunContainerd: !existsSync('/run/containerd'),
    };
    writeState(state);
    reaperPid = startReaper();
    writeState({ ...state, ...(reaperPid ? { reaperPid } : {}) });

    const pause = buildPauseImage();
    let t = performance.now();
    setUpHostNetwork();
    cp = await startControlPlane({
      controllerManager: { controllers: NODE_CONTROLLERS },
      apiserver: {
        bindAddress: NODE_IP,
        serviceClusterIpRange: SERVICE_CIDR,
        endpointReconciler: 'lease',
        serviceAccountAdmission: true,
      },
      log,
    });
    timings['control plane'] = seconds(t);

    t = performance.now();
    group = new ProcessGroup(paths.procs);
    const pauseImage = await pause;
    await startContainerd(group, pauseImage.ref);
    for (const img of [pauseImage, ...(opts.images ?? [])]) importImage(img.archivePath, img.ref);
    timings['containerd + images'] = seconds(t);

    t = performance.now();
    createCgroupRoot();
    const [kubeletPort, kubeletHealthz, proxyHealthz, proxyMetrics] = (await freePorts(4)) as [
      number,
      number,
      number,
      number,
    ];
    const kubelet = startKubelet(group, {
      port: kubeletPort,
      healthzPort: kubeletHealthz,
      clientCaFile: join(cp.dir, 'pki', 'ca.crt'),
      kubeconfigPath: cp.kubeconfigPath,
    });
    startScheduler(group, cp.kubeconfigPath);
    await startKubeProxy(group, {
      kubeconfigPath: cp.kubeconfigPath,
      healthzPort: proxyHealthz,
      metricsPort: proxyMetrics,
    });
    await waitNodeReady(cp.admin, group, kubelet);
    timings['node Ready'] = seconds(t);
    timings.total = seconds(started);
    log(
      `[node] one-node cluster up in ${timings.total}s (${Object.entries(timings)
        .filter(([k]) => k !== 'total')
        .map(([k, v]) => `${k} ${v}s`)
        .join(', ')})`,
    );
    return new NodeCluster(cp, group, timings, log, release, reaperPid);
  } catch (err) {
    if (group)
      process.stderr.write(
        ['kubelet', 'containerd', 'kube-proxy', 'kube-scheduler']
          .map((n) => `--- ${n}\n${group?.logTail(n, 15) ?? ''}`)
          .join('\n') + '\n',
      );
    await group?.stopAll();
    teardownNode(log);
    await cp?.stop();
    if (reaperPid) kill(reaperPid, 'SIGTERM');
    release();
    throw err;
  }
}
