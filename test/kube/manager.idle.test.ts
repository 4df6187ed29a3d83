// An idle manager does no work between an object's refreshes (issue #24.5): with every object converged and
// its next refresh an hour away, nothing is reconciled before then — no informer resync re-running every
// reconcile (the default resync was 10 minutes), no timer that fires with nothing due.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../kube/clock.ts';
import { Manager } from '../../kube/manager.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { requeueAfter } from '../../kube/reconciler.ts';
import { CONFIGMAPS, SECRETS } from '../../kube/resources.ts';
import { VAULT_POLICIES } from '../../schemas/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

const HOUR = 3_600_000;

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const vp = (name: string): KubeObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: 'default' },
  spec: { policy: 'p' },
});

describe('an idle manager', () => {
  test('runs no reconcile between refreshes an hour apart, with the default informer options', async () => {
    const kube = new FakeKubeClient();
    for (let i = 0; i < 20; i++) await kube.create(VAULT_POLICIES, vp(`p-${i}`));
    await kube.create(SECRETS, { metadata: { name: 's', namespace: 'default' }, data: {} });
    const clock = new FakeClock();
    // Default informer options: what `vaultgate controller` runs with.
    const mgr = new Manager({ client: kube, clock });
    const runs: string[] = [];
    mgr
      .controller('refreshing')
      .for(VAULT_POLICIES)
      .owns(SECRETS)
      .watches(CONFIGMAPS, () => [])
      .complete((key) => {
        runs.push(key);
        return Promise.resolve(requeueAfter(HOUR)); // converged: next refresh in an hour
      });
    await mgr.start();
    await until(() => runs.length === 20 && mgr.status().controllers.every((c) => c.inFlight === 0), 'the sync');

    for (let minute = 1; minute < 60; minute++) {
      await clock.advance(60_000);
      assert.equal(runs.length, 20, `a reconcile ran ${minute} minutes after the sync, with nothing changed or due`);
    }
    // The refreshes still come when due: the quiet above is not a stalled manager.
    await clock.advance(60_000);
    await until(() => runs.length === 40, 'the hourly refreshes');
    await mgr.stop();
  });
});
