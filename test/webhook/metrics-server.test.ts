// The webhook's metrics port serves GET /metrics and nothing else: a scraper admitted to this port by a
// NetworkPolicy can read figures but reaches no admission route.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMetricsServer } from '../../webhook/metrics-server.ts';

const registry = (text: () => Promise<string>) => ({
  metrics: text,
  contentType: 'text/plain; version=0.0.4; charset=utf-8' as const,
});

test('GET /metrics (with a query) answers the registry text with its content type', async () => {
  const srv = await startMetricsServer(
    registry(() => Promise.resolve('vaultgate_up 1\n')),
    { host: '127.0.0.1', port: 0 },
  );
  try {
    const res = await fetch(`http://127.0.0.1:${srv.port}/metrics?x=1`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(await res.text(), 'vaultgate_up 1\n');
  } finally {
    await srv.close();
  }
});

test('any other path or method is a 404 that says what the port serves (no admission route here)', async () => {
  const srv = await startMetricsServer(
    registry(() => Promise.resolve('x 1\n')),
    { host: '127.0.0.1', port: 0 },
  );
  try {
    for (const [method, path] of [
      ['POST', '/validate'],
      ['POST', '/metrics'],
      ['GET', '/healthz'],
    ] as const) {
      const res = await fetch(`http://127.0.0.1:${srv.port}${path}`, { method });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.match(await res.text(), /serves GET \/metrics only/);
    }
  } finally {
    await srv.close();
  }
});

test('a registry that fails to collect: 500 with a fixed message (nothing of the error)', async () => {
  const srv = await startMetricsServer(
    registry(() => Promise.reject(new Error('canary-internal'))),
    {
      host: '127.0.0.1',
      port: 0,
    },
  );
  try {
    const res = await fetch(`http://127.0.0.1:${srv.port}/metrics`);
    assert.equal(res.status, 500);
    const body = await res.text();
    assert.equal(body, 'metrics could not be collected');
  } finally {
    await srv.close();
  }
});

test('a port already in use rejects the start instead of serving nowhere', async () => {
  const first = await startMetricsServer(
    registry(() => Promise.resolve('')),
    { host: '127.0.0.1', port: 0 },
  );
  try {
    await assert.rejects(
      startMetricsServer(
        registry(() => Promise.resolve('')),
        { host: '127.0.0.1', port: first.port },
      ),
      {
        code: 'EADDRINUSE',
      },
    );
  } finally {
    await first.close();
  }
});
