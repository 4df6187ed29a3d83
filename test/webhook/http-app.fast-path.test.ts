// The webhook's HTTP fast path answers exactly as the generic pieces it stands in for: the lean JSON
// body reader as express.json(), the precomputed security headers as helmet() itself, and the
// server's request/response classes carry the express app's prototypes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { jsonBody } from '../../webhook/json-body.ts';
import { securityHeaders } from '../../webhook/security-headers.ts';
import { createWebhookApp } from '../../webhook/http-app.ts';
import { createWebhookMetrics } from '../../webhook/metrics.ts';
import { startWebhookServer, type WebhookServer } from '../../webhook/server.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import { silentLogger } from '../../observability/log.ts';
import { selfSignedTls, type TestTls } from '../support/tls.ts';

/** An app that echoes what a body parser made of the request, or the error it raised. */
function echoApp(parser: RequestHandler): express.Express {
  const app = express();
  app.post('/', parser, (req: Request, res: Response) => {
    res.json({ body: req.body === undefined ? '<undefined>' : (req.body as unknown) });
  });
  app.use((err: { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    res.status(err.status ?? 500).json({ status: err.status, type: err.type });
  });
  return app;
}

async function listen(app: express.Express): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A raw HTTP/1.1 request (headers exactly as given), answered as `status body`; the connection is closed after. */
function raw(port: number, head: string, body: Buffer | string = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => {
      data += c;
    });
    socket.on('error', reject);
    socket.on('end', () => {
      const [statusLine = '', ...rest] = data.split('\r\n');
      const bodyText = rest.slice(rest.indexOf('') + 1).join('\r\n');
      resolve(`${statusLine.split(' ')[1] ?? '?'} ${bodyText}`);
    });
    socket.write(`POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${head}\r\n`);
    socket.end(body);
  });
}

const LIMIT = 1024;
const json = 'application/json';
const cases: Array<{ name: string; head: string; body?: Buffer | string }> = [
  { name: 'an object', head: `Content-Type: ${json}\r\nContent-Length: 7\r\n`, body: '{"a":1}' },
  { name: 'an empty body', head: `Content-Type: ${json}\r\nContent-Length: 0\r\n` },
  { name: 'no body at all', head: `Content-Type: ${json}\r\n` },
  { name: 'no content type', head: 'Content-Length: 7\r\n', body: '{"a":1}' },
  {
    name: 'a BOM before the JSON',
    head: `Content-Type: ${json}\r\nContent-Length: 10\r\n`,
    body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]),
  },
  { name: 'whitespace before an array', head: `Content-Type: ${json}\r\nContent-Length: 8\r\n`, body: ' \n\t[1,2]' },
  {
    name: 'a JSON string (strict mode refuses it)',
    head: `Content-Type: ${json}\r\nContent-Length: 5\r\n`,
    body: '"str"',
  },
  { name: 'null (strict mode refuses it)', head: `Content-Type: ${json}\r\nContent-Length: 4\r\n`, body: 'null' },
  { name: 'broken JSON', head: `Content-Type: ${json}\r\nContent-Length: 4\r\n`, body: '{bad' },
  { name: 'whitespace only', head: `Content-Type: ${json}\r\nContent-Length: 3\r\n`, body: '  \n' },
  { name: 'text/plain carrying JSON', head: 'Content-Type: text/plain\r\nContent-Length: 7\r\n', body: '{"a":1}' },
  {
    name: 'an explicit UTF-8 charset',
    head: `Content-Type: ${json}; charset=UTF-8\r\nContent-Length: 7\r\n`,
    body: '{"a":1}',
  },
  {
    name: 'a UTF-16 charset',
    head: `Content-Type: ${json}; charset=utf-16le\r\nContent-Length: 14\r\n`,
    body: Buffer.from('{"a":1}', 'utf16le'),
  },
  { name: 'a latin1 charset', head: `Content-Type: ${json}; charset=latin1\r\nContent-Length: 7\r\n`, body: '{"a":1}' },
  {
    name: 'a gzip body',
    head: `Content-Type: ${json}\r\nContent-Encoding: gzip\r\nContent-Length: ${gzipSync('{"z":true}').length}\r\n`,
    body: gzipSync('{"z":true}'),
  },
  {
    name: 'an unknown content encoding',
    head: `Content-Type: ${json}\r\nContent-Encoding: compress\r\nContent-Length: 7\r\n`,
    body: '{"a":1}',
  },
  {
    name: 'invalid UTF-8 inside a string',
    head: `Content-Type: ${json}\r\nContent-Length: 10\r\n`,
    body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xc3, 0x22, 0x7d]),
  },
  {
    name: 'a declared length over the limit',
    head: `Content-Type: ${json}\r\nContent-Length: ${LIMIT + 10}\r\n`,
    body: `{"a":"${'x'.repeat(LIMIT)}"}`,
  },
  {
    name: 'a chunked body over the limit',
    head: `Content-Type: ${json}\r\nTransfer-Encoding: chunked\r\n`,
    body: `${(LIMIT + 10).toString(16)}\r\n{"a":"${'x'.repeat(LIMIT)}"}\r\n0\r\n\r\n`,
  },
  {
    name: 'a small chunked body',
    head: `Content-Type: ${json}\r\nTransfer-Encoding: chunked\r\n`,
    body: '7\r\n{"a":1}\r\n0\r\n\r\n',
  },
  {
    name: 'a body exactly at the limit',
    head: `Content-Type: ${json}\r\nContent-Length: ${LIMIT}\r\n`,
    body: `{"a":"${'x'.repeat(LIMIT - 8)}"}`,
  },
];

