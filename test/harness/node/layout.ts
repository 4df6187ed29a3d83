// Names and places of the one-node cluster. Fixed, not random: one node stack runs at a time per
// machine (lock.ts), and fixed names let the next run (or the reaper) find and remove whatever a crashed
// run left behind. The pod and Service ranges are the harness's own; pods get no default route, so the
// only addresses they can reach are on the node's bridge (the apiserver and OpenBao listen there).
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const NODE_NAME = 'vaultgate-node';
/** Linux bridge of the pod network; the host's address on it is the node IP. */
export const BRIDGE = 'vgnode0';
export const POD_CIDR = '10.213.0.0/24';
/** The host on the bridge: node IP, apiserver and OpenBao bind here, the pods' gateway. */
export const NODE_IP = '10.213.0.1';
export const SERVICE_CIDR = '10.213.1.0/24';
/** ClusterIP of the `kubernetes` Service (first address of SERVICE_CIDR). */
export const KUBERNETES_SERVICE_IP = '10.213.1.1';
/** Parent cgroup of every pod (kubelet cgroupRoot), in each cgroup v1 hierarchy. */
export const CGROUP_ROOT = 'vaultgate-node';
/** kube-proxy (nftables mode) keeps all its rules in these tables. */
export const NFT_TABLES = ['ip kube-proxy', 'ip6 kube-proxy'] as const;

/** Everything on disk: containerd root/state, kubelet root, CNI state, configs, logs, state.json. */
export const NODE_ROOT = join(tmpdir(), 'vaultgate-node');

export const paths = {
  state: join(NODE_ROOT, 'state.json'),
  lock: join(tmpdir(), 'vaultgate-node.lock'),
  procs: join(NODE_ROOT, 'procs'),
  containerd: {
    config: join(NODE_ROOT, 'containerd', 'config.toml'),
    root: join(NODE_ROOT, 'containerd', 'root'),
    state: join(NODE_ROOT, 'containerd', 'state'),
    socket: join(NODE_ROOT, 'containerd', 'containerd.sock'),
    runcRoot: join(NODE_ROOT, 'containerd', 'runc'),
    opt: join(NODE_ROOT, 'containerd', 'opt'),
  },
  cni: {
    confDir: join(NODE_ROOT, 'cni', 'net.d'),
    ipamDir: join(NODE_ROOT, 'cni', 'ipam'),
  },
  kubelet: {
    root: join(NODE_ROOT, 'kubelet'),
    config: join(NODE_ROOT, 'kubelet-config.yaml'),
    certDir: join(NODE_ROOT, 'kubelet-pki'),
    podLogs: join(NODE_ROOT, 'pod-logs'),
    plugins: join(NODE_ROOT, 'kubelet-volume-plugins'),
    resolvConf: join(NODE_ROOT, 'resolv.conf'),
  },
  kubeconfig: join(NODE_ROOT, 'node.kubeconfig'),
  proxyConfig: join(NODE_ROOT, 'kube-proxy-config.yaml'),
} as const;

/**
 * Kernel settings the node stack may change, recorded before it starts and restored on teardown: the
 * kubelet's (container_manager_linux setupKernelTunables), and forwarding, localnet routing and conntrack
 * limits that kube-proxy or a CNI plugin would touch if configured so (they are not, but a change there
 * would outlive the test for everyone on the machine).
 */
export const HOST_SYSCTLS = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
  'net/ipv4/ip_forward',
  'net/ipv4/conf/all/route_localnet',
  'net/bridge/bridge-nf-call-iptables',
  'net/netfilter/nf_conntrack_max',
  'net/netfilter/nf_conntrack_tcp_timeout_established',
  'net/netfilter/nf_conntrack_tcp_timeout_close_wait',
] as const;
