// The HTTPS listener around the webhook app: TLS ≥ 1.2, timeouts tuned for the apiserver's long-lived
// keep-alive connections, certificate swap without restart, graceful drain on shutdown.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type express from 'express';
import { admissionFastPath } from './http-app.ts';

export interface TlsPair {
  cert: string | Buffer;
  key: string | Buffer;
}

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

/**
 * Request and response classes whose instances are born with the app's prototypes. Express's
 * app.handle re-parents every request and response (`Object.setPrototypeOf(req, app.request)`, same
 * for res); done on a live object that turns V8's property accesses on both megamorphic for the rest
 * of the request: 70–100 µs of CPU per request on the benchmark machine, more than Node's whole
 * HTTPS + JSON path (test/bench/webhook.ts: 380 → 290 µs per review). Node lets a server choose the
 * classes it instantiates (http.createServer's IncomingMessage/ServerResponse options); with these,
 * express's setPrototypeOf finds the prototype already in place and does nothing. Same objects, same
 * prototype chain as before: express's request/response methods over Node's IncomingMessage/ServerResponse.
 */
export function appMessageClasses(app: express.Express): {
  IncomingMessage?: typeof http.IncomingMessage;
  ServerResponse?: typeof http.ServerResponse;
} {
  // Node's constructors are plain functions (IncomingMessage.call(this, socket) is how Node itself
  // subclasses them). Were they ever classes, keep Node's own classes: express then re-parents as before.
  // (Reflect.construct with a new.target would work for both but makes V8 build each object slowly:
  // it cost more than the re-parenting it saves.)
  const constructors = [http.IncomingMessage, http.ServerResponse];
  if (constructors.some((c) => Function.prototype.toString.call(c).startsWith('class'))) return {};
  function AppRequest(this: http.IncomingMessage, socket: Socket): void {
    Reflect.apply(http.IncomingMessage, this, [socket]);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: http.ServerResponse, req: http.IncomingMessage, options?: unknown): void {
    Reflect.apply(http.ServerResponse, this, [req, options]);
  }
  AppResponse.prototype = app.response;
  return {
    IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof http.ServerResponse,
  };
}

export interface WebhookServerOptions {
  host?: string;
  port?: number;
  tls: TlsPair;
  /**
   * PEM CA bundle for client certificates: the server asks every client for a certificate and verifies
   * it against this CA (the app refuses admission calls without a verified one, see requireClientCert;
   * probes and scrapes connect without one). Without it no certificate is asked for.
   */
  clientCa?: string | Buffer;
}

export async function startWebhookServer(app: express.Express, opts: WebhookServerOptions): Promise<WebhookServer> {
  // rejectUnauthorized: false keeps the handshake open to certificate-less kubelet probes; the socket's
  // `authorized` tells the app whether the certificate verified.
  const clientAuth = opts.clientCa ? { ca: opts.clientCa, requestCert: true, rejectUnauthorized: false } : {};
  // POST /validate and /mutate skip express's router (http-app.ts admissionFastPath); the rest is express.
  const fast = admissionFastPath(app);
  const handler = fast
    ? (req: http.IncomingMessage, res: http.ServerResponse): void => {
        if (!fast(req, res)) app(req, res);
      }
    : app;
  const server = https.createServer(
    { cert: opts.tls.cert, key: opts.tls.key, minVersion: 'TLSv1.2', ...clientAuth, ...appMessageClasses(app) },
    handler,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  const host = opts.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8443, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    url: `https://${shownHost}:${port}`,
    port,
    updateCertificate(pair) {
      server.setSecureContext({
        cert: pair.cert,
        key: pair.key,
        minVersion: 'TLSv1.2',
        ...(opts.clientCa ? { ca: opts.clientCa } : {}),
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}
