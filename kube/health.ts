// /healthz, /readyz and /metrics over plain HTTP (probes and scrapes come from inside the cluster).
// Liveness is "the process serves"; readiness is "every informer has synced" (a standby is ready too:
// its cache is warm and it can take over; the body says who leads).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { ManagerStatus } from './manager.ts';

export interface HealthServerOptions {
  port?: number;
  host?: string;
  registry: Registry;
  status: () => ManagerStatus;
  /** Extra readiness checks (e.g. "Vault reachable"): name → ok. */
  readyChecks?: Record<string, () => boolean | Promise<boolean>>;
}

export interface HealthServer {
  server: http.Server;
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    handle(req.url ?? '/', opts).then(
      ({ code, type, body }) => {
        res.writeHead(code, { 'content-type': type, 'cache-control': 'no-store' });
        res.end(body);
      },
      () => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('internal error\n');
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve);
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(url: string, opts: HealthServerOptions): Promise<{ code: number; type: string; body: string }> {
  const path = url.split('?')[0];
  if (path === '/healthz' || path === '/livez') return { code: 200, type: 'text/plain', body: 'ok\n' };
  if (path === '/readyz') {
    const status = opts.status();
    const checks: Record<string, boolean> = { informersSynced: status.synced };
    for (const [name, check] of Object.entries(opts.readyChecks ?? {})) {
      try {
        checks[name] = await check();
      } catch {
        checks[name] = false;
      }
    }
    const ready = Object.values(checks).every(Boolean);
    return {
      code: ready ? 200 : 503,
      type: 'application/json',
      body: `${JSON.stringify({ ready, leader: status.leader, checks, informers: status.informers })}\n`,
    };
  }
  if (path === '/metrics') return { code: 200, type: opts.registry.contentType, body: await opts.registry.metrics() };
  return { code: 404, type: 'text/plain', body: 'not found\n' };
}
