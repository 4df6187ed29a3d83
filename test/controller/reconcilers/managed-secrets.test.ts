// The ExternalSecret controller caches only Secrets labelled reconcile.external-secrets.io/managed=true
// (controller/main.ts). These tests run the whole app over the in-process apiserver store and check that
// what a user would notice still holds: Merge targets that start unlabelled are synced and labelled,
// hand edits and a removed label are repaired, a deleted target is reported, other Secrets stay uncached.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildControllerApp, MANAGED_SECRETS_SELECTOR, type ControllerApp } from '../../../controller/main.ts';
import { nullRecorder } from '../../../kube/events.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { SECRETS, SERVICEACCOUNTS } from '../../../kube/resources.ts';
import { EXTERNAL_SECRETS, SECRET_STORES } from '../../../schemas/resources.ts';
import { ANNOTATION_DATA_HASH, LABEL_MANAGED } from '../../../eso/target.ts';
import { createVaultClient } from '../../../vault/client.ts';
import { createKvApi } from '../../../vault/kv.ts';
import { createSysApi } from '../../../vault/sys.ts';
import type { VaultClient, VaultRequest } from '../../../vault/types.ts';
import { FakeKubeClient } from '../../sim/kube-fake-client.ts';
import { KubeStore } from '../../sim/kube-store.ts';
import { storeTokenVerifier } from '../../sim/store-token-verifier.ts';
import { VaultSim } from '../../sim/vault.ts';

type SecretObj = KubeObject & { data?: Record<string, string> };

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const text = (s: SecretObj | undefined, k: string): string | undefined =>
  s?.data?.[k] === undefined ? undefined : Buffer.from(s.data[k], 'base64').toString();
const readyOf = (o: KubeObject | undefined): { status: string; message: string } | undefined =>
  (
    o?.status as { conditions?: Array<{ type: string; status: string; message: string }> } | undefined
  )?.conditions?.find((c) => c.type === 'Ready');

let store: KubeStore;
let kube: FakeKubeClient;
let sim: VaultSim;
let root: VaultClient;
let app: ControllerApp;

void before(async () => {
  store = new KubeStore({ namespaces: ['default', 'team-a'] });
  kube = new FakeKubeClient({ store });
  sim = await VaultSim.start({ verifier: storeTokenVerifier(store) });
  root = createVaultClient({ address: sim.addr, timeoutMs: 2000 });
  const asRoot = { request: <T>(req: VaultRequest) => root.request<T>({ ...req, token: sim.rootToken }) };
  const sys = createSysApi(asRoot);
  await sys.writePolicy('team-a-read', 'path "secret/data/team-a/*" { capabilities = ["read"] }\n');
  await sys.writeKubernetesRole('kubernetes', 'reader', {
    bound_service_account_names: ['reader'],
    bound_service_account_namespaces: ['team-a'],
    token_policies: ['team-a-read'],
    audience: 'vault',
    token_ttl: 3600,
    token_max_ttl: 7200,
  });
  await createKvApi(asRoot, { mount: 'secret', version: 2 }).write('team-a/db', { password: 'from-vault' });
  await kube.create(SERVICEACCOUNTS, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'reader', namespace: 'team-a' },
  });
  await kube.create(SECRET_STORES, {
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: { name: 'vault', namespace: 'team-a' },
    spec: {
      provider: {
        vault: {
          server: sim.addr,
          path: 'secret',
          version: 'v2',
          auth: { kubernetes: { mountPath: 'kubernetes', role: 'reader', serviceAccountRef: { name: 'reader' } } },
        },
      },
    },
  });
  app = buildControllerApp({
    client: kube,
    vault: { address: sim.addr, auth: { method: 'token', token: sim.rootToken }, timeoutMs: 2000 },
    workers: 2,
    events: nullRecorder,
    informer: { resyncMs: 0 },
  });
  await app.start();
});

void after(async () => {
  await app.stop();
  root.close();
  await sim.stop();
});

