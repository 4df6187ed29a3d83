// The webhook on every core (--admission-workers N > 1): a node:cluster primary that forks N workers,
// each a whole webhook (webhook/main.ts: HTTPS listener, certificate reloader, admission cache, rules)
// sharing the admission port, and holds the one audit trail they all write through (trail/ipc.ts). One
// process, one writer, one chain: a worker answers a decision only once the primary acknowledged its
// record as written. The primary serves /metrics: the workers' figures summed (prom-client's
// AggregatorRegistry) plus the trail's gauges. A worker that dies is replaced; when the primary dies its
// workers exit with it (node:cluster ends a worker whose channel to the primary closes).
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Registry } from 'prom-client';
import type { KubeClient } from '../kube/index.ts';
import type { Logger } from '../observability/log.ts';
import { serveTrail } from '../trail/ipc.ts';
import { openAuditTrail, type AuditTrailConfig } from '../trail/open.ts';
import type { AuditTrail } from '../trail/trail.ts';
import { registerAuditMetrics } from './metrics.ts';
import { startMetricsServer, type MetricsServer } from './metrics-server.ts';

/** The message the primary sends a worker to drain and exit (SIGTERM of the primary). */
export const WORKER_STOP_MESSAGE = 'vaultgate:admission-worker-stop';

export interface AdmissionPrimaryOptions {
  workers: number;
  host: string;
  logger: Logger;
  audit?: AuditTrailConfig;
  client?: KubeClient;
  metricsPort?: number;
}

/** A worker that keeps failing at start is not restarted in a tight loop. */
const RESTART_DELAY_MS = 1000;

export interface WebhookProcess {
  url(): string;
  ready(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The audit trail once started (metrics, benchmark). */
  auditTrail(): AuditTrail | undefined;
  /** The port /metrics listens on once started (undefined: not served). */
  metricsPort(): number | undefined;
  /** The admission workers' process ids (empty: this process answers itself). */
  workerPids(): number[];
}

export function buildAdmissionPrimary(opts: AdmissionPrimaryOptions): WebhookProcess {
  const log = opts.logger;
  let trail: AuditTrail | undefined;
  let metricsServer: MetricsServer | undefined;
  let port: number | undefined;
  let stopping = false;
  const listening = new Set<Worker>();
  const workers = new Set<Worker>();
  const ownRegistry = new Registry();
  registerAuditMetrics(ownRegistry, () => trail);
  const aggregator = new AggregatorRegistry();

  const fork = (): Worker => {
    const w = cluster.fork();
    workers.add(w);
    if (trail) serveTrail(w, trail);
    w.on('listening', (address: { port: number }) => {
      port = address.port;
      listening.add(w);
    });
    w.on('exit', (code, signal) => {
      workers.delete(w);
      listening.delete(w);
      if (stopping) return;
      log.error({ pid: w.process.pid, code, signal }, 'admission worker exited: starting another');
      setTimeout(() => {
        if (!stopping) fork();
      }, RESTART_DELAY_MS).unref();
    });
    return w;
  };

  const shownHost = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  return {
    url: () => (port === undefined ? '' : `https://${shownHost}:${port}`),
    ready: () => !stopping && listening.size === opts.workers,
    auditTrail: () => trail,
    metricsPort: () => metricsServer?.port,
    workerPids: () => [...workers].map((w) => w.process.pid!).filter(Boolean),
    async start() {
      trail = opts.audit ? await openAuditTrail(opts.audit, opts.client) : undefined;
      for (let i = 0; i < opts.workers; i++) fork();
      // Started once every worker listens (or one fails: its error is the workers' own, on stderr).
      await new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (listening.size === opts.workers) {
            cluster.off('listening', check);
            cluster.off('exit', failed);
            resolve();
          }
        };
        const failed = (w: Worker, code: number | null): void => {
          if (listening.size === opts.workers) return;
          cluster.off('listening', check);
          cluster.off('exit', failed);
          stopping = true;
          for (const other of workers) other.process.kill('SIGKILL');
          reject(new Error(`admission worker ${String(w.process.pid)} exited (code ${String(code)}) before serving`));
        };
        cluster.on('listening', check);
        cluster.on('exit', failed);
      });
      if (opts.metricsPort !== undefined) {
        metricsServer = await startMetricsServer(
          {
            contentType: ownRegistry.contentType,
            metrics: async () => `${await aggregator.clusterMetrics()}\n${await ownRegistry.metrics()}`,
          },
          { host: opts.host, port: opts.metricsPort },
        );
      }
      log.info(
        { url: shownHost && port !== undefined ? `https://${shownHost}:${port}` : undefined, workers: opts.workers },
        'webhook serving on admission workers',
      );
    },
    async stop() {
      stopping = true;
      // Each worker drains (its --drain-seconds, in-flight reviews, their records), then exits.
      await Promise.all(
        [...workers].map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.isDead()) {
                resolve();
                return;
              }
              w.once('exit', () => resolve());
              w.send(WORKER_STOP_MESSAGE, () => undefined);
            }),
        ),
      );
      await metricsServer?.close();
      await trail?.close();
    },
  };
}
