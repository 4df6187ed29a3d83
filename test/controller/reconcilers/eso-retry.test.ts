// A Vault refusal is retried with backoff, as ESO returns it to controller-runtime: Vault's own
// configuration (the policy behind a role, applied in the same batch or granted later) changes without
// any Kubernetes event that would wake the ExternalSecret. Before this, a 403 left it failed until its
// next refresh (1 h here): CI saw a Secret never appear when the VaultPolicy landed moments late.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSysApi } from '../../../vault/sys.ts';
import type { VaultRequester } from '../../../vault/types.ts';
import { readyOf } from './harness.ts';
import { EXTERNAL_SECRETS, externalSecret, secretData, startVault, stopVault, world, type Vault } from './eso-world.ts';

let v: Vault;
void before(async () => {
  v = await startVault();
  await v.kv.write('team-a/late', { password: 'granted-later' });
});
void after(() => stopVault(v));

const asRoot = (): VaultRequester => ({ request: (req) => v.root.request({ ...req, token: v.sim.rootToken }) });

void describe('an ExternalSecret Vault refuses', () => {
  void test('is retried with backoff, its status saying why, and syncs once the policy grants the path', async () => {
    const w = await world(v);
    const sys = createSysApi(asRoot());
    await sys.writePolicy('team-a-read', 'path "secret/data/elsewhere/*" { capabilities = ["read"] }\n');
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('late', {
        data: [{ secretKey: 'password', remoteRef: { key: 'team-a/late', property: 'password' } }],
      }),
    );

    // Thrown: the work queue retries it with per-key exponential backoff (returning would wait 1 h).
    await assert.rejects(w.kube.reconcile(w.es, 'team-a/late'), /permission denied/);
    const ready = readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/late'));
    assert.equal(ready?.status, 'False');
    assert.match(ready?.message ?? '', /kv\.read: permission denied/);
    assert.equal(secretData(w, 'team-a/late'), undefined);

    await sys.writePolicy('team-a-read', 'path "secret/data/team-a/*" { capabilities = ["read"] }\n');
    const res = await w.kube.reconcile(w.es, 'team-a/late');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/late'))?.reason, 'SecretSynced');
    assert.deepEqual(secretData(w, 'team-a/late'), { password: 'granted-later' });
    assert.ok(res.requeueAfterMs && res.requeueAfterMs > 3_000_000, 'then the next refresh in about an hour');
  });

  void test('the retried error carries the status message, never a value read in the same reconcile', async () => {
    const w = await world(v);
    const sys = createSysApi(asRoot());
    await sys.writePolicy('team-a-read', 'path "secret/data/team-a/late" { capabilities = ["read"] }\n');
    // The first entry is read (its value is in hand), the second is refused.
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('mixed', {
        data: [
          { secretKey: 'password', remoteRef: { key: 'team-a/late', property: 'password' } },
          { secretKey: 'other', remoteRef: { key: 'team-a/other', property: 'x' } },
        ],
      }),
    );
    const err = await w.kube.reconcile(w.es, 'team-a/mixed').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.ok(err, 'retried');
    assert.doesNotMatch(`${err.message} ${err.stack ?? ''}`, /granted-later/);
    assert.equal(err.message, readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/mixed'))?.message);
    await sys.writePolicy('team-a-read', 'path "secret/data/team-a/*" { capabilities = ["read"] }\n');
  });
});
