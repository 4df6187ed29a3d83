// The HTTP layer of the webhook: parse an AdmissionReview, call the pure core, serialise the answer.
// No decision logic lives here (see webhook/admission/). Every input the caller controls gets a
// well-formed answer: a 400/413 for a body that is not an AdmissionReview, otherwise an
// AdmissionReview carrying the request's uid — never a crash, never a 5xx.
import type { TLSSocket } from 'node:tls';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { Logger } from '../observability/log.ts';
import type { AdmissionContext } from './admission/context.ts';
import { mutate, validate } from './review/review.ts';
import type { AdmissionDecision, AdmissionRequest, AdmissionReview } from './admission/types.ts';
import { jsonBody, MAX_JSON_VALUES } from './json-body.ts';
import type { WebhookMetrics } from './metrics.ts';
import { securityHeaders, type SecurityHeaders } from './security-headers.ts';

/** controller-runtime's limit: old and new object up to 3 MiB each plus envelope (pkg/webhook/admission/http.go). */
export const BODY_LIMIT = '7mb';
/** BODY_LIMIT in bytes, as body-parser's `bytes` reads '7mb'. */
export const BODY_LIMIT_BYTES = 7 * 1024 * 1024;

export type WebhookKind = 'mutate' | 'validate';

export interface WebhookAppOptions {
  /** Current knowledge of the cluster (guardrails, namespaces, policies); read on every request. */
  context: () => AdmissionContext;
  logger: Logger;
  metrics: WebhookMetrics;
  /** Readiness: certificate loaded, caches synced, not shutting down. */
  ready: () => boolean;
  /**
   * Called for every decision (the audit trail subscribes here). When it returns a promise, the answer
   * waits for it: the decision is answered only once recorded. If that promise rejects, the decision is
   * not answered as made: the caller gets a denial saying it could not be recorded (and the apiserver's
   * failurePolicy takes over).
   */
  onDecision?: (webhook: WebhookKind, request: AdmissionRequest, decision: AdmissionDecision, caller: Caller) => void | Promise<unknown>;
  /**
   * Admission calls must come over a TLS connection whose client certificate the server verified
   * (webhook/server.ts with clientCa). Others get 401 before their body is read: not decided, not recorded.
   * /healthz, /readyz and /metrics stay open (kubelet probes and scrapers present no certificate).
   */
  requireClientCert?: boolean;
  /**
   * True while the process drains before exit: each answer then says `Connection: close`, so the
   * apiserver stops reusing its pooled connections to this replica and opens new ones (to a replica that
   * stays) instead of sending a review into a connection the final close() would cut.
   */
  draining?: () => boolean;
}

/** Who sent a review, as TLS saw it (recorded in the audit trail). */
export interface Caller {
  /** A client certificate was required and verified against the configured CA. */
  authenticated: boolean;
  /** TCP peer `ip:port` (`[ip]:port` for IPv6). */
  peer?: string;
  /** CN of the verified client certificate. */
  subject?: string;
}

/** The caller of a request: the peer address always, the certificate subject when verified. */
export function callerOf(req: Request, clientCertRequired: boolean): Caller {
  const sock = req.socket as Partial<TLSSocket>;
  const addr = sock.remoteAddress;
  const peer = addr === undefined ? undefined : `${addr.includes(':') ? `[${addr}]` : addr}:${String(sock.remotePort)}`;
  if (clientCertRequired && sock.authorized === true) {
    const cn = sock.getPeerCertificate?.().subject?.CN;
    return { authenticated: true, ...(peer ? { peer } : {}), ...(typeof cn === 'string' && cn ? { subject: cn } : {}) };
  }
  return { authenticated: false, ...(peer ? { peer } : {}) };
}

/** The answer to a decision that could not be written to the audit trail. */
export const UNRECORDED_MESSAGE = 'vaultgate could not record this decision in its audit trail and does not answer decisions it cannot record (see webhook logs)';

