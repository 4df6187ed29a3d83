import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Registry } from 'prom-client';
import { startHealthServer } from '../../kube/health.ts';
import type { ManagerStatus } from '../../kube/manager.ts';

describe('health server', async () => {
  const registry = new Registry();
  new Counter({ name: 'probe_test_total', help: 'a counter', registers: [registry] }).inc(3);
  let status: ManagerStatus = { synced: false, leader: 'standby', informers: [], controllers: [] };
  let vaultUp: boolean | Error = true;
  const srv = await startHealthServer({
    registry,
    status: () => status,
    readyChecks: {
      vault: () => {
        if (vaultUp instanceof Error) throw vaultUp;
        return vaultUp;
      },
    },
  });
  after(() => srv.close());
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${srv.port}${path}`);
    return { code: res.status, body: await res.text(), cache: res.headers.get('cache-control') };
  };
  const readyz = (body: string) => JSON.parse(body) as { ready: boolean; checks: Record<string, boolean> };

  test('/healthz and /livez answer ok while the process serves', async () => {
    for (const p of ['/healthz', '/livez?verbose'])
      assert.deepEqual(await get(p), { code: 200, body: 'ok\n', cache: 'no-store' });
  });

  test('/readyz is 503 until every informer has synced, then 200', async () => {
    let r = await get('/readyz');
    assert.equal(r.code, 503);
    assert.deepEqual(readyz(r.body).checks, { informersSynced: false, vault: true });
    status = { ...status, synced: true };
    r = await get('/readyz');
    assert.equal(r.code, 200);
    assert.equal(readyz(r.body).ready, true);
  });

  test('a failing or throwing ready check makes /readyz 503 and names the check', async () => {
    status = { ...status, synced: true };
    for (const v of [false, new Error('connection refused')]) {
      vaultUp = v;
      const r = await get('/readyz');
      assert.equal(r.code, 503);
      assert.equal(readyz(r.body).checks.vault, false);
      assert.ok(!r.body.includes('connection refused'));
    }
    vaultUp = true;
  });

  test('/metrics serves the registry; other paths are 404', async () => {
    const m = await get('/metrics');
    assert.equal(m.code, 200);
    assert.match(m.body, /^probe_test_total 3$/m);
    assert.equal((await get('/nope')).code, 404);
  });
});
