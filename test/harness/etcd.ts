// owner: B
// etcd for the test apiserver, flags as envtest's (controller-runtime pkg/internal/testing/controlplane/etcd.go).
import { join } from 'node:path';
import { binaryPath } from '../upstream/paths.ts';
import type { ProcessGroup } from './processes.ts';
import { waitFor } from './wait.ts';

export interface EtcdEndpoint {
  clientUrl: string;
}

export function etcdArgs(dataDir: string, clientPort: number, peerPort: number): string[] {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    '--name=vaultgate-test',
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=vaultgate-test=${peer}`,
    // Test data is thrown away: fsync only costs time (envtest sets it too, etcd >= 3.5).
    '--unsafe-no-fsync=true',
    '--log-level=warn',
  ];
}

export async function startEtcd(group: ProcessGroup, clientPort: number, peerPort: number): Promise<EtcdEndpoint> {
  const proc = group.spawn('etcd', binaryPath('etcd'), etcdArgs(join(group.dir, 'etcd'), clientPort, peerPort));
  const clientUrl = `http://127.0.0.1:${clientPort}`;
  await waitFor(
    async () => {
      const res = await fetch(`${clientUrl}/health`);
      const body = (await res.json()) as { health?: string };
      return body.health === 'true' ? true : undefined;
    },
    {
      what: 'etcd /health',
      timeoutMs: 20_000,
      abort: proc.exited.then((why) => `etcd exited (${why}):\n${group.logTail('etcd')}`),
    },
  );
  return { clientUrl };
}
