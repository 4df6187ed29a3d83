// Composition of the webhook process: admission cache (informers), certificate reloader, signed audit
// trail and the HTTPS server. The CLI (`vaultgate webhook`, `vaultgate run`) only parses flags into this.
// With admissionWorkers > 1 the same call builds, in a node:cluster primary, the primary that forks the
// workers and holds the trail (admission-primary.ts), and in each worker this whole webhook with its
// records sent to the primary's trail (trail/ipc.ts).
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { AggregatorRegistry } from 'prom-client';
import { createCertReloader, type CertReloader } from '../certs/reloader.ts';
import { auditAdmission } from '../trail/events.ts';
import { remoteTrail, type TrailAppender, type TrailChannel } from '../trail/ipc.ts';
import { openAuditTrail, type AuditTrailConfig } from '../trail/open.ts';
import type { AuditTrail } from '../trail/trail.ts';
import type { KubeClient } from '../kube/index.ts';
import { warmUp } from '../schemas/validator.ts';
import { defaultContext } from './admission/context.ts';
import { createContextSource, type ContextSource, type ContextSourceOptions } from './context-source.ts';
import { createWebhookApp } from './http-app.ts';
import { createWebhookMetrics, registerAuditMetrics } from './metrics.ts';
import { startWebhookServer, type WebhookServer } from './server.ts';
import { startMetricsServer, type MetricsServer } from './metrics-server.ts';
import { buildAdmissionPrimary, WORKER_STOP_MESSAGE, type WebhookProcess } from './admission-primary.ts';

/** The cluster-knowledge options are the admission cache's (context-source.ts), documented there. */
export interface WebhookProcessOptions extends Omit<ContextSourceOptions, 'client'> {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  /** Without a client the webhook runs on built-in guardrails only (no cluster knowledge). */
  client?: KubeClient;
  /** Seconds to keep serving after SIGTERM before closing (the apiserver reuses connections to terminating pods). */
  drainSeconds: number;
  audit?: AuditTrailConfig;
  /**
   * PEM CA file: admission calls must present a client certificate it verifies (the apiserver's webhook
   * client credentials, AdmissionConfiguration → kubeConfigFile); others get 401 and are not recorded.
   */
  clientCaFile?: string;
  /** The client certificate subjects (CN) accepted with clientCaFile (default: http-app.ts DEFAULT_CLIENT_SUBJECTS). */
  clientSubjects?: string[];
  /** Plain-HTTP port of /metrics, apart from the admission port (0: any free port; undefined: not served). */
  metricsPort?: number;
  /**
   * Processes answering admission reviews (node:cluster workers sharing the port, one audit trail writer
   * in the primary). 1 or undefined: this process alone, as before. See docs/decisions/admission-workers.md.
   */
  admissionWorkers?: number;
}

// The process's handle; declared beside the primary, which is one form of it.
export type { WebhookProcess } from './admission-primary.ts';

export function buildWebhookProcess(opts: WebhookProcessOptions): WebhookProcess {
  const workers = opts.admissionWorkers ?? 1;
  if (workers <= 1) return buildServingProcess(opts);
  if (cluster.isPrimary)
    return buildAdmissionPrimary({
      workers,
      host: opts.host,
      logger: opts.logger,
      ...(opts.audit ? { audit: opts.audit } : {}),
      ...(opts.client ? { client: opts.client } : {}),
      ...(opts.metricsPort !== undefined ? { metricsPort: opts.metricsPort } : {}),
    });
  return buildServingProcess(opts, process as unknown as TrailChannel);
}

/**
 * The webhook that answers reviews: the whole process, or (with `primary`, the channel to a node:cluster
 * primary) one admission worker whose records the primary writes and whose metrics it serves.
 */