// The synchronous core, called directly: the promise-returning reviewMutation/reviewValidation would
// cost a microtask hop and make express 5 attach a rejection handler to every request.
const reviewers: Record<WebhookKind, typeof mutate> = { mutate, validate };

/** Why a body cannot be answered with an AdmissionReview (no uid to echo), or undefined if it can. */
function malformedReason(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body must be a JSON AdmissionReview object';
  const request = (body as { request?: unknown }).request;
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return 'AdmissionReview.request is missing';
  const uid = (request as { uid?: unknown }).uid;
  if (typeof uid !== 'string' || uid === '') return 'AdmissionReview.request.uid must be a non-empty string';
  return undefined;
}

/** Denial for well-formed envelopes we do not speak (v1beta1, another kind): the caller learns why. */
function envelopeProblem(review: Partial<AdmissionReview> & { apiVersion?: unknown; kind?: unknown }): string | undefined {
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
    return `vaultgate speaks AdmissionReview admission.k8s.io/v1 only; got kind ${JSON.stringify(review.kind)} apiVersion ${JSON.stringify(review.apiVersion)} (set admissionReviewVersions: ["v1"] in the webhook configuration)`;
  }
  const r = review.request as Partial<AdmissionRequest>;
  if (typeof r.operation !== 'string' || typeof r.kind !== 'object' || r.kind === null) {
    return 'AdmissionReview.request needs operation and kind';
  }
  return undefined;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The AdmissionReview answer. res.json() would also compute an ETag (a hash of every body) that no
 * apiserver uses: write directly, with helmet's headers (security.raw) and the content type and length
 * in one writeHead list when they are precomputed.
 */
function reply(req: Request, res: Response, security: SecurityHeaders, response: AdmissionDecision['response'], close: boolean): void {
  const review: AdmissionReview = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
  const body = JSON.stringify(review);
  if (security.raw && !res.headersSent && res.getHeaderNames().length === 0) {
    res.writeHead(200, [...security.raw, 'content-type', JSON_TYPE, 'content-length', String(Buffer.byteLength(body)), ...(close ? ['connection', 'close'] : [])]);
  } else {
    security.apply(req, res);
    res.statusCode = 200;
    res.setHeader('content-type', JSON_TYPE);
    if (close) res.setHeader('connection', 'close');
  }
  res.end(body);
}

