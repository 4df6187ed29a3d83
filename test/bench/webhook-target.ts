// Child process for the admission benchmark: serves the real webhook app (trail off), the webhook
// process as the chart runs it (webhook/main.ts with the audit trail on, records on stdout; `trail`: one
// process, `trail-workers`: the default --admission-workers, node:cluster workers forked from this
// same file, which re-run it with the same arguments and only serve), or a bare
// Node HTTPS server that parses the same JSON and answers a fixed allow. Sends its port on the IPC
// channel (stdout carries the audit records: the benchmark points it at a file, as a container runtime
// does). On IPC it answers `cpu` with its own CPU time (so the benchmark can report CPU per request),
// `stats` with the RSS high-water mark since the last `stats` (sampled every 20 ms) and the audit
// trail's figures, and `decision` with the in-process cost of one review. webhook.ts bundles this file
// with the production build options (cli/build.ts) so that what is measured is what the image runs.
import cluster from 'node:cluster';
import https from 'node:https';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWebhookProcess } from '../../webhook/main.ts';
import { CORE_ADMISSION_WORKERS } from '../../webhook/defaults.ts';
import { generateAuditKey, privateKeyPem } from '../../trail/keys.ts';
import { createWebhookApp } from '../../webhook/http-app.ts';
import { createWebhookMetrics } from '../../webhook/metrics.ts';
import { startWebhookServer } from '../../webhook/server.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import { reviewMutation, reviewValidation } from '../../webhook/review/review.ts';
import { warmUp } from '../../schemas/validator.ts';
import { silentLogger } from '../../observability/log.ts';
import { twentyRulePolicyReview } from './fixtures.ts';

const [mode, certFile, keyFile] = process.argv.slice(2);
const tls = { cert: readFileSync(certFile!), key: readFileSync(keyFile!) };

/** CPU time of this process in µs: unlike wall time, it does not count the time other processes hold the CPU. */
function cpuNow(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const round2 = (v: number): number => Number(v.toFixed(2));

/** Per-review cost of the pure core, median of several batches (mutate and validate, as the apiserver calls both). */
async function decisionCost(): Promise<Record<string, number>> {
  const ctx = defaultContext();
  const req = twentyRulePolicyReview().request;
  for (let i = 0; i < 3000; i++) {
    await reviewMutation(req, ctx);
    await reviewValidation(req, ctx);
  }
  const batch = 4000;
  const both: number[] = [];
  const mutation: number[] = [];
  const validation: number[] = [];
  for (let b = 0; b < 5; b++) {
    const t0 = cpuNow();
    for (let i = 0; i < batch; i++) await reviewMutation(req, ctx);
    const t1 = cpuNow();
    for (let i = 0; i < batch; i++) await reviewValidation(req, ctx);
    const t2 = cpuNow();
    mutation.push((t1 - t0) / batch);
    validation.push((t2 - t1) / batch);
    both.push((t2 - t0) / batch / 2);
  }
  return {
    decision_us_per_review: round2(median(both)),
    decision_mutate_us: round2(median(mutation)),
    decision_validate_us: round2(median(validation)),
  };
}

let rssPeak = process.memoryUsage.rss();
setInterval(() => {
  const r = process.memoryUsage.rss();
  if (r > rssPeak) rssPeak = r;
}, 20).unref();
let trailStats: () => Record<string, number> | undefined = () => undefined;

process.on('message', (m: unknown) => {
  if (cluster.isWorker) return; // an admission worker's channel goes to the primary, not the benchmark
  if (m === 'cpu') process.send?.({ cpuMicros: cpuNow() });
  else if (m === 'stats') {
    const rss = Math.max(rssPeak, process.memoryUsage.rss());
    rssPeak = process.memoryUsage.rss();
    process.send?.({ stats: { rssPeakBytes: rss, ...trailStats() } });
  } else if (m === 'decision') void decisionCost().then((decision) => process.send?.({ decision }));
});
process.on('disconnect', () => process.exit(0));
const announce = (port: number): void => {
  if (!cluster.isWorker) process.send?.({ port });
};

if (mode === 'bare') {
  const server = https.createServer({ ...tls, minVersion: 'TLSv1.2' }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed: true },
        }),
      );
    });
  });
  server.keepAliveTimeout = 90_000;
  server.listen(0, '127.0.0.1', () => {
    announce((server.address() as { port: number }).port);
  });
} else if (mode === 'trail' || mode === 'trail-workers') {
  // As the chart runs it: `vaultgate webhook --audit` (records to stdout), here without a cluster, so
  // with a local key instead of the Secret (the signing is the same).
  // The primary makes the key; its workers never read it (they send their records to the primary).
  const dir = cluster.isWorker ? tmpdir() : mkdtempSync(join(tmpdir(), 'vaultgate-bench-key-'));
  if (!cluster.isWorker)
    writeFileSync(join(dir, 'audit.pem'), privateKeyPem(await generateAuditKey()), { mode: 0o600 });
  const proc = buildWebhookProcess({
    host: '127.0.0.1',
    port: 0,
    certFile: certFile!,
    keyFile: keyFile!,
    namePrefix: 'vaultgate',
    controllerClass: '',
    logger: silentLogger,
    drainSeconds: 0,
    audit: { replica: 'bench-0', keyFile: join(dir, 'audit.pem') },
    admissionWorkers: mode === 'trail-workers' ? CORE_ADMISSION_WORKERS : 1,
  });
  await proc.start();
  trailStats = () => {
    const t = proc.auditTrail()?.takeStats();
    return (
      t && {
        records: t.records,
        batches: t.batches,
        queuedHighWater: t.queuedHighWater,
        lagMaxMs: t.lagMaxMs,
        lagTotalMs: t.lagTotalMs,
        queued: t.queued,
      }
    );
  };
  announce(Number(new URL(proc.url()).port));
} else {
  // As webhook/main.ts runs without a cluster: one offline context, schemas compiled before serving,
  // default process metrics on.
  const context = defaultContext();
  warmUp();
  const app = createWebhookApp({
    context: () => context,
    logger: silentLogger,
    metrics: createWebhookMetrics(),
    ready: () => true,
  });
  const srv = await startWebhookServer(app, { host: '127.0.0.1', port: 0, tls });
  announce(srv.port);
}
