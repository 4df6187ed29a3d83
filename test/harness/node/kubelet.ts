// The kubelet on containerd, configured for these machines (cgroup v1, no swap accounting, no systemd):
// cgroupfs driver under its own cgroupRoot, its own root/log/plugin dirs, ports on the node IP and
// loopback, no iptables chains of its own (makeIPTablesUtilChains: false), no image GC (the images are
// imported, nothing can be pulled again), an empty resolv.conf (no cluster DNS, and no host DNS for
// pods either), a short sync period so Secret volumes (the webhook's certificate) refresh in seconds.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { nodeBinaryPath } from '../../upstream/node-binaries.ts';
import type { KubeCredentials } from '../kube-http.ts';
import { kubeRequest } from '../kube-http.ts';
import type { ManagedProcess, ProcessGroup } from '../processes.ts';
import { waitFor } from '../wait.ts';
import { CGROUP_ROOT, NODE_IP, NODE_NAME, paths } from './layout.ts';
import { cgroupDirs } from './teardown.ts';

/** The kubelet refuses a cgroupRoot that does not exist; cpuset needs cpus/mems before anything joins. */
export function createCgroupRoot(): void {
  const fs = '/sys/fs/cgroup';
  for (const h of ['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'blkio', 'pids', 'systemd', 'unified']) {
    const dir = join(fs, h, CGROUP_ROOT);
    try {
      mkdirSync(dir, { recursive: true });
    } catch {
      continue; // hierarchy not mounted here
    }
    if (h === 'cpuset') {
      for (const f of ['cpuset.cpus', 'cpuset.mems'])
        writeFileSync(join(dir, f), readFileSync(join(fs, h, f), 'utf8').trim());
    }
  }
  if (cgroupDirs().length === 0) throw new Error(`could not create cgroup ${CGROUP_ROOT} under /sys/fs/cgroup`);
}

export function kubeletConfig(o: { port: number; healthzPort: number; clientCaFile: string }): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: NODE_IP,
    port: o.port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: o.healthzPort,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: false },
      x509: { clientCAFile: o.clientCaFile },
    },
    authorization: { mode: 'AlwaysAllow' },
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${CGROUP_ROOT}`,
    cgroupsPerQOS: true,
    failSwapOn: false,
    failCgroupV1: false,
    containerRuntimeEndpoint: `unix://${paths.containerd.socket}`,
    podLogsDir: paths.kubelet.podLogs,
    volumePluginDir: paths.kubelet.plugins,
    resolvConf: paths.kubelet.resolvConf,
    makeIPTablesUtilChains: false,
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
      'nodefs.inodesFree': '1%',
    },
    syncFrequency: '5s',
    fileCheckFrequency: '20s',
    nodeStatusUpdateFrequency: '5s',
    serializeImagePulls: false,
    maxPods: 40,
    rotateCertificates: false,
    serverTLSBootstrap: false,
    shutdownGracePeriod: '0s',
    staticPodPath: '',
    containerLogMaxSize: '10Mi',
  };
}

export function startKubelet(
  group: ProcessGroup,
  o: { port: number; healthzPort: number; clientCaFile: string; kubeconfigPath: string },
): ManagedProcess {
  for (const d of [paths.kubelet.root, paths.kubelet.certDir, paths.kubelet.podLogs, paths.kubelet.plugins])
    mkdirSync(d, { recursive: true });
  writeFileSync(paths.kubelet.resolvConf, '');
  writeFileSync(paths.kubelet.config, stringify(kubeletConfig(o)));
  return group.spawn('kubelet', nodeBinaryPath('kubelet'), [
    `--config=${paths.kubelet.config}`,
    `--kubeconfig=${o.kubeconfigPath}`,
    `--root-dir=${paths.kubelet.root}`,
    `--cert-dir=${paths.kubelet.certDir}`,
    `--hostname-override=${NODE_NAME}`,
    `--node-ip=${NODE_IP}`,
    '--v=1',
  ]);
}

interface NodeObject {
  status?: { conditions?: Array<{ type: string; status: string; message?: string }> };
}

export async function waitNodeReady(
  creds: KubeCredentials,
  group: ProcessGroup,
  proc: ManagedProcess,
  timeoutMs = 120_000,
): Promise<void> {
  await waitFor(
    async () => {
      const res = await kubeRequest(creds, 'GET', `/api/v1/nodes/${NODE_NAME}`);
      if (res.status !== 200) throw new Error(`GET node: ${res.status}`);
      const ready = (res.body as NodeObject).status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status === 'True') return true;
      throw new Error(`Ready=${ready?.status ?? '?'} ${ready?.message ?? ''}`);
    },
    {
      what: `node ${NODE_NAME} Ready`,
      timeoutMs,
      intervalMs: 500,
      abort: proc.exited.then((why) => `kubelet exited (${why}):\n${group.logTail('kubelet')}`),
    },
  );
}
