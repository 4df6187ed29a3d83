// An ExternalSecret whose template overruns the render pool's deadline (issue #20): the reconcile ends
// in about 2 s with Ready False naming the field and the limit (no value), writes no Secret, and throws,
// so the work queue retries it with backoff; the next ExternalSecret renders on a fresh worker.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NAMESPACES } from '../../../kube/resources.ts';
import { SECRET_STORES } from '../../../schemas/resources.ts';
import { StoreConnector } from '../../../controller/reconcilers/store-connector.ts';
import { CoalescingKvReader } from '../../../controller/reconcilers/kv-reader.ts';
import { createSecretStoreReconciler } from '../../../controller/reconcilers/secretstore.ts';
import { createExternalSecretReconciler } from '../../../controller/reconcilers/externalsecret.ts';
import { RenderPool } from '../../../controller/reconcilers/render-pool.ts';
import { TokenCache } from '../../../vault/token-cache.ts';
import { FakeKube, readyOf } from './harness.ts';
import {
  EXTERNAL_SECRETS,
  externalSecret,
  SECRETS,
  secretData,
  startVault,
  stopVault,
  type Vault,
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
    const kube = new FakeKube();
    kube.tokenFor = (ns, sa, opts) => v.sim.jwtFor(ns, sa, { audiences: opts?.audiences });
    const connector = new StoreConnector({
      client: kube,
      tokens: new TokenCache({ revokeOnEvict: false }),
      timeoutMs: 2000,
    });
    const common = { connector, controllerClass: '', namePrefix: 'vaultgate' };
    const store = createSecretStoreReconciler({ ...common, kind: 'SecretStore' });
    const es = createExternalSecretReconciler({ ...common, reader: new CoalescingKvReader(), renderer: pool });
    kube.put(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } },
    });
    kube.put(SECRET_STORES, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: 'vault', namespace: 'team-a' },
      spec: {
        provider: {
          vault: {
            server: v.sim.addr,
            path: 'secret',
            version: 'v2',
            auth: { kubernetes: { mountPath: 'kubernetes', role: 'app', serviceAccountRef: { name: 'vault-reader' } } },
          },
        },
      },
    });
    await kube.reconcile(store, 'team-a/vault');

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
