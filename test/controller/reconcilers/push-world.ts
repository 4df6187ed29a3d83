// The world of the PushSecret reconciler tests: the Vault simulator (eso-world.ts) with an identity
// `pusher` that Vault lets write anywhere under its stores' mounts, so only vaultgate's checks keep a tenant
// in its subtree; an in-memory Kubernetes (harness.ts) with team-a, its SecretStores logging in as
// `pusher` and the source Secret `src`; and the PushSecret reconciler, its Vault writes recorded.
import type { KubeObject } from '../../../kube/objects.ts';
import { NAMESPACES, SECRETS } from '../../../kube/resources.ts';
import { PUSH_SECRETS, SECRET_STORES } from '../../../schemas/resources.ts';
import type { VaultWriteInput } from '../../../trail/events.ts';
import { createSysApi } from '../../../vault/sys.ts';
import { TokenCache } from '../../../vault/token-cache.ts';
import type { VaultRequest, VaultRequester } from '../../../vault/types.ts';
import { StoreConnector } from '../../../controller/reconcilers/store-connector.ts';
import { createPushSecretReconciler } from '../../../controller/reconcilers/pushsecret.ts';
import { FakeKube } from './harness.ts';
import { startVault, type Vault } from './eso-world.ts';

export interface KvStore {
  name: string;
  mount: string;
  version: 'v1' | 'v2';
}
export const KV2_STORE: KvStore = { name: 'vault', mount: 'secret', version: 'v2' };
export const KV1_STORE: KvStore = { name: 'legacy', mount: 'kv1', version: 'v1' };

/** Vault's root, for seeding and reading back. */
export const rootOf = (v: Vault): VaultRequester => ({
  request: <T>(req: VaultRequest) => v.root.request<T>({ ...req, token: v.sim.rootToken }),
});

/** The simulator with policy and kubernetes-auth role `pusher` (ServiceAccount pusher of team-a), and the KV v1 mounts. */
export async function startPushVault(stores: readonly KvStore[]): Promise<Vault> {
  const v = await startVault();
  const sys = createSysApi(rootOf(v));
  await sys.writePolicy(
    'pusher',
    stores
      .map((s) => `path "${s.mount}/*" { capabilities = ["create", "read", "update", "delete", "list"] }\n`)
      .join(''),
  );
  await sys.writeKubernetesRole('kubernetes', 'pusher', {
    bound_service_account_names: ['pusher'],
    bound_service_account_namespaces: ['team-a'],
    token_policies: ['pusher'],
    audience: 'vault',
    token_ttl: 3600,
  });
  for (const s of stores.filter((x) => x.version === 'v1'))
    await rootOf(v).request({
      operation: 't',
      method: 'POST',
      path: `sys/mounts/${s.mount}`,
      body: { type: 'kv', options: { version: '1' } },
    });
  return v;
}

export interface PushWorld {
  kube: FakeKube;
  /** Every Vault write the reconciler reported (what feeds the audit trail). */
  writes: VaultWriteInput[];
  run: (name: string) => Promise<unknown>;
}

/**
 * team-a with one SecretStore per store (labelled `tier: <name>`, `storeExtra` added to its provider),
 * Secret `src` holding `source` (plain values), and the PushSecret reconciler.
 */
export function pushWorld(
  v: Vault,
  stores: readonly KvStore[],
  source: Record<string, string>,
  storeExtra: Record<string, unknown> = {},
): PushWorld {
  const kube = new FakeKube();
  kube.tokenFor = (ns, sa, opts) => v.sim.jwtFor(ns, sa, { audiences: opts?.audiences });
  kube.put(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } },
  });
  for (const s of stores)
    kube.put(SECRET_STORES, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: s.name, namespace: 'team-a', labels: { tier: s.name } },
      spec: {
        provider: {
          vault: {
            server: v.sim.addr,
            path: s.mount,
            version: s.version,
            auth: { kubernetes: { mountPath: 'kubernetes', role: 'pusher', serviceAccountRef: { name: 'pusher' } } },
            ...storeExtra,
          },
        },
      },
    });
  kube.put(SECRETS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'src', namespace: 'team-a' },
    data: Object.fromEntries(Object.entries(source).map(([k, x]) => [k, Buffer.from(x).toString('base64')])),
  });
  const writes: VaultWriteInput[] = [];
  const connector = new StoreConnector({
    client: kube,
    tokens: new TokenCache({ revokeOnEvict: false }),
    timeoutMs: 2000,
  });
  const r = createPushSecretReconciler({
    connector,
    controllerClass: '',
    namePrefix: 'vaultgate',
    onVaultWrite: (w) => writes.push(w),
  });
  return { kube, writes, run: (name) => kube.reconcile(r, `team-a/${name}`) };
}

/** kv1/ is outside every namespace's subtree of secret/: a cluster admin's enforce guardrail opens team-a's part of it. */
export const LEGACY_KV_GUARDRAIL: KubeObject = {
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultGuardrail',
  metadata: { name: 'legacy-kv' },
  spec: {
    mode: 'enforce',
    relaxFloor: ['namespace-subtree'],
    allowedPaths: ['secret/data/{{namespace}}/*', 'secret/metadata/{{namespace}}/*', 'kv1/{{namespace}}/*'],
  },
};

/** A PushSecret of team-a pushing Secret `src` to store `vault` (`spec` adds to or replaces that). */
export const pushSecret = (
  name: string,
  spec: Record<string, unknown>,
  extra: Partial<KubeObject> = {},
): KubeObject => ({
  apiVersion: 'external-secrets.io/v1alpha1',
  kind: 'PushSecret',
  metadata: { name, namespace: 'team-a' },
  spec: {
    refreshInterval: '1h',
    secretStoreRefs: [{ name: 'vault', kind: 'SecretStore' }],
    selector: { secret: { name: 'src' } },
    ...spec,
  },
  ...extra,
});

/** The PushSecret's first condition (Ready). */
export const pushReady = (kube: FakeKube, name: string) =>
  ((
    kube.getObj(PUSH_SECRETS, `team-a/${name}`)?.status as
      { conditions?: Array<{ status: string; reason: string; message: string }> } | undefined
  )?.conditions ?? [])[0];
