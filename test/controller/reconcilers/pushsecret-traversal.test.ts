// Issue #21.1 in the controller, with no webhook in front (bypassed or down): a PushSecret whose remote
// key climbs out of its namespace with `..` must not write or delete team-b's secret. The identity may
// write secret/* (a shared store), so only vaultgate's checks stand in the way: the admission re-check,
// the check of keys computed at sync (dataTo rewrites), and the Vault adapter.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeKube } from './harness.ts';
import { startVault, stopVault, type Vault } from './eso-world.ts';
import { createSysApi } from '../../../vault/sys.ts';
import { createKvApi } from '../../../vault/kv.ts';
import { TokenCache } from '../../../vault/token-cache.ts';
import type { VaultRequest } from '../../../vault/types.ts';
import { NAMESPACES, SECRETS } from '../../../kube/resources.ts';
import { PUSH_SECRETS, SECRET_STORES } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { StoreConnector } from '../../../controller/reconcilers/store-connector.ts';
import { createPushSecretReconciler } from '../../../controller/reconcilers/pushsecret.ts';
import { PUSH_FINALIZER } from '../../../eso/push.ts';

let v: Vault;
const root = () => ({ request: <T>(req: VaultRequest) => v.root.request<T>({ ...req, token: v.sim.rootToken }) });
const kv2 = () => createKvApi(root(), { mount: 'secret', version: 2 });
before(async () => {
  v = await startVault();
  const sys = createSysApi(root());
  await sys.writePolicy(
    'pusher',
    'path "secret/*" { capabilities = ["create", "read", "update", "delete", "list"] }\n',
  );
  await sys.writeKubernetesRole('kubernetes', 'pusher', {
    bound_service_account_names: ['pusher'],
    bound_service_account_namespaces: ['team-a'],
    token_policies: ['pusher'],
    audience: 'vault',
    token_ttl: 3600,
  });
});
after(() => stopVault(v));

/** team-b's secret, marked as ESO-managed (so ESO's own rules would let a push overwrite it). */
async function teamBSecret(pushedBy = 'team-b/owner'): Promise<number> {
  await kv2().write('team-b/db', { password: 'team-b-own' });
  await kv2().writeMetadata('team-b/db', {
    customMetadata: { 'managed-by': 'external-secrets', 'vaultgate.io/pushed-by': pushedBy },
  });
  return (await kv2().readMetadata('team-b/db'))?.currentVersion ?? 0;
}

function world(): { kube: FakeKube; run: (name: string) => Promise<unknown> } {
  const kube = new FakeKube();
  kube.tokenFor = (ns, sa, opts) => v.sim.jwtFor(ns, sa, { audiences: opts?.audiences });
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
          auth: { kubernetes: { mountPath: 'kubernetes', role: 'pusher', serviceAccountRef: { name: 'pusher' } } },
        },
      },
    },
  });
  kube.put(SECRETS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'src', namespace: 'team-a' },
    data: {
      password: Buffer.from('attacker-chosen').toString('base64'),
      doc: Buffer.from('{"password":"attacker-chosen"}').toString('base64'),
    },
  });
  const connector = new StoreConnector({
    client: kube,
    tokens: new TokenCache({ revokeOnEvict: false }),
    timeoutMs: 2000,
  });
  const r = createPushSecretReconciler({ connector, controllerClass: '', namePrefix: 'vaultgate' });
  return { kube, run: (name) => kube.reconcile(r, `team-a/${name}`) };
}

const ps = (name: string, spec: Record<string, unknown>, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'external-secrets.io/v1alpha1',
  kind: 'PushSecret',
  metadata: { name, namespace: 'team-a' },
  spec: {
    refreshInterval: '1h',
    deletionPolicy: 'Delete',
    secretStoreRefs: [{ name: 'vault', kind: 'SecretStore' }],
    selector: { secret: { name: 'src' } },
    ...spec,
  },
  ...extra,
});
const ready = (kube: FakeKube, name: string) =>
  ((
    kube.getObj(PUSH_SECRETS, `team-a/${name}`)?.status as
      { conditions?: Array<{ reason: string; message: string }> } | undefined
  )?.conditions ?? [])[0];

async function assertTeamBUntouched(version: number, pushedBy = 'team-b/owner'): Promise<void> {
  assert.deepEqual((await kv2().read('team-b/db'))?.data, { password: 'team-b-own' });
  const meta = await kv2().readMetadata('team-b/db');
  assert.equal(meta?.currentVersion, version);
  assert.equal(meta?.customMetadata['vaultgate.io/pushed-by'], pushedBy);
}

test('remoteKey "team-a/../team-b/db" is refused by the controller itself: team-b\'s secret keeps its value and marker', async () => {
  const version = await teamBSecret();
  const w = world();
  w.kube.put(
    PUSH_SECRETS,
    ps('evil', {
      data: [
        { match: { secretKey: 'password', remoteRef: { remoteKey: 'team-a/../team-b/db', property: 'password' } } },
      ],
    }),
  );
  await w.run('evil');
  assert.equal(ready(w.kube, 'evil')?.reason, 'Errored');
  assert.match(ready(w.kube, 'evil')?.message ?? '', /remoteKey.*"\." or "\.\." segment.*rule eso\.ps\.vault-path/);
  await assertTeamBUntouched(version);
});

test('a remote key computed at sync (a dataTo rewrite) that climbs out is refused before Vault is asked', async () => {
  const version = await teamBSecret();
  const w = world();
  w.kube.put(
    PUSH_SECRETS,
    ps('rewrite', {
      dataTo: [
        {
          storeRef: { name: 'vault' },
          match: { regexp: '^doc$' },
          rewrite: [{ regexp: { source: '^doc$', target: 'team-a/../team-b/db' } }],
        },
      ],
    }),
  );
  await w.run('rewrite');
  assert.equal(ready(w.kube, 'rewrite')?.reason, 'Errored', JSON.stringify(ready(w.kube, 'rewrite')));
  assert.match(ready(w.kube, 'rewrite')?.message ?? '', /rule eso\.ps\.vault-path/);
  await assertTeamBUntouched(version);
});

test('deleting a PushSecret whose status lists a traversal key deletes nothing there, and lets the PushSecret go', async () => {
  // As if an earlier (pre-fix) push had taken the secret over: the marker names this PushSecret.
  const version = await teamBSecret('team-a/evil');
  const w = world();
  const spec = { data: [{ match: { secretKey: 'password', remoteRef: { remoteKey: 'team-a/../team-b/db' } } }] };
  w.kube.put(
    PUSH_SECRETS,
    ps('evil', spec, {
      metadata: { name: 'evil', namespace: 'team-a', finalizers: [PUSH_FINALIZER] },
      status: { syncedPushSecrets: { 'SecretStore/vault': { 'team-a/../team-b/db': spec.data[0] } } },
    }),
  );
  w.kube.remove(PUSH_SECRETS, 'team-a/evil');
  await w.run('evil');
  await assertTeamBUntouched(version, 'team-a/evil');
  assert.equal(w.kube.getObj(PUSH_SECRETS, 'team-a/evil'), undefined, 'the finalizer is removed');
});
