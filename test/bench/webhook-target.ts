// Child process for the admission benchmark: serves either the real webhook app or a bare Node HTTPS
// server that parses the same JSON and answers a fixed allow. Prints the port on stdout; answers a
// `cpu` message on its IPC channel with its own CPU time, so the benchmark can report CPU per request.
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { createWebhookApp } from '../../webhook/http-app.ts';
import { createWebhookMetrics } from '../../webhook/metrics.ts';
import { startWebhookServer } from '../../webhook/server.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import { warmUp } from '../../schemas/validator.ts';
import { silentLogger } from '../../observability/log.ts';

const [mode, certFile, keyFile] = process.argv.slice(2);
const tls = { cert: readFileSync(certFile!), key: readFileSync(keyFile!) };

process.on('message', (m: unknown) => {
  if (m === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpuMicros: user + system });
  }
});
process.on('disconnect', () => process.exit(0));

if (mode === 'bare') {
  const server = https.createServer({ ...tls, minVersion: 'TLSv1.2' }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
    });
  });
  server.keepAliveTimeout = 90_000;
  server.listen(0, '127.0.0.1', () => { process.stdout.write(`${(server.address() as { port: number }).port}\n`); });
} else {
  // As webhook/main.ts runs without a cluster: one offline context, schemas compiled before serving,
  // default process metrics on.
  const context = defaultContext();
  warmUp();
  const app = createWebhookApp({ context: () => context, logger: silentLogger, metrics: createWebhookMetrics(), ready: () => true });
  const srv = await startWebhookServer(app, { host: '127.0.0.1', port: 0, tls });
  process.stdout.write(`${srv.port}\n`);
}
