// The HTTP layer of the webhook: parse an AdmissionReview, call the pure core, serialise the answer.
// No decision logic lives here (see webhook/admission/). Every input the caller controls gets a
// well-formed answer: a 400/413 for a body that is not an AdmissionReview, otherwise an
// AdmissionReview carrying the request's uid — never a crash, never a 5xx.
import type http from 'node:http';
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
  onDecision?: (
    webhook: WebhookKind,
    request: AdmissionRequest,
    decision: AdmissionDecision,
    caller: Caller,
  ) => void | Promise<unknown>;
  /**
   * Admission calls must come over a TLS connection whose client certificate the server verified
   * (webhook/server.ts with clientCa) and whose subject CN is one of `clientSubjects`. Others get 401
   * before their body is read: not decided, not recorded. /healthz and /readyz stay open (kubelet
   * probes present no certificate). /metrics is not served here: see webhook/metrics-server.ts.
   */
  requireClientCert?: boolean;
  /** The accepted client certificate subjects (CN) when requireClientCert: DEFAULT_CLIENT_SUBJECTS unless given. */
  clientSubjects?: readonly string[];
  /**
   * True while the process drains before exit: each answer then says `Connection: close`, so the
   * apiserver stops reusing its pooled connections to this replica and opens new ones (to a replica that
   * stays) instead of sending a review into a connection the final close() would cut.
   */
  draining?: () => boolean;
}

/**
 * The subject (CN) the webhook accepts from a client certificate when none is configured: the name this
 * project's docs and tests give the apiserver's webhook client certificate (README, "Webhook client
 * authentication"). Kubernetes sets no standard one; set --client-subject to the CN you issue.
 */
export const DEFAULT_CLIENT_SUBJECTS: readonly string[] = ['kube-apiserver-webhook-client'];

/** Who sent a review, as TLS saw it (recorded in the audit trail). */
export interface Caller {
  /** A client certificate was required, verified against the configured CA, and its subject is a pinned one. */
  authenticated: boolean;
  /** TCP peer `ip:port` (`[ip]:port` for IPv6). */
  peer?: string;
  /** CN of the verified client certificate. */
  subject?: string;
  /**
   * What vouches for the caller, in words, when something does: `verified client certificate CN=<cn>
   * (pinned subject)`. Absent: nothing does, and the record's user is only what the body claimed.
   */
  vouchedBy?: string;
}

/** The CN of the socket's verified client certificate, if any. */
function verifiedSubject(sock: Partial<TLSSocket>): string | undefined {
  if (sock.authorized !== true) return undefined;
  const cn = sock.getPeerCertificate?.().subject?.CN;
  return typeof cn === 'string' && cn ? cn : undefined;
}

/** The caller of a request: the peer address always, the certificate subject when verified and pinned. */
export function callerOf(
  req: Request,
  clientCertRequired: boolean,
  subjects: readonly string[] = DEFAULT_CLIENT_SUBJECTS,
): Caller {
  const sock = req.socket as Partial<TLSSocket>;
  const addr = sock.remoteAddress;
  const peer = addr === undefined ? undefined : `${addr.includes(':') ? `[${addr}]` : addr}:${String(sock.remotePort)}`;
  const cn = clientCertRequired ? verifiedSubject(sock) : undefined;
  if (cn !== undefined && subjects.includes(cn)) {
    return {
      authenticated: true,
      ...(peer ? { peer } : {}),
      subject: cn,
      vouchedBy: `verified client certificate CN=${cn} (pinned subject)`,
    };
  }
  return { authenticated: false, ...(peer ? { peer } : {}) };
}

/** The answer to a decision that could not be written to the audit trail. */
export const UNRECORDED_MESSAGE =
  'vaultgate could not record this decision in its audit trail and does not answer decisions it cannot record (see webhook logs)';

// The synchronous core, called directly: the promise-returning reviewMutation/reviewValidation would
// cost a microtask hop and make express 5 attach a rejection handler to every request.
const reviewers: Record<WebhookKind, typeof mutate> = { mutate, validate };

