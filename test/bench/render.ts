// Template rendering cost (issue #20): the controller renders tenant templates in a pool of worker
// threads (controller/reconcilers/render-pool.ts) instead of on its event loop. What that costs per
// render against rendering in process, for three templates: trivial (one key), typical (five keys with
// Sprig functions and a templateFrom ConfigMap) and a KeysAndValues YAML of 20 keys. Sequential renders
// give the latency (one reconcile waiting for its render); 64 in flight over 8 namespaces give the
// throughput with the default pool (2 workers, one render per namespace at a time). Also: how long a
// worker takes to start, and the longest event-loop stall during the pool runs (the point of the pool).
// Runs from source (tsx in the workers too): the production bundle's workers start faster.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ExternalSecretTarget } from '../../schemas/types.ts';
import { inProcessRenderer, RenderPool, type SecretRenderer } from '../../controller/reconcilers/render-pool.ts';
import type { TemplateSources } from '../../eso/target-template.ts';

const data = new Map(
  Object.entries({
    user: 'app',
    password: 's3cr3t-Qm38vR',
    host: 'db.internal',
    port: '5432',
    ca: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  }).map(([k, v]) => [k, Buffer.from(v)]),
);
const sources: TemplateSources = {
  configMap: (n) =>
    n === 'tpl'
      ? { data: new Map([['extra', Buffer.from('{{ .user | upper }}-{{ .host | trimSuffix ".internal" }}')]]) }
      : undefined,
  secret: () => undefined,
};

const TEMPLATES: Record<string, ExternalSecretTarget> = {
  trivial: { template: { data: { password: '{{ .password }}' } } },
  typical: {
    template: {
      data: {
        dsn: 'postgres://{{ .user }}:{{ .password | urlquery }}@{{ .host }}:{{ .port }}/app',
        b64: '{{ .password | b64enc }}',
        upper: '{{ .user | upper }}',
        json: '{{ dict "u" .user "p" .password | toJson }}',
        ca: '{{ .ca | trim }}',
      },
      templateFrom: [{ configMap: { name: 'tpl', items: [{ key: 'extra' }] } }],
    },
  },
  keysAndValues20: {
    template: {
      templateFrom: [
        {
          literal: Array.from(
            { length: 20 },
            (_, i) => `k${i}: "{{ .user }}-${i}-{{ .password | sha256sum | trunc 8 }}"`,
          ).join('\n'),
        },
      ],
    },
  },
};

async function perRender(r: SecretRenderer, target: ExternalSecretTarget, n: number): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await r.desiredSecret('bench', target, data, {}, sources);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await r.desiredSecret('bench', target, data, {}, sources);
  return ((performance.now() - t0) / n) * 1000;
}

async function concurrent(
  r: SecretRenderer,
  target: ExternalSecretTarget,
  total: number,
  inFlight: number,
): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async (_, lane) => {
      while (next < total) {
        next++;
        await r.desiredSecret(`ns-${lane % 8}`, target, data, {}, sources);
      }
    }),
  );
  return ((performance.now() - t0) / total) * 1000;
}

export async function benchRender(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const inProc = inProcessRenderer();
  const t0 = performance.now();
  const pool = new RenderPool();
  await pool.ready();
  out.worker_start_ms = Math.round(performance.now() - t0);
  // A fresh monitor per window: a re-enabled one counts the time it was off as one delay.
  let stallMaxMs = 0;
  let stallP99Ms = 0;
  try {
    for (const [name, target] of Object.entries(TEMPLATES)) {
      const a = await perRender(inProc, target, 2000);
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      const b = await perRender(pool, target, 2000);
      const c = await concurrent(pool, target, 4000, 64);
      delay.disable();
      stallMaxMs = Math.max(stallMaxMs, delay.max / 1e6);
      stallP99Ms = Math.max(stallP99Ms, delay.percentile(99) / 1e6);
      out[`${name}_in_process_us`] = a.toFixed(1);
      out[`${name}_pool_sequential_us`] = b.toFixed(1);
      out[`${name}_pool_round_trip_extra_us`] = (b - a).toFixed(1);
      out[`${name}_pool_64_in_flight_us_per_render`] = c.toFixed(1);
    }
    out.no_template_pool_us = (await perRender(pool, {}, 5000)).toFixed(2);
    out.event_loop_delay_p99_ms_during_pool_runs = stallP99Ms.toFixed(1);
    out.event_loop_delay_max_ms_during_pool_runs = stallMaxMs.toFixed(1);
  } finally {
    await pool.close();
  }
  return out;
}
