// Kubernetes writes as the real kube-apiserver counts them (apiserver_request_total on its /metrics), by
// resource: what a controller costs the apiserver, measured by the server rather than by the client.
import type { ControlPlane } from '../harness/control-plane.ts';

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE', 'DELETECOLLECTION']);

/** Cumulative write requests per `resource[/subresource]` since the apiserver started. */
export async function apiserverWrites(cp: ControlPlane): Promise<Record<string, number>> {
  const res = await cp.request('GET', '/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  const out: Record<string, number> = {};
  for (const line of res.text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels: Record<string, string> = Object.fromEntries(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    if (!WRITE_VERBS.has(labels.verb ?? '') || labels.dry_run) continue;
    const resource = labels.resource ?? '?';
    const key = labels.subresource ? `${resource}/${labels.subresource}` : resource;
    out[key] = (out[key] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

/** `after - before` per key, zero entries dropped. */
export function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}