export function createWebhookApp(opts: WebhookAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const security = securityHeaders(helmet());

  // The admission routes come first and set helmet's headers themselves (with the answer, or before
  // any other response); every other route gets them from security.middleware, registered after.
  const json = jsonBody({ limit: BODY_LIMIT, limitBytes: BODY_LIMIT_BYTES, maxValues: MAX_JSON_VALUES });
  const clientCert = opts.requireClientCert === true;
  const closing = (): boolean => opts.draining?.() === true;
  for (const webhook of ['validate', 'mutate'] as const) {
    const latencyLabels = { webhook };
    // Before the body is read: an unauthenticated caller costs no parsing, and nothing is recorded.
    const authenticate = (req: Request, res: Response, next: NextFunction): void => {
      if ((req.socket as Partial<TLSSocket>).authorized === true) { next(); return; }
      opts.metrics.requests.inc({ webhook, kind: 'unknown', operation: 'unknown', decision: 'unauthenticated' });
      security.apply(req, res);
      res.setHeader('connection', 'close');
      res.status(401).json({ error: 'a client certificate signed by the configured CA is required (see --client-ca-file)' });
    };
    const handlers = clientCert ? [authenticate, json] : [json];
    app.post(`/${webhook}`, ...handlers, (req: Request, res: Response) => {
      const started = performance.now();
      const body: unknown = req.body;
      const malformed = malformedReason(body);
      if (malformed) {
        opts.metrics.requests.inc({ webhook, kind: 'unknown', operation: 'unknown', decision: 'bad_request' });
        opts.metrics.latency.observe(latencyLabels, (performance.now() - started) / 1000);
        security.apply(req, res);
        res.status(400).json({ error: malformed });
        return;
      }
      const review = body as AdmissionReview & { request: AdmissionRequest };
      const request = review.request;
      const kind = typeof request.kind?.kind === 'string' ? request.kind.kind : 'unknown';
      const operation = typeof request.operation === 'string' ? request.operation : 'unknown';
      const problem = envelopeProblem(review);
      let decision: AdmissionDecision;
      if (problem) {
        decision = { response: { uid: request.uid, allowed: false, status: { code: 400, reason: 'BadRequest', message: problem } }, rules: ['envelope'], patchOps: [] };
      } else {
        try {
          decision = reviewers[webhook](request, opts.context());
        } catch (err) {
          // A bug in a rule must not become a 5xx (the apiserver would apply failurePolicy blindly):
          // deny with a message that says it is ours, and log the detail (no object content).
          opts.logger.error({ err: err instanceof Error ? err.message : String(err), webhook, kind, uid: request.uid }, 'admission review failed');
          decision = { response: { uid: request.uid, allowed: false, status: { code: 500, reason: 'InternalError', message: 'vaultgate could not evaluate this object (internal error, see webhook logs)' } }, rules: ['internal-error'], patchOps: [] };
        }
      }
      decision.response.uid = request.uid;
      const outcome = !decision.response.allowed ? 'denied' : decision.patchOps.length > 0 ? 'mutated' : 'allowed';
      opts.metrics.requests.inc({ webhook, kind, operation, decision: outcome });
      if (!decision.response.allowed) for (const rule of decision.rules) opts.metrics.denials.inc({ webhook, rule });
      opts.metrics.latency.observe(latencyLabels, (performance.now() - started) / 1000);
      const unrecorded = (err: unknown): void => {
        opts.metrics.unrecorded.inc({ webhook });
        opts.logger.error({ err: err instanceof Error ? err.message : String(err), webhook, uid: request.uid }, 'decision could not be recorded: answered as a denial');
        reply(req, res, security, { uid: request.uid, allowed: false, status: { code: 500, reason: 'InternalError', message: UNRECORDED_MESSAGE } }, closing());
      };
      let recorded: void | Promise<unknown>;
      try {
        recorded = opts.onDecision?.(webhook, request, decision, callerOf(req, clientCert));
      } catch (err) {
        unrecorded(err);
        return;
      }
      if (recorded === undefined) reply(req, res, security, decision.response, closing());
      else recorded.then(() => { reply(req, res, security, decision.response, closing()); }, unrecorded);
    });
  }

  app.use(security.middleware);
  app.get('/healthz', (_req, res) => { res.type('text/plain').send('ok'); });
  app.get('/readyz', (_req, res) => {
    const ok = opts.ready();
    res.status(ok ? 200 : 503).type('text/plain').send(ok ? 'ok' : 'not ready');
  });
  app.get('/metrics', async (_req, res) => {
    res.type(opts.metrics.registry.contentType).send(await opts.metrics.registry.metrics());
  });

  // Body parser errors: bad JSON → 400, oversize → 413. Anything else → 400 with a generic message:
  // the input is the caller's, so the answer is a client error, not a 5xx.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (!res.headersSent) security.apply(req, res); // admission-route errors arrive before security.middleware ran
    const e = err as { type?: string; status?: number };
    if (e.type === 'entity.too.large') { res.status(413).json({ error: `AdmissionReview larger than ${BODY_LIMIT}` }); return; }
    if (e.type === 'entity.too.complex') { res.status(413).json({ error: `AdmissionReview with more than ${MAX_JSON_VALUES} JSON values (vaultgate's limit, checked before parsing)` }); return; }
    if (e.type === 'entity.parse.failed') { res.status(400).json({ error: 'body is not valid JSON' }); return; }
    const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 400;
    res.status(status).json({ error: 'request could not be read' });
  });
  return app;
}
