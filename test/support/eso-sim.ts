// The whole controller (manager, informers, work queues, reconcilers) in this process against the
// in-process Kubernetes store and the Vault simulator, with ExternalSecrets in several namespaces over a
// few Vault paths each: for tests and the simulator bench rows that need many ExternalSecrets synced.
// The test's own writes go through `admin` (its own call log), so `kube.calls` holds the controller's only.
import { buildControllerApp, type ControllerApp } from '../../controller/main.ts';
import { nullRecorder } from '../../kube/events.ts';
import type { Logger } from '../../observability/log.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { NAMESPACES, SECRETS, SERVICEACCOUNTS } from '../../kube/resources.ts';
import { EXTERNAL_SECRETS, SECRET_STORES } from '../../schemas/resources.ts';
import { createVaultClient } from '../../vault/client.ts';
import { createKvApi } from '../../vault/kv.ts';
import { createSysApi } from '../../vault/sys.ts';
import type { KvApi, VaultClient, VaultRequest } from '../../vault/types.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';
import { KubeStore } from '../sim/kube-store.ts';
import { storeTokenVerifier } from '../sim/store-token-verifier.ts';
import { VaultSim } from '../sim/vault.ts';

export interface EsoSimOptions {
  namespaces: number;
  perNamespace: number;
  /** Distinct Vault paths per namespace (ExternalSecret e reads path e % paths). */
  paths: number;
  workers?: number;
  /** The controller's logger (default: silent). */
  log?: Logger;
}

export interface EsoSim {
  store: KubeStore;
  /** The controller's client: `calls` is every request it made. */
  kube: FakeKubeClient;
  /** The test's client (same store). */
  admin: FakeKubeClient;
  vault: VaultSim;
  kv: KvApi;
  app: ControllerApp;
  /** `namespace/name` of every ExternalSecret created by start(). */
  keys: string[];
  /** Creates an ExternalSecret reading `ns`'s path `e % paths`. */
  createExternalSecret(ns: string, name: string, e: number): Promise<void>;
  /** The annotation `kubectl annotate --all … force-sync=<value>` sets, on `keys`, in one burst (no await between). */
  forceSyncBurst(value: string, keys: readonly string[]): void;
  /** status.syncedResourceVersion of an ExternalSecret, as the controller's cache holds it. */
  syncedVersion(key: string): string | undefined;
  /** The password the Secret of `key` holds, or undefined. */
  secretPassword(key: string): string | undefined;
  /** The controller's Kubernetes writes (Events left out) since call index `from`, by `resource[/subresource]`. */
  writesSince(from: number): Record<string, number>;
  idle(): boolean;
  stop(): Promise<void>;
}

export const nsName = (i: number): string => `sim-${i}`;
export const passwordOf = (ns: string, p: number): string => `pw-${ns}-${p}`;

