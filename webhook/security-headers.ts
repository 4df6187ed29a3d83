// helmet's response headers, computed once per app. helmet() with its defaults sets the same twelve
// headers on every response (none of its default directives looks at the request), yet runs a chain
// of twelve middlewares per request to do it: ~6% of the webhook's CPU under load (test/bench/webhook.ts
// profile). Here helmet stays the source of the headers: its middleware is run at startup against two
// different recording requests, and if it behaved the same for both — only setHeader/removeHeader,
// synchronous, no error — the recorded calls are replayed per request. Anything else (a helmet
// option whose value depends on the request, such as a CSP nonce function) keeps helmet per request.
// test/webhook/http-app.fast-path.test.ts compares every kind of answer with helmet's own headers.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

type HeaderCall = readonly ['set', string, string | number | readonly string[]] | readonly ['remove', string];

/** The header calls a middleware makes for a request, or undefined if it does anything else. */
function record(middleware: RequestHandler, url: string): HeaderCall[] | undefined {
  const calls: HeaderCall[] = [];
  let unexpected = false;
  let nextCalls = 0;
  const res = new Proxy(
    {},
    {
      get(_target, prop) {
        if (prop === 'setHeader')
          return (name: string, value: string | number | readonly string[]) => {
            calls.push(['set', name, value]);
            return res;
          };
        if (prop === 'removeHeader')
          return (name: string) => {
            calls.push(['remove', name]);
          };
        unexpected = true;
        return undefined;
      },
      set() {
        unexpected = true;
        return true;
      },
    },
  );
  const req = { method: 'GET', url, originalUrl: url, path: url, headers: { host: 'recording.invalid' }, secure: true };
  try {
    void middleware(req as unknown as Request, res as Response, (err?: unknown) => {
      nextCalls++;
      if (err !== undefined) unexpected = true;
    });
  } catch {
    return undefined;
  }
  return unexpected || nextCalls !== 1 ? undefined : calls;
}

function sameCalls(a: HeaderCall[], b: HeaderCall[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export interface SecurityHeaders {
  /** Sets the headers on a response: the replayed calls, or helmet itself when they depend on the request. */
  middleware: RequestHandler;
  /** Sets them outside the middleware chain (responses of routes registered before the middleware). */
  apply(req: Request, res: Response): void;
  /**
   * The same headers as a flat [name, value, ...] list for res.writeHead, when they are the same for
   * every request and helmet only adds headers; undefined otherwise. Handing them to writeHead in one
   * list skips the per-header bookkeeping of setHeader: ~15 µs per admission review (CPU, benchmark machine).
   */
  raw: readonly string[] | undefined;
}

/** helmet's headers for this app, computed once when they do not depend on the request. */
export function securityHeaders(helmetMiddleware: RequestHandler): SecurityHeaders {
  const first = record(helmetMiddleware, '/validate');
  const second = record(helmetMiddleware, '/healthz?probe=1');
  if (!first || !second || !sameCalls(first, second)) {
    return {
      middleware: helmetMiddleware,
      apply: (req, res) => {
        void helmetMiddleware(req, res, () => undefined);
      },
      raw: undefined,
    };
  }
  const calls = first;
  const apply = (_req: Request, res: Response): void => {
    for (const call of calls) {
      if (call[0] === 'set') res.setHeader(call[1], call[2]);
      else res.removeHeader(call[1]);
    }
  };
  // removeHeader calls (helmet's X-Powered-By) remove nothing from a response whose headers are all
  // given to writeHead at once, so the list only needs the headers set, with single string values.
  const setsOnly = calls.every((c) => c[0] === 'remove' || typeof c[2] === 'string');
  const raw = setsOnly ? calls.flatMap((c) => (c[0] === 'set' ? [c[1], c[2] as string] : [])) : undefined;
  return {
    middleware: function securityHeaders(req: Request, res: Response, next: NextFunction): void {
      apply(req, res);
      next();
    },
    apply,
    raw,
  };
}
