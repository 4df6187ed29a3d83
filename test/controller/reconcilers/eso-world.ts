// A Vault simulator, an in-memory Kubernetes (harness.ts) and the SecretStore/ExternalSecret
// reconcilers wired as the controller wires them, for the ExternalSecret tests that need a real read
// path (eso-leak, eso-adopt, eso-fields, eso-render-limits).
import { VaultSim } from '../../sim/vault.ts';
import { createVaultClient } from '../../../vault/client.ts';
import { createSysApi } from '../../../vault/sys.ts';
import { createKvApi } from '../../../vault/kv.ts';
import { TokenCache } from '../../../vault/token-cache.ts';
import type { KvApi, VaultClient, VaultRequest, VaultRequester } from '../../../vault/types.ts';
import { NAMESPACES, SECRETS } from '../../../kube/resources.ts';
import { EXTERNAL_SECRETS, SECRET_STORES } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { StoreConnector } from '../../../controller/reconcilers/store-connector.ts';
import { CoalescingKvReader } from '../../../controller/reconcilers/kv-reader.ts';
import type { SecretRenderer } from '../../../controller/reconcilers/render-pool.ts';
import { createSecretStoreReconciler } from '../../../controller/reconcilers/secretstore.ts';
import { createExternalSecretReconciler } from '../../../controller/reconcilers/externalsecret.ts';
import { FakeKube } from './harness.ts';

export interface Vault {
  sim: VaultSim;
  root: VaultClient;
  kv: KvApi;
}

function asRoot(c: VaultClient, token: string): VaultRequester {
  return { request: <T>(req: VaultRequest) => c.request<T>({ ...req, token }) };
}

export async function startVault(): Promise<Vault> {
  const sim = await VaultSim.start();
  const root = createVaultClient({ address: sim.addr, timeoutMs: 2000 });
  const sys = createSysApi(asRoot(root, sim.rootToken));
  await sys.writePolicy(
    'team-a-read',
    'path "secret/data/team-a/*" { capabilities = ["read"] }\npath "secret/metadata/team-a/*" { capabilities = ["read", "list"] }\n',
  );
  await sys.writeKubernetesRole('kubernetes', 'app', {
    bound_service_account_names: ['vault-reader'],
    bound_service_account_namespaces: ['team-a'],
    token_policies: ['team-a-read'],
    audience: 'vault',
    token_ttl: 3600,
    token_max_ttl: 7200,
  });
  return { sim, root, kv: createKvApi(asRoot(root, sim.rootToken), { mount: 'secret', version: 2 }) };
}

export async function stopVault(v: Vault): Promise<void> {
  v.root.close();
  await v.sim.stop();
}

export interface World {
  kube: FakeKube;
  es: ReturnType<typeof createExternalSecretReconciler>;
}

/** The SecretStore `team-a/vault` Ready and an ExternalSecret reconciler (rendering in process, or with `renderer`). */
export async function world(v: Vault, opts: { renderer?: SecretRenderer } = {}): Promise<World> {
  const kube = new FakeKube();
  kube.tokenFor = (ns, sa, opts) => v.sim.jwtFor(ns, sa, { audiences: opts?.audiences });
  const connector = new StoreConnector({
    client: kube,
    tokens: new TokenCache({ revokeOnEvict: false }),
    timeoutMs: 2000,
  });
  const common = { connector, controllerClass: '', namePrefix: 'vaultgate' };
  const store = createSecretStoreReconciler({ ...common, kind: 'SecretStore' });
  const es = createExternalSecretReconciler({ ...common, reader: new CoalescingKvReader(), ...opts });
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
  return { kube, es };
}

export function externalSecret(
  name: string,
  spec: Record<string, unknown>,
  annotations?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { name, namespace: 'team-a', ...(annotations ? { annotations } : {}) },
    spec: { secretStoreRef: { name: 'vault', kind: 'SecretStore' }, refreshInterval: '1h', ...spec },
  };
}

export function secretData(w: World, key: string): Record<string, string> | undefined {
  const s = w.kube.getObj(SECRETS, key) as { data?: Record<string, string> } | undefined;
  return s?.data
    ? Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]))
    : undefined;
}

export { EXTERNAL_SECRETS, SECRETS };
