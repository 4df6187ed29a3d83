// owner: B
// kube-controller-manager with only the controllers an apiserver-only envtest lacks and our tests need:
// ownerReference garbage collection, namespace deletion, and the `default` ServiceAccount per namespace.
import { binaryPath } from '../upstream/paths.ts';
import type { ManagedProcess, ProcessGroup } from './processes.ts';

export const CONTROLLERS = ['garbage-collector-controller', 'namespace-controller', 'serviceaccount-controller'];

/** What a cluster with a kubelet needs on top (test/harness/node/): Deployments, Services, PDBs, pods' CA. */
export const NODE_CONTROLLERS = [
  ...CONTROLLERS,
  'deployment-controller',
  'replicaset-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'disruption-controller',
  'root-ca-certificate-publisher-controller',
  'node-lifecycle-controller',
  'pod-garbage-collector-controller',
  'taint-eviction-controller',
];

export interface ControllerManagerOptions {
  /** Default CONTROLLERS. */
  controllers?: readonly string[];
  /** CA published to every namespace as ConfigMap kube-root-ca.crt (pods' token volumes need it). */
  rootCaFile?: string;
}

export function controllerManagerArgs(kubeconfigPath: string, o: ControllerManagerOptions = {}): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--controllers=${(o.controllers ?? CONTROLLERS).join(',')}`,
    ...(o.rootCaFile ? [`--root-ca-file=${o.rootCaFile}`] : []),
    '--leader-elect=false',
    // No HTTPS endpoint: nothing scrapes it here, and it would need its own authn/authz kubeconfigs.
    '--secure-port=0',
    '--use-service-account-credentials=false',
  ];
}

export function startControllerManager(
  group: ProcessGroup,
  kubeconfigPath: string,
  opts: ControllerManagerOptions = {},
): ManagedProcess {
  return group.spawn(
    'kube-controller-manager',
    binaryPath('kube-controller-manager'),
    controllerManagerArgs(kubeconfigPath, opts),
  );
}
