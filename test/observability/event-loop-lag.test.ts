// The event-loop lag sampler must not wake an idle process (issue #24.5): prom-client's fires on a libuv timer
// for the life of the process; ours runs only while the loop is busy, and a stall still shows.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { registerEventLoopLag, samplerWanted } from '../../observability/event-loop-lag.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
function spin(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}
async function gaugeValue(registry: Registry, name: string): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  assert.ok(m, `${name} is served`);
  return Number((m.values[0] as { value: number }).value);
}

/** A lag monitor whose sampler tells how often it was switched on, and whether its timer runs now. */
function counted(checkMs: number): {
  registry: Registry;
  enables: () => number;
  running: () => boolean;
  lag: ReturnType<typeof registerEventLoopLag>;
} {
  let enables = 0;
  let running = false;
  const registry = new Registry();
  const lag = registerEventLoopLag(registry, 't_', {
    checkMs,
    monitor: (o) => {
      const h = monitorEventLoopDelay(o);
      const enable = h.enable.bind(h);
      const disable = h.disable.bind(h);
      h.enable = () => (enables++, (running = true), enable());
      h.disable = () => ((running = false), disable());
      return h;
    },
  });
  return { registry, enables: () => enables, running: () => running, lag };
}

describe('event-loop lag', () => {
  test('busy is a share of the window: 1% or more', () => {
    assert.equal(samplerWanted(0), false);
    assert.equal(samplerWanted(0.005), false);
    assert.equal(samplerWanted(0.01), true);
    assert.equal(samplerWanted(0.9), true);
  });

  test('an idle process never switches the sampler on, and reports no lag', async () => {
    const { registry, enables, running, lag } = counted(500);
    try {
      await sleep(1_100); // two windows: whatever the test runner did before this test is behind us
      const before = enables();
      await sleep(1_600);
      assert.equal(enables(), before, 'no sampler switched on while idle');
      assert.equal(running(), false, "the sampler's timer is stopped");
      await registry.metrics(); // a scrape empties the histogram; with the sampler off it stays empty
      assert.equal(await gaugeValue(registry, 't_nodejs_eventloop_lag_p99_seconds'), 0);
      assert.equal(await gaugeValue(registry, 't_nodejs_eventloop_lag_max_seconds'), 0);
    } finally {
      lag.stop();
    }
  });

  test('a busy loop switches it on, its stall shows, and it goes off when the work stops', async () => {
    const { registry, enables, running, lag } = counted(300);
    try {
      spin(200); // two thirds of the first window busy
      await sleep(150); // past the first check

      assert.equal(running(), true, 'busy window: sampling');
      assert.equal(enables(), 1);
      spin(800); // a stall longer than the sampler's resolution always shows (and keeps the next window busy)
      await sleep(60);
      const max = await gaugeValue(registry, 't_nodejs_eventloop_lag_max_seconds');
      assert.ok(max >= 0.7 && max < 2, `max lag ${max} s after an 800 ms stall`);
      await sleep(200);
      const p50 = await gaugeValue(registry, 't_nodejs_eventloop_lag_p50_seconds');
      assert.ok(p50 < 0.01, `p50 lag ${p50} s of a loop that fires on time: the sampler's own period left out`);
      await sleep(1_000);
      assert.equal(running(), false, 'idle again: the sampler is off');
    } finally {
      lag.stop();
    }
  });
});
