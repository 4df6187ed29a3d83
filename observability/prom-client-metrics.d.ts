// prom-client's default metrics, one module each (lib/metrics/*.js, CommonJS, no types of their own): each
// registers its metrics on a registry. process-metrics.ts takes all but the event-loop lag.
declare module 'prom-client/lib/metrics/*' {
  import type { Registry } from 'prom-client';
  const register: (registry: Registry, config: { prefix?: string }) => void;
  export default register;
}
