// A webhook process with admission workers, for test/webhook/admission-primary.test.ts: `node --import
// tsx this-file <dir> <workers>` serves with the certificate files <dir>/tls.crt and tls.key, the audit
// trail in <dir>/audit.log signed with <dir>/audit.pem, and sends { port, workers: [pids] } on its IPC
// channel once serving. node:cluster forks the workers from this same file: they only serve.
import cluster from 'node:cluster';
import { join } from 'node:path';
import { silentLogger } from '../../observability/log.ts';
import { buildWebhookProcess } from '../../webhook/main.ts';

const [dir, workers] = process.argv.slice(2);
const proc = buildWebhookProcess({
  host: '127.0.0.1',
  port: 0,
  certFile: join(dir!, 'tls.crt'),
  keyFile: join(dir!, 'tls.key'),
  namePrefix: 'vaultgate',
  controllerClass: '',
  logger: silentLogger,
  drainSeconds: 0,
  audit: { replica: 'test-0', keyFile: join(dir!, 'audit.pem'), file: join(dir!, 'audit.log') },
  admissionWorkers: Number(workers),
  metricsPort: 0,
});
await proc.start();
if (cluster.isPrimary) {
  process.send?.({ port: Number(new URL(proc.url()).port), workers: proc.workerPids(), metrics: proc.metricsPort() });
  process.on('SIGTERM', () => {
    void proc.stop().then(() => process.exit(0));
  });
}
