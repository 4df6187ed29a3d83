// An ExternalSecret whose template overruns the render pool's deadline (issue #20): the reconcile ends
// in about 2 s with Ready False naming the field and the limit (no value), writes no Secret, and throws,
// so the work queue retries it with backoff; the next ExternalSecret renders on a fresh worker.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RenderPool } from '../../../controller/reconcilers/render-pool.ts';
import { readyOf } from './harness.ts';
import {
  EXTERNAL_SECRETS,
  externalSecret,
  SECRETS,
  secretData,
  startVault,
  stopVault,
  type Vault,
  world,
} from './eso-world.ts';
import { CANARY, HOSTILE_TEMPLATES } from '../../eso/hostile-templates.ts';

const SLOW = HOSTILE_TEMPLATES.find((h) => h.name.startsWith('uniq of 200,000'))!.template;

let v: Vault;
let pool: RenderPool;
void before(async () => {
  v = await startVault();
  await v.kv.write('team-a/db', { user: 'app', password: CANARY });
  pool = new RenderPool({ size: 2, deadlineMs: 2000 });
  await pool.ready();
});
void after(async () => {
  await pool.close();
  await stopVault(v);
});

void describe('ExternalSecret rendered by the render pool', () => {
  void test('a template past the deadline: Ready False naming the field and the limit, no Secret, retried with backoff; the next one renders', async () => {
    const { kube, es } = await world(v, { renderer: pool });

    kube.put(
      EXTERNAL_SECRETS,
      externalSecret('hostile', {
        dataFrom: [{ extract: { key: 'team-a/db' } }],
        target: { template: { data: { ok: '{{ .user }}', slow: SLOW } } },
      }),
    );
    const t0 = performance.now();
    await assert.rejects(
      kube.reconcile(es, 'team-a/hostile'),
      /template rendering exceeded 2s/,
      'thrown: the work queue retries it with backoff',
    );
    const ms = performance.now() - t0;
    assert.ok(ms < 3000, `the reconcile took ${ms.toFixed(0)} ms`);
    const obj = kube.getObj(EXTERNAL_SECRETS, 'team-a/hostile');
    assert.equal(readyOf(obj)?.status, 'False');
    assert.equal(readyOf(obj)?.message, 'spec.target.template.data["slow"]: template rendering exceeded 2s');
    assert.equal(kube.getObj(SECRETS, 'team-a/hostile'), undefined, 'no Secret written');
    assert.ok(
      kube.events.some(
        (e) => e.object === 'team-a/hostile' && e.type === 'Warning' && /exceeded 2s/.test(e.note ?? ''),
      ),
    );
    assert.ok(!JSON.stringify(obj).includes(CANARY) && !JSON.stringify(kube.events).includes(CANARY));

    kube.put(
      EXTERNAL_SECRETS,
      externalSecret('fine', {
        dataFrom: [{ extract: { key: 'team-a/db' } }],
        target: { template: { data: { dsn: '{{ .user }}:{{ .password }}' } } },
      }),
    );
    await kube.reconcile(es, 'team-a/fine');
    assert.equal(readyOf(kube.getObj(EXTERNAL_SECRETS, 'team-a/fine'))?.status, 'True');
    assert.deepEqual(secretData({ kube, es }, 'team-a/fine'), { dsn: `app:${CANARY}` });
  });
});