void describe('lean JSON body reader', () => {
  let ref: { server: http.Server; port: number };
  let lean: { server: http.Server; port: number };
  before(async () => {
    ref = await listen(echoApp(express.json({ limit: LIMIT, type: () => true })));
    lean = await listen(echoApp(jsonBody({ limit: '1kb', limitBytes: LIMIT })));
  });
  after(() => {
    ref.server.close();
    lean.server.close();
  });

  for (const c of cases) {
    void test(`answers ${c.name} as express.json() does`, async () => {
      const [want, got] = await Promise.all([raw(ref.port, c.head, c.body), raw(lean.port, c.head, c.body)]);
      assert.equal(got, want);
    });
  }
});

void describe('precomputed security headers', () => {
  void test('stand in for helmet() with its defaults, and not for a helmet whose headers depend on the request', () => {
    const defaults = helmet();
    const cached = securityHeaders(defaults);
    assert.notEqual(cached.middleware, defaults);
    assert.ok(cached.raw?.includes('Strict-Transport-Security'));
    const withNonce = helmet({
      contentSecurityPolicy: {
        directives: { scriptSrc: ["'self'", (_req, res) => `'nonce-${String((res as Response).locals.nonce)}'`] },
      },
    });
    const perRequest = securityHeaders(withNonce);
    assert.equal(perRequest.middleware, withNonce);
    assert.equal(perRequest.raw, undefined);
  });
});

