// A forced refresh of many ExternalSecrets (issue #24): the whole controller on the simulators.
// - #24.4: Vault data unchanged, so the only Kubernetes writes are the status writes (one per
//   ExternalSecret: its refreshTime and syncedResourceVersion); no Secret is applied again.
// - #24.2: an ExternalSecret created while thousands of force-synced ones wait gets its Secret before them.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { nsName, passwordOf, startEsoSim, until } from '../../support/eso-sim.ts';

describe('forced refresh storm (simulators)', () => {
  test('a forced refresh of 1,000 ExternalSecrets whose Vault data is unchanged writes 1,000 statuses and no Secret', async () => {
    const sim = await startEsoSim({ namespaces: 10, perNamespace: 100, paths: 10 });
    try {
      const before = new Map(sim.keys.map((k) => [k, sim.syncedVersion(k)]));
      const from = sim.kube.calls.length;
      sim.vault.resetCounts();
      sim.forceSyncBurst('2026-12-02T19:00:00Z', sim.keys);
      await until(
        () => sim.keys.every((k) => sim.syncedVersion(k) !== before.get(k)) && sim.idle(),
        'every ExternalSecret refreshed',
        120_000,
        50,
      );
      assert.deepEqual(sim.writesSince(from), { 'externalsecrets/status': 1000 }, 'status writes only');
      assert.equal(sim.vault.count('read', 'secret/data/'), 100, 'the forced refresh read Vault again: once per path');
      assert.equal(sim.secretPassword(`${nsName(3)}/es-42`), passwordOf(nsName(3), 2));
    } finally {
      await sim.stop();
    }
  });

  test('an ExternalSecret created during a forced refresh of 2,000 gets its Secret before the refreshes', async () => {
    const sim = await startEsoSim({ namespaces: 10, perNamespace: 200, paths: 10 });
    try {
      const before = new Map(sim.keys.map((k) => [k, sim.syncedVersion(k)]));
      const refreshed = (): number => sim.keys.filter((k) => sim.syncedVersion(k) !== before.get(k)).length;
      sim.forceSyncBurst('storm', sim.keys);
      await until(
        () => sim.app.manager.status().controllers.some((c) => c.name === 'externalsecret' && c.queued > 1500),
        'the refreshes queued',
        30_000,
        1,
      );
      const newKey = `${nsName(0)}/created-during-storm`;
      await sim.createExternalSecret(nsName(0), 'created-during-storm', 7);
      const atCreate = refreshed();
      await until(() => sim.secretPassword(newKey) !== undefined, 'the new Secret', 120_000, 1);
      const atSecret = refreshed();
      assert.equal(sim.secretPassword(newKey), passwordOf(nsName(0), 7));
      // The refreshes in flight when it was created finish, and the other 3 workers go on with the
      // refreshes while the new one reads Vault; the 1,500 and more still waiting come after it.
      assert.ok(
        atSecret - atCreate < 50,
        `${atSecret - atCreate} refreshes ran between the new ExternalSecret's CREATE and its Secret (${atCreate} before it)`,
      );
      await until(() => refreshed() === sim.keys.length && sim.idle(), 'every refresh', 300_000, 50);
    } finally {
      await sim.stop();
    }
  });
});
