// Where the CLI's commands find the cluster: --kubeconfig, then KUBECONFIG, then in-cluster, then ~/.kube/config
// (client-node's loadFromDefault order).
// KubeConfig only, not the package index (the whole generated API): see cli/build.ts clientNodeConfigOnly.
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';

export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  const file = path ?? process.env.KUBECONFIG;
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) {
    throw new Error('no Kubernetes cluster configured: pass --kubeconfig, set KUBECONFIG, or run in a pod');
  }
  return kc;
}