/** Why a body cannot be answered with an AdmissionReview (no uid to echo), or undefined if it can. */
function malformedReason(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'body must be a JSON AdmissionReview object';
  const request = (body as { request?: unknown }).request;
  if (typeof request !== 'object' || request === null || Array.isArray(request))
    return 'AdmissionReview.request is missing';
  const r = request as { uid?: unknown; kind?: unknown; operation?: unknown; userInfo?: unknown };
  if (typeof r.uid !== 'string' || r.uid === '') return 'AdmissionReview.request.uid must be a non-empty string';
  // What the core and the audit record read: without them there is no decision to make or record.
  const kind = r.kind as { group?: unknown; version?: unknown; kind?: unknown } | null | undefined;
  if (
    typeof kind !== 'object' ||
    kind === null ||
    Array.isArray(kind) ||
    typeof kind.group !== 'string' ||
    typeof kind.version !== 'string' ||
    typeof kind.kind !== 'string' ||
    kind.kind === ''
  ) {
    return 'AdmissionReview.request.kind must be an object with string group, version and kind (e.g. {"group":"vaultgate.io","version":"v1alpha1","kind":"VaultPolicy"})';
  }
  if (typeof r.operation !== 'string' || r.operation === '')
    return 'AdmissionReview.request.operation must be a non-empty string (CREATE, UPDATE, DELETE or CONNECT)';
  if (typeof r.userInfo !== 'object' || r.userInfo === null || Array.isArray(r.userInfo))
    return 'AdmissionReview.request.userInfo must be an object';
  return undefined;
}

/** Denial for well-formed envelopes we do not speak (v1beta1, another kind): the caller learns why. */
function envelopeProblem(
  review: Partial<AdmissionReview> & { apiVersion?: unknown; kind?: unknown },
): string | undefined {
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
    return `vaultgate speaks AdmissionReview admission.k8s.io/v1 only; got kind ${JSON.stringify(review.kind)} apiVersion ${JSON.stringify(review.apiVersion)} (set admissionReviewVersions: ["v1"] in the webhook configuration)`;
  }
  return undefined;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The AdmissionReview answer. res.json() would also compute an ETag (a hash of every body) that no
 * apiserver uses: write directly, with helmet's headers (security.raw) and the content type and length
 * in one writeHead list when they are precomputed.
 */
