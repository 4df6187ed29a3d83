// The pod network: a Linux bridge the harness creates (node IP on it), Debian's bridge + host-local CNI
// plugins configured by containerd from our conflist. No default route in pods and no masquerading: a pod
// reaches its subnet (the node IP, hence the apiserver and OpenBao) and the Service range (kube-proxy
// DNATs it), nothing else. The Service range is routed onto the bridge on the host too, so a ClusterIP
// that kube-proxy has not programmed yet stays on the bridge instead of following the default route out.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BRIDGE, NODE_IP, paths, POD_CIDR, SERVICE_CIDR } from './layout.ts';
import { must } from './host.ts';

export const CNI_NETWORK = 'vaultgate-pods';

export function cniConflist(): Record<string, unknown> {
  return {
    cniVersion: '0.4.0',
    name: CNI_NETWORK,
    plugins: [
      {
        type: 'bridge',
        bridge: BRIDGE,
        // The harness gives the bridge its address (isGateway would also switch on ip_forward host-wide).
        isGateway: false,
        ipMasq: false,
        hairpinMode: false,
        ipam: {
          type: 'host-local',
          dataDir: paths.cni.ipamDir,
          ranges: [[{ subnet: POD_CIDR, gateway: NODE_IP }]],
          routes: [{ dst: SERVICE_CIDR, gw: NODE_IP }],
        },
      },
    ],
  };
}

export function setUpHostNetwork(): void {
  must('ip', ['link', 'add', 'name', BRIDGE, 'type', 'bridge']);
  must('ip', ['addr', 'add', `${NODE_IP}/${POD_CIDR.split('/')[1] ?? '24'}`, 'dev', BRIDGE]);
  must('ip', ['link', 'set', 'dev', BRIDGE, 'up']);
  must('ip', ['route', 'add', SERVICE_CIDR, 'dev', BRIDGE, 'src', NODE_IP]);
  mkdirSync(paths.cni.confDir, { recursive: true });
  mkdirSync(paths.cni.ipamDir, { recursive: true });
  writeFileSync(join(paths.cni.confDir, '10-vaultgate.conflist'), JSON.stringify(cniConflist(), null, 2));
}