export async function until(cond: () => boolean, what: string, timeoutMs = 120_000, stepMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

const WRITES = new Set(['create', 'replace', 'patch', 'apply', 'delete']);

/** Seeds Vault and Kubernetes, starts the controller and waits until every Secret is synced and the queues are idle. */
export async function startEsoSim(opts: EsoSimOptions): Promise<EsoSim> {
  const store = new KubeStore();
  const kube = new FakeKubeClient({ store });
  const admin = new FakeKubeClient({ store });
  const vault = await VaultSim.start({ verifier: storeTokenVerifier(store) });
  const root: VaultClient = createVaultClient({ address: vault.addr, timeoutMs: 5000 });
  const asRoot = { request: <T>(req: VaultRequest) => root.request<T>({ ...req, token: vault.rootToken }) };
  const kv = createKvApi(asRoot, { mount: 'secret', version: 2 });
  const app = buildControllerApp({
    client: kube,
    vault: {
      address: vault.addr,
      auth: { method: 'token', token: vault.rootToken },
      timeoutMs: 5000,
      clientDefaults: { limiter: { maxConcurrent: 32, ratePerSecond: 0 } },
    },
    workers: opts.workers ?? 4,
    informer: { resyncMs: 0 },
    events: nullRecorder,
    ...(opts.log ? { log: opts.log } : {}),
  });
  // The runtime's timers are unref'd and the in-process store has no sockets: keep the loop alive.
  const keepAlive = setInterval(() => undefined, 1000);
  const esResource = store.resource('external-secrets.io', 'v1', 'externalsecrets')!;
  const createExternalSecret = async (ns: string, name: string, e: number): Promise<void> => {
    await admin.create(EXTERNAL_SECRETS, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      metadata: { name, namespace: ns },
      spec: {
        secretStoreRef: { name: 'vault', kind: 'SecretStore' },
        refreshInterval: '1h',
        data: [{ secretKey: 'password', remoteRef: { key: `${ns}/app-${e % opts.paths}`, property: 'password' } }],
      },
    });
  };
  const get = (res: typeof EXTERNAL_SECRETS, key: string): KubeObject | undefined => {
    const [ns, name] = key.split('/') as [string, string];
    try {
      return store.get(res, ns, name);
    } catch {
      return undefined;
    }
  };
  const sim: EsoSim = {
    store,
    kube,
    admin,
    vault,
    kv,
    app,
    keys: [],
    createExternalSecret,
    forceSyncBurst(value, keys) {
      for (const key of keys) {
        const [ns, name] = key.split('/') as [string, string];
        store.patch(
          esResource,
          ns,
          name,
          { metadata: { annotations: { 'external-secrets.io/force-sync': value } } },
          'application/merge-patch+json',
          { fieldManager: 'kubectl-annotate' },
        );
      }
    },
    // From the controller's informer cache: no copy per call (polling thousands of keys must not starve the controller).
    syncedVersion: (key) =>
      (app.manager.cache(EXTERNAL_SECRETS).get(key)?.status as { syncedResourceVersion?: string } | undefined)
        ?.syncedResourceVersion,
    secretPassword(key) {
      const b64 = (get(SECRETS, key) as { data?: Record<string, string> } | undefined)?.data?.password;
      return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
    },
    writesSince(from) {
      const out: Record<string, number> = {};
      for (const c of kube.calls.slice(from)) {
        if (!WRITES.has(c.verb) || c.resource === 'events') continue;
        const k = c.subresource ? `${c.resource}/${c.subresource}` : c.resource;
        out[k] = (out[k] ?? 0) + 1;
      }
      return out;
    },
    idle: () => app.manager.status().controllers.every((c) => c.queued === 0 && c.inFlight === 0),
    async stop() {
      try {
        await app.stop();
      } finally {
        clearInterval(keepAlive);
        root.close();
        await vault.stop();
      }
    },
  };
  try {
    const sys = createSysApi(asRoot);
    const namespaces = Array.from({ length: opts.namespaces }, (_, i) => nsName(i));
    await sys.writePolicy('sim-read', 'path "secret/data/sim-*" { capabilities = ["read"] }\n');
    await sys.writeKubernetesRole('kubernetes', 'sim', {
      bound_service_account_names: ['reader'],
      bound_service_account_namespaces: namespaces,
      token_policies: ['sim-read'],
      audience: 'vault',
      token_ttl: 3600,
      token_max_ttl: 86400,
    });
    for (const ns of namespaces) {
      await admin.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await admin.create(SERVICEACCOUNTS, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'reader', namespace: ns },
      });
      await admin.create(SECRET_STORES, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault', namespace: ns },
        spec: {
          provider: {
            vault: {
              server: vault.addr,
              path: 'secret',
              version: 'v2',
              auth: { kubernetes: { mountPath: 'kubernetes', role: 'sim', serviceAccountRef: { name: 'reader' } } },
            },
          },
        },
      });
      for (let p = 0; p < opts.paths; p++) await kv.write(`${ns}/app-${p}`, { password: passwordOf(ns, p) });
      for (let e = 0; e < opts.perNamespace; e++) {
        await createExternalSecret(ns, `es-${e}`, e);
        sim.keys.push(`${ns}/es-${e}`);
      }
    }
    await app.start();
    await until(
      () => sim.keys.every((k) => sim.syncedVersion(k) !== undefined) && sim.idle(),
      'the first sync of every ExternalSecret',
      300_000,
      20,
    );
    return sim;
  } catch (err) {
    await sim.stop();
    throw err;
  }
}