function reply(
  req: Request,
  res: Response,
  security: SecurityHeaders,
  response: AdmissionDecision['response'],
  close: boolean,
): void {
  const review: AdmissionReview = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
  const body = JSON.stringify(review);
  if (security.raw && !res.headersSent && res.getHeaderNames().length === 0) {
    res.writeHead(200, [
      ...security.raw,
      'content-type',
      JSON_TYPE,
      'content-length',
      String(Buffer.byteLength(body)),
      ...(close ? ['connection', 'close'] : []),
    ]);
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
  const subjects = opts.clientSubjects?.length ? opts.clientSubjects : DEFAULT_CLIENT_SUBJECTS;
  const closing = (): boolean => opts.draining?.() === true;
  const fastRoutes = new Map<string, Handler[]>();
  for (const webhook of ['validate', 'mutate'] as const) {
    const latencyLabels = { webhook };
    // Before the body is read: an unauthenticated caller costs no parsing, and nothing is recorded.
    const authenticate = (req: Request, res: Response, next: NextFunction): void => {
      const sock = req.socket as Partial<TLSSocket>;
      const cn = verifiedSubject(sock);
      if (cn !== undefined && subjects.includes(cn)) {
        next();
        return;
      }
      opts.metrics.requests.inc({ webhook, kind: 'unknown', operation: 'unknown', decision: 'unauthenticated' });
      security.apply(req, res);
      res.setHeader('connection', 'close');
      res.status(401).json({
        error:
          sock.authorized === true
            ? `the client certificate's subject is not one this webhook accepts (accepted: ${subjects.map((x) => `CN=${x}`).join(', ')}; see --client-subject)`
            : 'a client certificate signed by the configured CA is required (see --client-ca-file)',
      });
    };
    const answer = (req: Request, res: Response): void => {
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
        decision = {
          response: { uid: request.uid, allowed: false, status: { code: 400, reason: 'BadRequest', message: problem } },
          rules: ['envelope'],
          patchOps: [],
        };
      } else {
        try {
          decision = reviewers[webhook](request, opts.context());
        } catch (err) {
          // A bug in a rule must not become a 5xx (the apiserver would apply failurePolicy blindly):
          // deny with a message that says it is ours, and log the detail (no object content).
          opts.logger.error(
            { err: err instanceof Error ? err.message : String(err), webhook, kind, uid: request.uid },
            'admission review failed',
          );
          decision = {
            response: {
              uid: request.uid,
              allowed: false,
              status: {
                code: 500,
                reason: 'InternalError',
                message: 'vaultgate could not evaluate this object (internal error, see webhook logs)',
              },
            },
            rules: ['internal-error'],
            patchOps: [],
          };
        }
      }
      decision.response.uid = request.uid;
      const outcome = !decision.response.allowed ? 'denied' : decision.patchOps.length > 0 ? 'mutated' : 'allowed';
      opts.metrics.requests.inc({ webhook, kind, operation, decision: outcome });
      if (!decision.response.allowed) for (const rule of decision.rules) opts.metrics.denials.inc({ webhook, rule });
      opts.metrics.latency.observe(latencyLabels, (performance.now() - started) / 1000);
      const unrecorded = (err: unknown): void => {
        opts.metrics.unrecorded.inc({ webhook });
        opts.logger.error(
          { err: err instanceof Error ? err.message : String(err), webhook, uid: request.uid },
          'decision could not be recorded: answered as a denial',
        );
        reply(
          req,
          res,
          security,
          {
            uid: request.uid,
            allowed: false,
            status: { code: 500, reason: 'InternalError', message: UNRECORDED_MESSAGE },
          },
          closing(),
        );
      };
      let recorded: void | Promise<unknown>;
      try {
        recorded = opts.onDecision?.(webhook, request, decision, callerOf(req, clientCert, subjects));
      } catch (err) {
        unrecorded(err);
        return;
      }
      if (recorded === undefined) reply(req, res, security, decision.response, closing());
      else
        recorded.then(() => {
          reply(req, res, security, decision.response, closing());
        }, unrecorded);
    };
    const handlers = clientCert ? [authenticate, json] : [json];
    app.post(`/${webhook}`, ...handlers, answer);
    fastRoutes.set(`/${webhook}`, [...handlers, answer]);
  }

  app.use(security.middleware);
  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req, res) => {
    const ok = opts.ready();
    res
      .status(ok ? 200 : 503)
      .type('text/plain')
      .send(ok ? 'ok' : 'not ready');
  });

  // Body parser errors: bad JSON → 400, oversize → 413. Anything else → 400 with a generic message:
  // the input is the caller's, so the answer is a client error, not a 5xx.
  const answerError = (err: unknown, req: Request, res: Response): void => {
    if (!res.headersSent) security.apply(req, res); // admission-route errors arrive before security.middleware ran
    const e = err as { type?: string; status?: number };
    if (e.type === 'entity.too.large') {
      res.status(413).json({ error: `AdmissionReview larger than ${BODY_LIMIT}` });
      return;
    }
    if (e.type === 'entity.too.complex') {
      res.status(413).json({
        error: `AdmissionReview with more than ${MAX_JSON_VALUES} JSON values (vaultgate's limit, checked before parsing)`,
      });
      return;
    }
    if (e.type === 'entity.parse.failed') {
      res.status(400).json({ error: 'body is not valid JSON' });
      return;
    }
    const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 400;
    res.status(status).json({ error: 'request could not be read' });
  };
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    answerError(err, req, res);
  });
  fastPaths.set(app, (req, res) => {
    const chain = req.method === 'POST' && req.url !== undefined ? fastRoutes.get(req.url) : undefined;
    // Only requests born with the app's prototypes (server.ts appMessageClasses): express would re-parent others.
    if (chain === undefined || Object.getPrototypeOf(req) !== app.request) return false;
    runChain(chain, req as Request, res as Response, answerError);
    return true;
  });
  return app;
}

type Handler = (req: Request, res: Response, next: NextFunction) => void;

/** The route's handlers in turn, as express's router runs them: an error (passed or thrown) goes to `onError`. */
function runChain(
  chain: readonly Handler[],
  req: Request,
  res: Response,
  onError: (err: unknown, req: Request, res: Response) => void,
): void {
  // What express's app.handle sets before routing, and the handlers' answers (res.json) read.
  req.res = res;
  res.req = req;
  let i = 0;
  const next = (err?: unknown): void => {
    if (err) {
      onError(err, req, res);
      return;
    }
    const handler = chain[i++];
    if (handler === undefined) return;
    try {
      handler(req, res, next);
    } catch (thrown) {
      onError(thrown, req, res);
    }
  };
  next();
}

/**
 * The admission routes (POST /validate and /mutate, exact path) answered without express's router:
 * app.handle, the router's layer matching, parameter processing and `next` bookkeeping cost more per
 * review than the route's own handlers (profile of the peer bench's admission row). Same handlers, same
 * error answers, same headers; any other request (another method, a query string, a trailing slash, a
 * request not created by server.ts's classes) returns false and goes to express as before.
 * server.ts calls it before the app; test/webhook/http-app.fast-path.test.ts compares both answers.
 */
export function admissionFastPath(
  app: express.Express,
): ((req: http.IncomingMessage, res: http.ServerResponse) => boolean) | undefined {
  return fastPaths.get(app);
}

const fastPaths = new WeakMap<express.Express, (req: http.IncomingMessage, res: http.ServerResponse) => boolean>();
