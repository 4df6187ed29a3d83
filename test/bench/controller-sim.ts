// Controller benchmark, SIMULATOR rows (extra, labelled as such; the benchmark proper is controller.ts
// on the real kube-apiserver and OpenBao): 1,000 ExternalSecrets over 100 distinct Vault paths (10
// namespaces × 100 ExternalSecrets, 10 SecretStores = 10 Vault identities), the full controller (manager,
// informers, work queues, reconcilers) in this process against the in-process Kubernetes store and the
// Vault simulator.
// Figures: time until every Secret exists; Vault reads and logins for the initial sync and for one
// refresh cycle (goal: 100 reads, ≤ 1 login per identity); Kubernetes writes during a steady-state
// resync (goal 0); RSS and heap with 10k objects cached by informers.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildControllerApp, MANAGED_SECRETS_SELECTOR } from '../../controller/main.ts';
import { Informer } from '../../kube/informer.ts';
import { nullRecorder } from '../../kube/events.ts';
import { NAMESPACES, SECRETS, SERVICEACCOUNTS, type ResourceRef } from '../../kube/resources.ts';
import { EXTERNAL_SECRETS, SECRET_STORES } from '../../schemas/resources.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { createVaultClient } from '../../vault/client.ts';
import { createKvApi } from '../../vault/kv.ts';
import { createSysApi } from '../../vault/sys.ts';
import type { VaultRequest } from '../../vault/types.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';
import { KubeStore } from '../sim/kube-store.ts';
import { storeTokenVerifier } from '../sim/store-token-verifier.ts';
import { VaultSim } from '../sim/vault.ts';

