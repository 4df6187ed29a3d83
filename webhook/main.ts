// Composition of the webhook process: admission cache (informers), certificate reloader, signed audit
// trail and the HTTPS server. The CLI (`vaultgate webhook`, `vaultgate run`) only parses flags into this.
import { createCertReloader, type CertReloader } from '../certs/reloader.ts';
import { auditAdmission } from '../audit/events.ts';
import { openAuditTrail, type AuditTrailConfig } from '../audit/open.ts';
import type { AuditTrail } from '../audit/trail.ts';
import type { KubeClient } from '../controller/runtime/index.ts';
import type { Logger } from '../observability/log.ts';
import { warmUp } from '../schemas/validator.ts';
import { defaultContext } from './admission/context.ts';
import { createContextSource, type ContextSource } from './context-source.ts';
import { createWebhookApp } from './http-app.ts';
import { createWebhookMetrics } from './metrics.ts';
import { startWebhookServer, type WebhookServer } from './server.ts';

export interface WebhookProcessOptions {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  /** Without a client the webhook runs on built-in guardrails only (no cluster knowledge). */
  client?: KubeClient;
  namePrefix: string;
  controllerClass: string;
  logger: Logger;
  /** Seconds to keep serving after SIGTERM before closing (the apiserver reuses connections to terminating pods). */
  drainSeconds: number;
  audit?: AuditTrailConfig;
}

export interface WebhookProcess {
  url(): string;
  ready(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}


export function buildWebhookProcess(opts: WebhookProcessOptions): WebhookProcess {
  const log = opts.logger;
  const metrics = createWebhookMetrics();
  const reloader: CertReloader = createCertReloader({ certFile: opts.certFile, keyFile: opts.keyFile, log, registry: metrics.registry });
  const source: ContextSource | undefined = opts.client
    ? createContextSource({ client: opts.client, namePrefix: opts.namePrefix, controllerClass: opts.controllerClass, logger: log })
    : undefined;
  const offlineContext = defaultContext({ namePrefix: opts.namePrefix, controllerClass: opts.controllerClass });
  let trail: AuditTrail | undefined;
  let server: WebhookServer | undefined;
  let draining = false;

  const ready = (): boolean => !draining && reloader.ready() && (source?.synced() ?? true);
  const app = createWebhookApp({
    context: () => source?.context() ?? offlineContext,
    logger: log,
    metrics,
    ready,
    onDecision: (webhook, request, decision) => {
      if (!trail) return;
      // Never fail an admission on an audit error: log it (the metric shows the gap).
      trail.append(auditAdmission(decision, request, { webhook: webhook === 'mutate' ? 'mutating' : 'validating' }))
        .catch((err: unknown) => log.error({ err: err instanceof Error ? err.message : String(err) }, 'audit record could not be written'));
    },
  });

  return {
    url: () => server?.url ?? '',
    ready,
    async start() {
      warmUp(); // compile every schema now: the first review must not pay ~1 s of ajv compilation
      source?.start();
      trail = opts.audit ? await openAuditTrail(opts.audit, opts.client) : undefined;
      const abort = AbortSignal.timeout(120_000);
      const pair = await reloader.waitUntilReady(abort).catch(() => {
        throw new Error(`no valid certificate/key pair at ${opts.certFile} / ${opts.keyFile} after 120 s (create one with: vaultgate certs create)`);
      });
      server = await startWebhookServer(app, { host: opts.host, port: opts.port, tls: { cert: pair.cert, key: pair.key } });
      reloader.start(server);
      log.info({ url: server.url, subject: pair.subject, notAfter: new Date(pair.notAfter).toISOString(), audit: Boolean(trail) }, 'webhook serving');
    },
    async stop() {
      draining = true; // /readyz fails first so endpoints drop us, then keep answering in-flight traffic
      if (opts.drainSeconds > 0) await new Promise((r) => setTimeout(r, opts.drainSeconds * 1000));
      reloader.stop();
      await server?.close();
      await source?.stop();
      await trail?.close();
    },
  };
}
