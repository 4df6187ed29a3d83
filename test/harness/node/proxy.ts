// kube-proxy in nftables mode: every rule it writes lives in its own `ip kube-proxy` / `ip6 kube-proxy`
// tables (removed in one command on teardown), nothing in the host's iptables chains. Node ports only on
// the node IP, and conntrack limits left as they are (0 = do not touch the host's settings).
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { nodeBinaryPath } from '../../upstream/node-binaries.ts';
import type { ManagedProcess, ProcessGroup } from '../processes.ts';
import { waitFor } from '../wait.ts';
import { NODE_IP, NODE_NAME, paths, POD_CIDR } from './layout.ts';

export function kubeProxyConfig(o: {
  kubeconfigPath: string;
  healthzPort: number;
  metricsPort: number;
}): Record<string, unknown> {
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'nftables',
    clientConnection: { kubeconfig: o.kubeconfigPath },
    hostnameOverride: NODE_NAME,
    bindAddress: NODE_IP,
    healthzBindAddress: `127.0.0.1:${o.healthzPort}`,
    metricsBindAddress: `127.0.0.1:${o.metricsPort}`,
    clusterCIDR: POD_CIDR,
    detectLocalMode: 'ClusterCIDR',
    nodePortAddresses: [`${NODE_IP}/32`],
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  };
}

export async function startKubeProxy(
  group: ProcessGroup,
  o: { kubeconfigPath: string; healthzPort: number; metricsPort: number },
): Promise<ManagedProcess> {
  writeFileSync(paths.proxyConfig, stringify(kubeProxyConfig(o)));
  const proc = group.spawn('kube-proxy', nodeBinaryPath('kube-proxy'), [`--config=${paths.proxyConfig}`, '--v=1']);
  // /healthz answers 200 once the first full sync of the rules is done.
  await waitFor(
    async () =>
      (await fetch(`http://127.0.0.1:${o.healthzPort}/healthz`, { signal: AbortSignal.timeout(2000) })).status === 200
        ? true
        : undefined,
    {
      what: 'kube-proxy /healthz',
      timeoutMs: 60_000,
      intervalMs: 250,
      abort: proc.exited.then((why) => `kube-proxy exited (${why}):\n${group.logTail('kube-proxy')}`),
    },
  );
  return proc;
}
