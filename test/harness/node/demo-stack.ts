// A node stack with one pod (a projected token and a Secret volume: tmpfs mounts, a network namespace,
// cgroups), for test/real/node-cleanup.test.ts, which SIGKILLs this process to prove the reaper
// removes everything. Prints READY once the pod runs, then waits to be killed.
// Usage: node --import tsx test/harness/node/demo-stack.ts
import { startNodeCluster } from './cluster.ts';

const cluster = await startNodeCluster({ log: (l) => process.stderr.write(`${l}\n`) });
const pause = (await import('../../image/images.ts')).buildPauseImage;
const ref = (await pause()).ref;
await cluster.cp.apply([
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'demo', namespace: 'default' }, stringData: { k: 'v' } },
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'demo', namespace: 'default' },
    spec: {
      containers: [{ name: 'c', image: ref, imagePullPolicy: 'Never', volumeMounts: [{ name: 's', mountPath: '/s' }] }],
      volumes: [{ name: 's', secret: { secretName: 'demo' } }],
    },
  },
]);
await cluster.cp.kubectl(['wait', '--for=condition=Ready', 'pod/demo', '--timeout=120s']);
process.stdout.write('READY\n');
setInterval(() => undefined, 1 << 30);