void describe('webhook app over HTTPS', () => {
  let tls: TestTls;
  let srv: WebhookServer;
  let helmetOnly: { server: http.Server; port: number };
  const agent = new https.Agent({ keepAlive: true });
  before(async () => {
    tls = await selfSignedTls();
    const app = createWebhookApp({
      context: () => defaultContext(),
      logger: silentLogger,
      metrics: createWebhookMetrics(undefined, { defaultMetrics: false }),
      ready: () => true,
    });
    app.get('/prototypes', (req, res) => {
      res.json({
        request: Object.getPrototypeOf(req) === app.request,
        response: Object.getPrototypeOf(res) === app.response,
      });
    });
    srv = await startWebhookServer(app, { host: '127.0.0.1', port: 0, tls });
    const plain = express();
    plain.use(helmet());
    plain.get('/', (_req, res) => {
      res.send('ok');
    });
    helmetOnly = await listen(plain);
  });
  after(async () => {
    agent.destroy();
    helmetOnly.server.close();
    await srv.close();
  });

  function request(
    path: string,
    method = 'GET',
    body?: string,
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        srv.url + path,
        { method, ca: tls.ca, agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  void test("every answer carries helmet's headers, as helmet() itself sets them", async () => {
    const wanted = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${helmetOnly.port}/`, (res) => {
          res.resume();
          resolve(res.headers);
        })
        .on('error', reject);
    });
    const helmetHeaders = Object.entries(wanted).filter(
      ([k]) => !['date', 'connection', 'keep-alive', 'content-length', 'content-type', 'etag'].includes(k),
    );
    assert.ok(helmetHeaders.length >= 10);
    const review = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'u1',
        operation: 'DELETE',
        userInfo: {},
        kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
      },
    });
    const answers = await Promise.all([
      request('/validate', 'POST', review),
      request('/mutate', 'POST', review),
      request('/validate', 'POST', '{bad'),
      request('/validate', 'POST', '[]'),
      request('/validate', 'GET'),
      request('/nowhere'),
      request('/healthz'),
      request('/metrics'),
      request('/validate', 'POST', `{"pad":"${'x'.repeat(7.5 * 1024 * 1024)}"}`),
    ]);
    // /metrics is not served on the admission port (webhook/metrics-server.ts): a 404 like any other path
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 400, 400, 404, 404, 200, 404, 413],
    );
    for (const a of answers) {
      for (const [k, v] of helmetHeaders) {
        // express's 404 page (finalhandler) replaces the policy with its own, with helmet() too.
        const want = a.status === 404 && k === 'content-security-policy' ? "default-src 'none'" : v;
        assert.equal(a.headers[k], want, `${k} on a ${a.status} answer`);
      }
      assert.equal(a.headers['x-powered-by'], undefined);
    }
  });

  void test("requests and responses are created with the express app's prototypes", async () => {
    const r = await request('/prototypes');
    assert.deepEqual(JSON.parse(r.text), { request: true, response: true });
  });
});

void describe("admission routes answered without express's router", () => {
  let tls: TestTls;
  let srv: WebhookServer;
  const viaExpress: string[] = [];
  before(async () => {
    tls = await selfSignedTls();
    const app = createWebhookApp({
      context: () => defaultContext(),
      logger: silentLogger,
      metrics: createWebhookMetrics(undefined, { defaultMetrics: false }),
      ready: () => true,
    });
    // express's app(req, res) is app.handle(req, res, next): what reaches it went through the router.
    const withHandle = app as unknown as { handle: (req: http.IncomingMessage, ...rest: unknown[]) => void };
    const handle = withHandle.handle.bind(app);
    withHandle.handle = (req, ...rest) => {
      viaExpress.push(req.url ?? '');
      handle(req, ...rest);
    };
    srv = await startWebhookServer(app, { host: '127.0.0.1', port: 0, tls });
  });
  after(async () => {
    await srv.close();
  });

  /** The whole answer (status line, headers but Date, body) to a raw request over TLS. */
  function rawTls(path: string, head: string, body: Buffer | string = ''): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: srv.port, ca: tls.ca });
      let data = '';
      socket.setEncoding('latin1');
      socket.on('data', (c: string) => {
        data += c;
      });
      socket.on('error', reject);
      socket.on('end', () => {
        resolve(data.replace(/\r\nDate: [^\r]*/i, ''));
      });
      // Not socket.end(): a TLS close_notify before an asynchronous answer (a gzip body) would cut it.
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${head}\r\n`);
      socket.write(body);
    });
  }

  const review = (request: Record<string, unknown>): string =>
    JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
  const policy = { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' };
  const reviews: Array<{ name: string; body: string }> = [
    { name: 'a review allowed', body: review({ uid: 'u1', operation: 'DELETE', userInfo: {}, kind: policy }) },
    {
      name: 'a review denied',
      body: review({
        uid: 'u2',
        operation: 'CREATE',
        userInfo: {},
        kind: policy,
        object: { apiVersion: 'vaultgate.io/v1alpha1', kind: 'VaultPolicy', metadata: { name: 'p' }, spec: 7 },
      }),
    },
    { name: 'a review without a uid', body: review({ operation: 'CREATE', userInfo: {}, kind: policy }) },
    {
      name: 'another envelope version',
      body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'u3' } }),
    },
    { name: 'too many JSON values', body: `[${'0,'.repeat(60_000)}0]` },
    { name: 'a body over 7 MiB', body: `{"pad":"${'x'.repeat(7.5 * 1024 * 1024)}"}` },
  ];
  const all = [
    ...reviews.map((r) => ({
      name: r.name,
      head: `Content-Type: ${json}\r\nContent-Length: ${Buffer.byteLength(r.body)}\r\n`,
      body: r.body,
    })),
    ...cases.filter((c) => !c.name.includes('limit')),
  ];
  for (const c of all) {
    void test(`answers ${c.name} as express's route does`, async () => {
      for (const webhook of ['validate', 'mutate']) {
        viaExpress.length = 0;
        const fast = await rawTls(`/${webhook}`, c.head, c.body);
        const routed = await rawTls(`/${webhook}?via=express`, c.head, c.body);
        assert.deepEqual(viaExpress, [`/${webhook}?via=express`], 'only the second request went through express');
        assert.match(fast, /^HTTP\/1\.1 [2-4]\d\d /);
        assert.equal(fast, routed, `${fast}\n----\n${routed}`);
      }
    });
  }
});