function externalSecret(name: string, target: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { name, namespace: 'team-a' },
    spec: {
      secretStoreRef: { name: 'vault', kind: 'SecretStore' },
      refreshInterval: '1h',
      target,
      data: [{ secretKey: 'password', remoteRef: { key: 'team-a/db', property: 'password' } }],
    },
  };
}

const getSecret = (name: string): Promise<SecretObj | undefined> => kube.get<SecretObj>(SECRETS, name, 'team-a');

void describe('ExternalSecret controller over a label-selected Secret cache', () => {
  void test('the Secret cache holds only managed Secrets', async () => {
    await kube.create(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'unrelated', namespace: 'team-a' },
      data: { x: b64('y') },
    });
    await kube.create(EXTERNAL_SECRETS, externalSecret('owned', {}));
    await until(() => app.manager.cache(SECRETS).get('team-a/owned') !== undefined, 'the owned Secret in the cache');
    assert.equal(app.manager.cache(SECRETS).get('team-a/unrelated'), undefined);
    assert.equal(
      app.manager.status().informers.find((i) => i.resource === 'core/v1/secrets')?.labelSelector,
      MANAGED_SECRETS_SELECTOR,
    );
    // An owned Secret deleted by hand is recreated: the delete of a labelled Secret is watched.
    await kube.delete(SECRETS, 'owned', 'team-a');
    await until(async () => text(await getSecret('owned'), 'password') === 'from-vault', 'the owned Secret recreated');
  });

  void test('creationPolicy Merge: an unlabelled target is read with a GET, merged into and labelled; hand edits are repaired', async () => {
    await kube.create(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app-config', namespace: 'team-a' },
      data: { keep: b64('mine') },
    });
    await kube.create(EXTERNAL_SECRETS, externalSecret('merge', { name: 'app-config', creationPolicy: 'Merge' }));
    await until(async () => text(await getSecret('app-config'), 'password') === 'from-vault', 'the merged key');
    let s = await getSecret('app-config');
    assert.equal(text(s, 'keep'), 'mine', 'keys of others are kept');
    assert.equal(s?.metadata.labels?.[LABEL_MANAGED], 'true');
    await until(
      () => app.manager.cache(SECRETS).get('team-a/app-config') !== undefined,
      'the Merge target in the cache',
    );

    // A hand edit of the merged key: seen through the watch, repaired.
    await kube.patch(SECRETS, 'app-config', 'team-a', { data: { password: b64('tampered') } }, 'merge');
    await until(
      async () => text(await getSecret('app-config'), 'password') === 'from-vault',
      'the edited key repaired',
    );

    // The label removed by hand (the Secret leaves the cache): it is put back, so later edits are seen again.
    await kube.patch(SECRETS, 'app-config', 'team-a', { metadata: { labels: { [LABEL_MANAGED]: null } } }, 'merge');
    await until(
      async () => (await getSecret('app-config'))?.metadata.labels?.[LABEL_MANAGED] === 'true',
      'the managed label restored',
    );
    await until(
      () => app.manager.cache(SECRETS).get('team-a/app-config') !== undefined,
      'the Merge target back in the cache',
    );
    await kube.patch(SECRETS, 'app-config', 'team-a', { data: { password: b64('tampered-again') } }, 'merge');
    await until(
      async () => text(await getSecret('app-config'), 'password') === 'from-vault',
      'the second edit repaired',
    );
    s = await getSecret('app-config');
    assert.equal(text(s, 'keep'), 'mine');
    assert.ok(s?.metadata.annotations?.[ANNOTATION_DATA_HASH], 'the data hash is recorded');

    // The target deleted: the ExternalSecret says so (Merge never creates it).
    await kube.delete(SECRETS, 'app-config', 'team-a');
    await until(
      async () => readyOf(await kube.get(EXTERNAL_SECRETS, 'merge', 'team-a'))?.status === 'False',
      'Ready=False',
    );
    assert.match(
      readyOf(await kube.get(EXTERNAL_SECRETS, 'merge', 'team-a'))?.message ?? '',
      /app-config does not exist/,
    );
    assert.equal(await getSecret('app-config'), undefined);
  });
});
