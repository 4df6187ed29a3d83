// The webhook's /metrics, on a port of its own (plain HTTP, --metrics-port): the admission port serves
// the apiserver and the kubelet's probes only, so a NetworkPolicy can admit the metrics scraper to
// this port without letting it POST AdmissionReviews. The figures are counts and durations per kind,
// rule and decision: no object content, no secret.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(
  registry: Pick<Registry, 'metrics' | 'contentType'>,
  opts: { host?: string; port: number },
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: this port serves GET /metrics only');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType }).end(text);
      },
      () => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
