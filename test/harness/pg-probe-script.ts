// pg-probe.ts and pg-wire.ts bundled into one ES module for Node 20 (probe-bundle.ts): a pod of the
// vaultgate image runs it from a ConfigMap, so no image is built for the client.
import { bundleProbe } from './probe-bundle.ts';

export const PG_PROBE_FILE = 'pg-probe.mjs';

export function pgProbeScript(): Promise<string> {
  return bundleProbe('pg-probe.ts', 'pgProbeMain');
}
