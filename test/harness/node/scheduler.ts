// kube-scheduler: no leader election (one replica), no HTTPS endpoint (nothing scrapes it here).
import { nodeBinaryPath } from '../../upstream/node-binaries.ts';
import type { ManagedProcess, ProcessGroup } from '../processes.ts';

export function startScheduler(group: ProcessGroup, kubeconfigPath: string): ManagedProcess {
  return group.spawn('kube-scheduler', nodeBinaryPath('kube-scheduler'), [
    `--kubeconfig=${kubeconfigPath}`,
    '--leader-elect=false',
    '--secure-port=0',
  ]);
}
