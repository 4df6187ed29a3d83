// helmet's response headers, computed once per app. helmet() with its defaults sets the same twelve
// headers on every response (none of its default directives looks at the request), yet runs a chain
// of twelve middlewares per request to do it: ~6% of the webhook's CPU under load (test/bench/webhook.ts
// profile). Here helmet stays the source of the headers: its middleware is run at startup against two
// different recording requests, and if it behaved the same for both — only setHeader/removeHeader,
// synchronous, no error — the recorded calls are replayed per request. Anything else (a helmet
// option whose value depends on the request, such as a CSP nonce function) keeps helmet per request.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

type HeaderCall = readonly ['set', string, string | number | readonly string[]] | readonly ['remove', string];

/** The header calls a middleware makes for a request, or undefined if it does anything else. */
function record(middleware: RequestHandler, url: string): HeaderCall[] | undefined {
  const calls: HeaderCall[] = [];
  let unexpected = false;
  let nextCalls = 0;
  const res = new Proxy({}, {
    get(_target, prop) {
      if (prop === 'setHeader') return (name: string, value: string | number | readonly string[]) => { calls.push(['set', name, value]); return res; };
      if (prop === 'removeHeader') return (name: string) => { calls.push(['remove', name]); };
      unexpected = true;
      return undefined;
    },
    set() { unexpected = true; return true; },
  });
  const req = { method: 'GET', url, originalUrl: url, path: url, headers: { host: 'recording.invalid' }, secure: true };
  try {
    void middleware(req as unknown as Request, res as Response, (err?: unknown) => { nextCalls++; if (err !== undefined) unexpected = true; });
  } catch {
    return undefined;
  }
  return unexpected || nextCalls !== 1 ? undefined : calls;
}

function sameCalls(a: HeaderCall[], b: HeaderCall[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A middleware that applies what `middleware` (helmet) sets, computed once when it is request-independent. */
export function precomputedHeaders(middleware: RequestHandler): RequestHandler {
  const first = record(middleware, '/validate');
  const second = record(middleware, '/healthz?probe=1');
  if (!first || !second || !sameCalls(first, second)) return middleware;
  const calls = first;
  return function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
    for (const call of calls) {
      if (call[0] === 'set') res.setHeader(call[1], call[2]);
      else res.removeHeader(call[1]);
    }
    next();
  };
}
