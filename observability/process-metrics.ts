// Process metrics (CPU, memory, heap, handles, event-loop lag) of the controller and the webhook, into the
// registry each process serves on /metrics.
import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * How often the event-loop lag histogram samples. prom-client's default, 10 ms, is a timer firing 100 times
 * a second: most of an idle process's CPU (issue #24.5). A loop blocked for longer still shows.
 */
export const EVENT_LOOP_SAMPLE_MS = 500;

/** Call once per registry: prom-client refuses a second registration of the same names. */
export function collectProcessMetrics(registry: Registry, prefix = ''): void {
  collectDefaultMetrics({ register: registry, prefix, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
}
