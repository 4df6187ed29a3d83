// owner: B
// kube-controller-manager with only the controllers an apiserver-only envtest lacks and our tests need:
// ownerReference garbage collection, namespace deletion, and the `default` ServiceAccount per namespace.
import { binaryPath } from '../upstream/paths.ts';
import type { ManagedProcess, ProcessGroup } from './processes.ts';

export const CONTROLLERS = ['garbage-collector-controller', 'namespace-controller', 'serviceaccount-controller'];

export function controllerManagerArgs(kubeconfigPath: string): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--controllers=${CONTROLLERS.join(',')}`,
    '--leader-elect=false',
    // No HTTPS endpoint: nothing scrapes it here, and it would need its own authn/authz kubeconfigs.
    '--secure-port=0',
    '--use-service-account-credentials=false',
  ];
}

export function startControllerManager(group: ProcessGroup, kubeconfigPath: string): ManagedProcess {
  return group.spawn('kube-controller-manager', binaryPath('kube-controller-manager'), controllerManagerArgs(kubeconfigPath));
}
