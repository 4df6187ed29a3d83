// The HTTPS listener around the webhook app: TLS ≥ 1.2, timeouts tuned for the apiserver's long-lived
// keep-alive connections, certificate swap without restart, graceful drain on shutdown.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type express from 'express';

export interface TlsPair { cert: string | Buffer; key: string | Buffer }

export interface WebhookServer {
  server: https.Server;
  /** https://host:port of the listener (port resolved when 0 was asked). */
  url: string;
  port: number;
  /** New handshakes use the new pair; established connections keep theirs (Node's setSecureContext). */
  updateCertificate(pair: TlsPair): void;
  /** Stop accepting, let in-flight reviews finish, close idle keep-alive connections. */
  close(): Promise<void>;
}

// The apiserver's Go client keeps idle connections ~90 s; closing them after Node's default 5 s causes
// sporadic EOF / connection-reset webhook failures (kubernetes/kubernetes#127335). Pepr and
// controller-runtime use the same figures.
export const KEEP_ALIVE_TIMEOUT_MS = 90_000;
export const HEADERS_TIMEOUT_MS = 32_000;
export const REQUEST_TIMEOUT_MS = 35_000;

export async function startWebhookServer(app: express.Express, opts: { host?: string; port?: number; tls: TlsPair }): Promise<WebhookServer> {
  const server = https.createServer({ cert: opts.tls.cert, key: opts.tls.key, minVersion: 'TLSv1.2' }, app);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  const host = opts.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8443, host, () => { server.off('error', reject); resolve(); });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    url: `https://${shownHost}:${port}`,
    port,
    updateCertificate(pair) {
      server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' });
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}