const NAMESPACE_COUNT = 10;
const ES_PER_NAMESPACE = 100;
const PATHS_PER_NAMESPACE = 10;

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`benchmark: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function writesIn(kube: FakeKubeClient, from: number): number {
  return kube.calls
    .slice(from)
    .filter((c) => ['create', 'replace', 'patch', 'apply', 'delete'].includes(c.verb) && c.resource !== 'events')
    .length;
}

export async function benchControllerSim(): Promise<Record<string, number | string>> {
  // The runtime's timers are unref'd and the in-process store has no sockets: keep the loop alive.
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    return await run();
  } finally {
    clearInterval(keepAlive);
  }
}

async function run(): Promise<Record<string, number | string>> {
  const store = new KubeStore();
  const kube = new FakeKubeClient({ store });
  const sim = await VaultSim.start({ verifier: storeTokenVerifier(store) });
  const root = createVaultClient({ address: sim.addr, timeoutMs: 5000 });
  const asRoot = { request: <T>(req: VaultRequest) => root.request<T>({ ...req, token: sim.rootToken }) };
  const sys = createSysApi(asRoot);
  const kv = createKvApi(asRoot, { mount: 'secret', version: 2 });
  let offsetMs = 0;
  const clockNow = (): number => Date.now() + offsetMs;
  const app = buildControllerApp({
    client: kube,
    vault: {
      address: sim.addr,
      auth: { method: 'token', token: sim.rootToken },
      timeoutMs: 5000,
      clientDefaults: { limiter: { maxConcurrent: 32, ratePerSecond: 0 } },
    },
    workers: 8,
    informer: { resyncMs: 0 },
    events: nullRecorder,
    now: () => new Date(clockNow()),
  });
  const figures: Record<string, number | string> = {};
  try {
    const namespaces = Array.from({ length: NAMESPACE_COUNT }, (_, i) => `bench-${i}`);
    await sys.writePolicy('bench-read', 'path "secret/data/bench-*" { capabilities = ["read"] }\n');
    await sys.writeKubernetesRole('kubernetes', 'bench', {
      bound_service_account_names: ['reader'],
      bound_service_account_namespaces: namespaces,
      token_policies: ['bench-read'],
      audience: 'vault',
      token_ttl: 3600,
      token_max_ttl: 86400,
    });
    for (const ns of namespaces) {
      await kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await kube.create(SERVICEACCOUNTS, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'reader', namespace: ns },
      });
      await kube.create(SECRET_STORES, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault', namespace: ns },
        spec: {
          provider: {
            vault: {
              server: sim.addr,
              path: 'secret',
              version: 'v2',
              auth: { kubernetes: { mountPath: 'kubernetes', role: 'bench', serviceAccountRef: { name: 'reader' } } },
            },
          },
        },
      });
      for (let p = 0; p < PATHS_PER_NAMESPACE; p++)
        await kv.write(`${ns}/app-${p}`, { username: `user-${p}`, password: `pw-${ns}-${p}` });
      for (let e = 0; e < ES_PER_NAMESPACE; e++) {
        await kube.create(EXTERNAL_SECRETS, {
          apiVersion: 'external-secrets.io/v1',
          kind: 'ExternalSecret',
          metadata: { name: `es-${e}`, namespace: ns },
          spec: {
            secretStoreRef: { name: 'vault', kind: 'SecretStore' },
            refreshInterval: '1h',
            data: [
              {
                secretKey: 'password',
                remoteRef: { key: `${ns}/app-${e % PATHS_PER_NAMESPACE}`, property: 'password' },
              },
            ],
          },
        });
      }
    }
    const total = NAMESPACE_COUNT * ES_PER_NAMESPACE;
    figures.external_secrets = total;
    figures.distinct_vault_paths = NAMESPACE_COUNT * PATHS_PER_NAMESPACE;
    figures.vault_identities = NAMESPACE_COUNT;
    sim.resetCounts();

    const t0 = performance.now();
    await app.start();
    const managedSecrets = (): number =>
      store.list(SECRETS, { labelSelector: 'reconcile.external-secrets.io/managed=true' }).items.length;
    await waitFor(() => managedSecrets() >= total, 120_000, 'all Secrets');
    figures.initial_sync_all_secrets_ms = Math.round(performance.now() - t0);
    const synced = (): number =>
      store
        .list(EXTERNAL_SECRETS, {})
        .items.filter((o) =>
          (o.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions?.some(
            (c) => c.type === 'Ready' && c.status === 'True',
          ),
        ).length;
    await waitFor(() => synced() >= total, 60_000, 'all ExternalSecrets Ready');
    figures.initial_sync_all_ready_ms = Math.round(performance.now() - t0);
    figures.initial_vault_reads = sim.count('read', 'secret/data/');
    figures.initial_vault_logins = sim.loginCount();
    await waitFor(
      () => app.manager.status().controllers.every((c) => c.queued === 0 && c.inFlight === 0),
      30_000,
      'idle queues',
    );

    // Steady state: every key re-delivered (as the informers' periodic resync does), nothing due.
    const before = kube.calls.length;
    sim.resetCounts();
    const keys = store.list(EXTERNAL_SECRETS, {}).items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
    const esController = (
      app.manager as unknown as { controllers: Array<{ name: string; queue: { add(k: string): void } }> }
    ).controllers.find((c) => c.name === 'externalsecret');
    if (!esController) throw new Error('benchmark: no externalsecret controller');
    for (const k of keys) esController.queue.add(k);
    await new Promise((r) => setTimeout(r, 50));
    await waitFor(
      () => app.manager.status().controllers.every((c) => c.queued === 0 && c.inFlight === 0),
      30_000,
      'resync to drain',
    );
    figures.steady_resync_kube_writes = writesIn(kube, before);
    figures.steady_resync_vault_requests = sim.count('read') + sim.count('login') + sim.count('list');

    // One refresh cycle: move the refresh clock past every ExternalSecret's jittered interval.
    offsetMs = 2 * 3_600_000;
    sim.resetCounts();
    const beforeRefresh = kube.calls.length;
    const tr = performance.now();
    for (const k of keys) esController.queue.add(k);
    await new Promise((r) => setTimeout(r, 50));
    await waitFor(
      () => app.manager.status().controllers.every((c) => c.queued === 0 && c.inFlight === 0),
      60_000,
      'refresh cycle',
    );
    figures.refresh_cycle_ms = Math.round(performance.now() - tr);
    figures.refresh_cycle_vault_reads = sim.count('read', 'secret/data/');
    figures.refresh_cycle_vault_logins = sim.loginCount();
    figures.refresh_cycle_kube_writes = writesIn(kube, beforeRefresh);
    figures.refresh_cycle_secret_writes = kube.calls
      .slice(beforeRefresh)
      .filter((c) => c.resource === 'secrets' && c.verb !== 'get').length;
  } finally {
    await app.stop();
    root.close();
    await sim.stop();
  }

  Object.assign(figures, await cacheMemory(Number(process.env.BENCH_CACHE_OBJECTS ?? 10_000)));
  return figures;
}

/** RSS and heap growth with `n` ExternalSecrets and `n` Secrets held by informer caches. */
export async function cacheMemory(n: number): Promise<Record<string, number>> {
  const store = new KubeStore({ historyLimit: 10 });
  const kube = new FakeKubeClient({ store });
  await kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'mem' } });
  for (let i = 0; i < n; i++) {
    await kube.create(EXTERNAL_SECRETS, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      metadata: { name: `es-${i}`, namespace: 'mem', labels: { app: `app-${i % 50}` } },
      spec: {
        secretStoreRef: { name: 'vault', kind: 'SecretStore' },
        refreshInterval: '1h',
        data: [{ secretKey: 'password', remoteRef: { key: `mem/app-${i % 100}`, property: 'password' } }],
      },
    });
    await kube.create(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: `es-${i}`,
        namespace: 'mem',
        labels: { 'reconcile.external-secrets.io/managed': 'true' },
        annotations: { 'reconcile.external-secrets.io/data-hash': 'x'.repeat(56) },
      },
      data: { password: Buffer.from(`value-${i}`).toString('base64') },
    });
  }
  globalThis.gc?.();
  const base = process.memoryUsage();
  const informers = [EXTERNAL_SECRETS, SECRETS].map(
    (resource: ResourceRef) =>
      new Informer<KubeObject>(kube, {
        resource,
        resyncMs: 0,
        ...(resource === SECRETS ? { labelSelector: MANAGED_SECRETS_SELECTOR } : {}),
      }),
  );
  for (const i of informers) i.start();
  await Promise.all(informers.map((i) => i.waitForSync()));
  globalThis.gc?.();
  const after = process.memoryUsage();
  const cached = informers.reduce((s, i) => s + i.cache.size, 0);
  await Promise.all(informers.map((i) => i.stop()));
  return {
    cache_objects: cached,
    cache_rss_mb: Math.round(after.rss / 1048576),
    cache_rss_growth_mb: Math.round((after.rss - base.rss) / 1048576),
    cache_heap_growth_mb: Math.round(((after.heapUsed - base.heapUsed) / 1048576) * 10) / 10,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  benchControllerSim().then(
    (f) => {
      for (const [k, v] of Object.entries(f)) process.stdout.write(`${k.padEnd(34)} ${v}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