function buildServingProcess(opts: WebhookProcessOptions, primary?: TrailChannel): WebhookProcess {
  const log = opts.logger;
  const metrics = createWebhookMetrics();
  const reloader: CertReloader = createCertReloader({
    certFile: opts.certFile,
    keyFile: opts.keyFile,
    log,
    registry: metrics.registry,
  });
  const source: ContextSource | undefined = opts.client
    ? createContextSource({
        client: opts.client,
        namePrefix: opts.namePrefix,
        controllerClass: opts.controllerClass,
        ...(opts.vaultTarget ? { vaultTarget: opts.vaultTarget } : {}),
        ...(opts.vaultServers ? { vaultServers: opts.vaultServers } : {}),
        ...(opts.apiServerAudiences ? { apiServerAudiences: opts.apiServerAudiences } : {}),
        ...(opts.namespaces?.length ? { namespaces: opts.namespaces } : {}),
        logger: log,
      })
    : undefined;
  const offlineContext = defaultContext({
    namePrefix: opts.namePrefix,
    controllerClass: opts.controllerClass,
    ...(opts.vaultTarget ? { vaultTarget: opts.vaultTarget } : {}),
    ...(opts.vaultServers ? { vaultServers: opts.vaultServers } : {}),
    ...(opts.apiServerAudiences ? { apiServerAudiences: opts.apiServerAudiences } : {}),
  });
  let trail: AuditTrail | undefined;
  let server: WebhookServer | undefined;
  let metricsServer: MetricsServer | undefined;
  let draining = false;
  const clientCa = opts.clientCaFile ? readFileSync(opts.clientCaFile) : undefined;
  const remote: TrailAppender | undefined = primary && opts.audit ? remoteTrail(primary) : undefined;
  if (primary) {
    // The primary sums the workers' figures: constructing an AggregatorRegistry is what makes a worker
    // answer its requests (prom-client lib/cluster.js addListeners), setRegistries what it answers with.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([metrics.registry]);
  } else registerAuditMetrics(metrics.registry, () => trail);

  const ready = (): boolean => !draining && reloader.ready() && (source?.synced() ?? true);
  const app = createWebhookApp({
    context: () => source?.context() ?? offlineContext,
    logger: log,
    metrics,
    ready,
    requireClientCert: Boolean(clientCa),
    ...(opts.clientSubjects?.length ? { clientSubjects: opts.clientSubjects } : {}),
    draining: () => draining,
    // The answer waits until the record is written (batched with concurrent decisions, one signature per
    // batch): no decision is answered unrecorded, and a full queue slows admission down instead of
    // growing memory. A record that cannot be written turns the answer into a denial (http-app.ts).
    onDecision: !opts.audit
      ? undefined
      : (webhook, request, decision, caller) =>
          (remote ?? trail)?.append(
            auditAdmission(decision, request, { webhook: webhook === 'mutate' ? 'mutating' : 'validating', caller }),
          ),
  });

  const proc: WebhookProcess = {
    url: () => server?.url ?? '',
    ready,
    auditTrail: () => trail,
    metricsPort: () => metricsServer?.port,
    workerPids: () => [],
    async start() {
      warmUp(); // compile every schema now: the first review must not pay ~1 s of ajv compilation
      source?.start();
      if (primary) {
        // The primary tells its workers when to stop (it got SIGTERM): drain as one process would.
        primary.on('message', (m) => {
          if (m === WORKER_STOP_MESSAGE)
            void proc.stop().finally(() => {
              process.exit(0);
            });
        });
      }
      trail = opts.audit && !primary ? await openAuditTrail(opts.audit, opts.client) : undefined;
      const abort = AbortSignal.timeout(120_000);
      const pair = await reloader.waitUntilReady(abort).catch(() => {
        throw new Error(
          `no valid certificate/key pair at ${opts.certFile} / ${opts.keyFile} after 120 s (create one with: vaultgate certs create)`,
        );
      });
      server = await startWebhookServer(app, {
        host: opts.host,
        port: opts.port,
        tls: { cert: pair.cert, key: pair.key },
        ...(clientCa ? { clientCa } : {}),
      });
      reloader.start(server);
      if (opts.metricsPort !== undefined && !primary)
        metricsServer = await startMetricsServer(metrics.registry, { host: opts.host, port: opts.metricsPort });
      log.info(
        {
          url: server.url,
          subject: pair.subject,
          notAfter: new Date(pair.notAfter).toISOString(),
          audit: Boolean(trail ?? remote),
          ...(primary ? { worker: process.pid } : {}),
          clientAuth: Boolean(clientCa),
          ...(clientCa ? { clientSubjects: opts.clientSubjects ?? 'default' } : {}),
          metricsPort: metricsServer?.port,
        },
        'webhook serving',
      );
    },
    async stop() {
      draining = true; // /readyz fails first so endpoints drop us, then keep answering in-flight traffic
      if (opts.drainSeconds > 0) await new Promise((r) => setTimeout(r, opts.drainSeconds * 1000));
      reloader.stop();
      await server?.close();
      await metricsServer?.close();
      await source?.stop();
      await trail?.close();
    },
  };
  return proc;
}
