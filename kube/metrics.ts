// Prometheus metrics of the runtime, in one prom-client Registry that other parts (the Vault adapter,
// reconcilers) register into: `metrics.registry`.
//
// Names: ESO exposes controller-runtime's default metrics and no runtime metrics of its own (its own are per kind),
// so where the meaning is the same we use controller-runtime's names, which ESO/VSO dashboards already chart:
//   controller_runtime_reconcile_total{controller,result}        result = success|error|requeue|requeue_after
//   controller_runtime_reconcile_errors_total{controller}
//   controller_runtime_terminal_reconcile_errors_total{controller}
//   controller_runtime_reconcile_time_seconds{controller}
//   controller_runtime_max_concurrent_reconciles{controller}, controller_runtime_active_workers{controller}
//   workqueue_{depth,adds_total,queue_duration_seconds,work_duration_seconds,retries_total}{name}
//   leader_election_master_status{name}                           (client-go's leader-election metric)
// Informer metrics have no controller-runtime equivalent (client-go's reflector metrics were removed), so
// they are vaultgate_-prefixed: vaultgate_informer_events_total, _restarts_total, _synced.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from '../observability/process-metrics.ts';
import type { InformerLifecycleEvent } from './informer.ts';
import type { QueueMetrics } from './workqueue.ts';

const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const QUEUE_BUCKETS = [1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000];

export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';

export class RuntimeMetrics {
  readonly registry: Registry;
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly maxConcurrent: Gauge<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly queueDepth: Gauge<'name'>;
  readonly queueAdds: Counter<'name'>;
  readonly queueLatency: Histogram<'name'>;
  readonly workDuration: Histogram<'name'>;
  readonly queueRetries: Counter<'name'>;
  readonly leaderStatus: Gauge<'name'>;
  readonly informerEvents: Counter<'resource' | 'type'>;
  readonly informerRestarts: Counter<'resource' | 'reason'>;
  readonly informerSynced: Gauge<'resource'>;

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    // One line a metric: name, help, labels (and a histogram's buckets), all in this registry.
    const counter = <L extends string>(name: string, help: string, labelNames: L[]): Counter<L> =>
      new Counter({ name, help, labelNames, registers: [registry] });
    const gauge = <L extends string>(name: string, help: string, labelNames: L[]): Gauge<L> =>
      new Gauge({ name, help, labelNames, registers: [registry] });
    const histogram = <L extends string>(
      name: string,
      help: string,
      labelNames: L[],
      buckets: number[],
    ): Histogram<L> => new Histogram({ name, help, labelNames, buckets, registers: [registry] });
    this.reconcileTotal = counter(
      'controller_runtime_reconcile_total',
      'Total number of reconciliations per controller',
      ['controller', 'result'],
    );
    this.reconcileErrors = counter(
      'controller_runtime_reconcile_errors_total',
      'Total number of reconciliation errors per controller',
      ['controller'],
    );
    this.terminalErrors = counter(
      'controller_runtime_terminal_reconcile_errors_total',
      'Total number of terminal reconciliation errors per controller',
      ['controller'],
    );
    this.reconcileTime = histogram(
      'controller_runtime_reconcile_time_seconds',
      'Length of time per reconciliation per controller',
      ['controller'],
      RECONCILE_BUCKETS,
    );
    this.maxConcurrent = gauge(
      'controller_runtime_max_concurrent_reconciles',
      'Maximum number of concurrent reconciles per controller',
      ['controller'],
    );
    this.activeWorkers = gauge('controller_runtime_active_workers', 'Number of currently used workers per controller', [
      'controller',
    ]);
    this.queueDepth = gauge('workqueue_depth', 'Current depth of workqueue', ['name']);
    this.queueAdds = counter('workqueue_adds_total', 'Total number of adds handled by workqueue', ['name']);
    this.queueLatency = histogram(
      'workqueue_queue_duration_seconds',
      'How long in seconds an item stays in workqueue before being requested',
      ['name'],
      QUEUE_BUCKETS,
    );
    this.workDuration = histogram(
      'workqueue_work_duration_seconds',
      'How long in seconds processing an item from workqueue takes',
      ['name'],
      QUEUE_BUCKETS,
    );
    this.queueRetries = counter('workqueue_retries_total', 'Total number of retries handled by workqueue', ['name']);
    this.leaderStatus = gauge(
      'leader_election_master_status',
      'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
      ['name'],
    );
    this.informerEvents = counter(
      'vaultgate_informer_events_total',
      'Informer lifecycle events (CONNECT, LIST, RELIST_410, WATCH_ERROR, BACKOFF, WATCHDOG_RESTART, ...) per resource',
      ['resource', 'type'],
    );
    this.informerRestarts = counter(
      'vaultgate_informer_restarts_total',
      'Watches restarted other than by a clean close, per resource and reason',
      ['resource', 'reason'],
    );
    this.informerSynced = gauge('vaultgate_informer_synced', '1 once the informer has listed its resource', [
      'resource',
    ]);
  }

  /** Process metrics (CPU, memory, event loop lag) into the same registry; call once per process. */
  collectProcessMetrics(): void {
    collectProcessMetrics(this.registry);
  }

  queueMetrics(name: string): QueueMetrics {
    this.queueDepth.set({ name }, 0); // present from the start, so dashboards don't show "no data"
    return {
      depth: (n) => this.queueDepth.set({ name }, n),
      added: () => this.queueAdds.inc({ name }),
      queueLatency: (s) => this.queueLatency.observe({ name }, s),
      workDuration: (s) => this.workDuration.observe({ name }, s),
      retried: () => this.queueRetries.inc({ name }),
    };
  }

  observeInformer(resource: string, ev: InformerLifecycleEvent): void {
    this.informerEvents.inc({ resource, type: ev.type });
    const restart: Partial<Record<InformerLifecycleEvent['type'], string>> = {
      RELIST_410: 'gone',
      WATCH_ERROR: 'error',
      WATCHDOG_RESTART: 'watchdog',
      LIST_ERROR: 'list_error',
    };
    const reason = restart[ev.type];
    if (reason) this.informerRestarts.inc({ resource, reason });
    if (ev.type === 'SYNCED') this.informerSynced.set({ resource }, 1);
  }
}
