// Event-loop lag (nodejs_eventloop_lag_*, prom-client's names) sampled only while the process works.
// Node's lag histogram samples on a libuv timer: at 500 ms that timer alone woke an idle webhook or
// controller 1,200 times in 10 minutes, with the garbage and GC each wake brings (issue #24.5). A check
// every CHECK_MS reads the loop's utilisation since the last check (performance.eventLoopUtilization: no
// timer of its own) and runs the sampler only while the loop was busy; an idle process wakes 60 times in
// 10 minutes instead. What is lost: a single stall in an otherwise idle window (the request-duration
// histograms still show it to whoever was waiting).
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

/**
 * The sampler's period while on (prom-client's is 10 ms). Node records the time between two firings, so the
 * lag served is that minus the period: 0 for a loop that fired on time.
 */
export const EVENT_LOOP_SAMPLE_MS = 20;
/** How often the utilisation is checked (the only wake of an idle process from this module). */
export const LAG_CHECK_MS = 10_000;
/** Busy: the loop ran callbacks at least this share of the last check window (1% = 100 ms in 10 s). */
export const BUSY_UTILIZATION = 0.01;

export interface EventLoopLagOptions {
  checkMs?: number;
  busyUtilization?: number;
  /** For tests: the sampler (node's monitorEventLoopDelay). */
  monitor?: (o: { resolution: number }) => IntervalHistogram;
}

/** What the next window does: pure, from the utilisation of the last one. */
export function samplerWanted(utilization: number, busyUtilization = BUSY_UTILIZATION): boolean {
  return utilization >= busyUtilization;
}

export interface EventLoopLag {
  /** Whether the sampler runs now (for tests and the idle bench). */
  sampling(): boolean;
  stop(): void;
}

/** Registers the lag gauges on `registry` and starts the utilisation check (an unref'd timer). */
export function registerEventLoopLag(registry: Registry, prefix = '', opts: EventLoopLagOptions = {}): EventLoopLag {
  const checkMs = opts.checkMs ?? LAG_CHECK_MS;
  const histogram = (opts.monitor ?? monitorEventLoopDelay)({ resolution: EVENT_LOOP_SAMPLE_MS });
  let on = false;
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const want = samplerWanted(performance.eventLoopUtilization(now, last).utilization, opts.busyUtilization);
    last = now;
    if (want && !on) histogram.enable();
    if (!want && on) histogram.disable();
    on = want;
  }, checkMs);
  timer.unref();

  // Empty histogram (no busy window since the last scrape): no lag seen, 0 rather than node's sentinels.
  const period = EVENT_LOOP_SAMPLE_MS * 1e6;
  const seconds = (ns: number): number =>
    histogram.count > 0 && Number.isFinite(ns) ? Math.max(0, ns - period) / 1e9 : 0;
  const gauge = (suffix: string, help: string, collect?: () => void): Gauge =>
    new Gauge({
      name: `${prefix}nodejs_eventloop_lag${suffix}`,
      help,
      registers: [registry],
      ...(collect ? { collect } : {}),
    });
  const stats: Array<[Gauge, () => number]> = [];
  // Registered first, so its collect (as prom-client's) sets every statistic before they are read.
  gauge('_seconds', 'Lag of event loop in seconds.', function (this: Gauge) {
    const start = process.hrtime.bigint();
    setImmediate(() => this.set(Number(process.hrtime.bigint() - start) / 1e9));
    for (const [g, read] of stats) g.set(read());
    histogram.reset();
  });
  const stat = (suffix: string, help: string, read: () => number): void => void stats.push([gauge(suffix, help), read]);
  stat('_min_seconds', 'The minimum recorded event loop delay.', () => seconds(histogram.min));
  stat('_max_seconds', 'The maximum recorded event loop delay.', () => seconds(histogram.max));
  stat('_mean_seconds', 'The mean of the recorded event loop delays.', () => seconds(histogram.mean));
  stat('_stddev_seconds', 'The standard deviation of the recorded event loop delays.', () =>
    histogram.count > 0 && Number.isFinite(histogram.stddev) ? histogram.stddev / 1e9 : 0,
  );
  for (const p of [50, 90, 99])
    stat(`_p${p}_seconds`, `The ${p}th percentile of the recorded event loop delays.`, () =>
      seconds(histogram.percentile(p)),
    );
  return {
    sampling: () => on,
    stop: () => {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
