import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import { securityHeaders } from '../../webhook/security-headers.ts';

async function headersOf(mw: RequestHandler): Promise<Record<string, string>> {
  const app = express();
  app.use(mw);
  app.get('/x', (_req, res) => res.send('ok'));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
    const out: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      if (k !== 'date' && k !== 'etag' && k !== 'content-length' && k !== 'keep-alive' && k !== 'connection')
        out[k] = v;
    });
    return out;
  } finally {
    server.close();
  }
}

test("helmet's headers computed once are the headers helmet itself sets", async () => {
  const s = securityHeaders(helmet());
  assert.ok(s.raw && s.raw.length > 0, 'helmet with no request-dependent header: a flat list for writeHead');
  assert.deepEqual(await headersOf(s.middleware), await headersOf(helmet()));
  const names = s.raw.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
  assert.ok(names.includes('strict-transport-security'));
});

test('headers that depend on the request are left to the middleware itself, every time', () => {
  const byPath: RequestHandler = (req, res, next) => {
    res.setHeader('x-path', req.url);
    next();
  };
  const s = securityHeaders(byPath);
  assert.equal(s.raw, undefined);
  assert.equal(s.middleware, byPath);
});
