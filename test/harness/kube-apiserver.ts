// owner: B
// kube-apiserver with envtest's flags (controller-runtime pkg/internal/testing/controlplane/apiserver.go
// defaultArgs + auth.go CertAuthn): client-cert users, RBAC, service-account signing key and issuer (so
// TokenRequest and TokenReview work), default admission plugins incl. Mutating/ValidatingAdmissionWebhook.
import { binaryPath } from '../upstream/paths.ts';
import { type KubeCredentials, kubeRequest } from './kube-http.ts';
import type { ManagedProcess, ProcessGroup } from './processes.ts';
import { waitFor } from './wait.ts';

export interface ApiserverFiles {
  certDir: string;
  clientCaFile: string;
  servingCertFile: string;
  servingKeyFile: string;
  saPublicKeyFile: string;
  saSigningKeyFile: string;
}

export const SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';

/**
 * Opt-in settings for a cluster whose pods reach the apiserver (test/harness/node/): an address beyond
 * loopback, the `kubernetes` Service's endpoint kept by the lease reconciler, and the ServiceAccount
 * admission plugin (it mounts each pod's token). Without them the apiserver runs as envtest's.
 */
export interface ApiserverOptions {
  /** --bind-address and --advertise-address (default 127.0.0.1). */
  bindAddress?: string;
  /** --service-cluster-ip-range (default SERVICE_CLUSTER_IP_RANGE). */
  serviceClusterIpRange?: string;
  /** Keep the `kubernetes` Service's endpoints (lease reconciler) instead of `none`. */
  endpointReconciler?: 'lease';
  /** Keep the ServiceAccount admission plugin on (pods get their token volume). */
  serviceAccountAdmission?: boolean;
  /** --admission-control-config-file (e.g. client credentials the apiserver presents to webhooks). */
  admissionControlConfigFile?: string;
}

export function apiserverArgs(port: number, etcdUrl: string, f: ApiserverFiles, o: ApiserverOptions = {}): string[] {
  const bind = o.bindAddress ?? '127.0.0.1';
  return [
    `--bind-address=${bind}`,
    `--advertise-address=${bind}`,
    `--secure-port=${port}`,
    `--cert-dir=${f.certDir}`,
    `--tls-cert-file=${f.servingCertFile}`,
    `--tls-private-key-file=${f.servingKeyFile}`,
    `--client-ca-file=${f.clientCaFile}`,
    `--etcd-servers=${etcdUrl}`,
    `--service-cluster-ip-range=${o.serviceClusterIpRange ?? SERVICE_CLUSTER_IP_RANGE}`,
    '--allow-privileged=true',
    // As envtest: the ServiceAccount admission plugin would demand token controllers for pods.
    ...(o.serviceAccountAdmission ? [] : ['--disable-admission-plugins=ServiceAccount']),
    '--authorization-mode=RBAC',
    ...(o.admissionControlConfigFile ? [`--admission-control-config-file=${o.admissionControlConfigFile}`] : []),
    `--service-account-issuer=https://${bind}:${port}/`,
    `--service-account-key-file=${f.saPublicKeyFile}`,
    `--service-account-signing-key-file=${f.saSigningKeyFile}`,
    '--profiling=false',
    // 127.0.0.1 is not a valid Endpoints address ("may not be in the loopback range"): without this the
    // apiserver logs an error for the `kubernetes` Service every few seconds. Only pods use it.
    `--endpoint-reconciler-type=${o.endpointReconciler ?? 'none'}`,
    // On SIGTERM, actively end open watches (e.g. kube-controller-manager's) instead of waiting for them
    // until the shutdown timeout: keeps restartApiserver() graceful and quick.
    '--shutdown-watch-termination-grace-period=2s',
  ];
}

export function startApiserverProcess(
  group: ProcessGroup,
  port: number,
  etcdUrl: string,
  files: ApiserverFiles,
  opts: ApiserverOptions = {},
): ManagedProcess {
  return group.spawn('kube-apiserver', binaryPath('kube-apiserver'), apiserverArgs(port, etcdUrl, files, opts));
}

/** Waits for /readyz (all post-start hooks, incl. RBAC bootstrap roles, informers synced). */
export async function waitApiserverReady(
  group: ProcessGroup,
  proc: ManagedProcess,
  creds: KubeCredentials,
): Promise<void> {
  await waitFor(
    async () => {
      const res = await kubeRequest(creds, 'GET', '/readyz');
      if (res.status === 200) return true;
      throw new Error(
        `/readyz ${res.status}: ${res.text
          .split('\n')
          .filter((l) => l.includes('[-]'))
          .join('; ')}`,
      );
    },
    {
      what: 'kube-apiserver /readyz',
      timeoutMs: 60_000,
      intervalMs: 200,
      abort: proc.exited.then((why) => `kube-apiserver exited (${why}):\n${group.logTail('kube-apiserver')}`),
    },
  );
}
