// Refresh storm, SIMULATOR rows (issue #24.2 and #24.4): N ExternalSecrets (default 10,000; BENCH_STORM_COUNT)
// in 10 namespaces over 100 Vault paths, synced by the whole controller in this process against the
// in-process Kubernetes store and the Vault simulator. Then every one is force-synced in one burst (as
// `kubectl annotate --all external-secrets.io/force-sync=…`), and a new ExternalSecret is created while
// the refreshes wait: its time from CREATE to a Secret holding the right value, against the same on an idle
// controller, and how many refreshes ran before it. Also the Kubernetes writes of the whole forced refresh
// (Vault data unchanged: status writes only). Timing lives here, never in tests.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { nsName, passwordOf, startEsoSim, until } from '../support/eso-sim.ts';

const NAMESPACE_COUNT = 10;
const PATHS_PER_NAMESPACE = 10;

export async function benchStorm(
  count = Number(process.env.BENCH_STORM_COUNT ?? 10_000),
): Promise<Record<string, number | string>> {
  const figures: Record<string, number | string> = {};
  const t0 = performance.now();
  const sim = await startEsoSim({
    namespaces: NAMESPACE_COUNT,
    perNamespace: Math.ceil(count / NAMESPACE_COUNT),
    paths: PATHS_PER_NAMESPACE,
  });
  try {
    figures.external_secrets = sim.keys.length;
    figures.setup_and_first_sync_s = Math.round((performance.now() - t0) / 100) / 10;

    /** CREATE of a new ExternalSecret → its Secret with the right value, in ms. */
    const timeToSecret = async (name: string): Promise<number> => {
      const key = `${nsName(0)}/${name}`;
      const t = performance.now();
      await sim.createExternalSecret(nsName(0), name, 3);
      await until(() => sim.secretPassword(key) === passwordOf(nsName(0), 3), `the Secret of ${name}`, 600_000, 1);
      return performance.now() - t;
    };
    figures.new_es_time_to_secret_idle_ms = Math.round(await timeToSecret('created-idle'));
    await until(() => sim.idle(), 'idle', 60_000, 20);

    const before = new Map(sim.keys.map((k) => [k, sim.syncedVersion(k)]));
    const refreshed = (): number => sim.keys.filter((k) => sim.syncedVersion(k) !== before.get(k)).length;
    const esQueue = (): number =>
      sim.app.manager.status().controllers.find((c) => c.name === 'externalsecret')?.queued ?? 0;
    const errors = async (): Promise<number> => {
      const m = await sim.app.manager.metrics.reconcileErrors.get();
      return m.values.find((v) => v.labels.controller === 'externalsecret')?.value ?? 0;
    };
    const errorsFrom = await errors();
    const from = sim.kube.calls.length;
    sim.vault.resetCounts();
    const ts = performance.now();
    sim.forceSyncBurst(`storm-${Date.now()}`, sim.keys);
    // Created once the informer has queued most of the burst: the refreshes are waiting.
    await until(() => esQueue() >= sim.keys.length / 2, 'the refreshes queued', 600_000, 1);
    figures.refreshes_queued_at_create = esQueue();
    const doneAtCreate = refreshed();
    figures.new_es_time_to_secret_during_storm_ms = Math.round(await timeToSecret('created-during-storm'));
    figures.refreshes_run_before_its_secret = refreshed() - doneAtCreate;
    await until(() => refreshed() === sim.keys.length && sim.idle(), 'every refresh', 3_600_000, 50);
    figures.forced_refresh_all_s = Math.round((performance.now() - ts) / 100) / 10;
    // Less the new ExternalSecret's own two writes in this window (its Secret, its status).
    const writes = sim.writesSince(from);
    writes.secrets = (writes.secrets ?? 1) - 1;
    writes['externalsecrets/status'] = (writes['externalsecrets/status'] ?? 1) - 1;
    const kinds = Object.fromEntries(Object.entries(writes).filter(([, n]) => n !== 0));
    figures.forced_refresh_kube_writes = Object.values(kinds).reduce((s, n) => s + n, 0);
    figures.forced_refresh_kube_writes_by_kind = JSON.stringify(kinds);
    figures.forced_refresh_vault_reads = sim.vault.count('read', 'secret/data/');
    // A failed reconcile (a Vault timeout on a loaded machine) writes a failed status, then the retry a good one.
    figures.forced_refresh_reconcile_errors = (await errors()) - errorsFrom;
  } finally {
    await sim.stop();
  }
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  benchStorm().then(
    (f) => {
      for (const [k, v] of Object.entries(f)) process.stdout.write(`${k.padEnd(40)} ${v}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
