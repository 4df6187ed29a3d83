import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { VaultSim } from '../../sim/vault.ts';
import { createVaultClient } from '../../../vault/client.ts';
import { createSysApi } from '../../../vault/sys.ts';
import { createKvApi } from '../../../vault/kv.ts';
import { TokenCache } from '../../../vault/token-cache.ts';
import type { KvApi, VaultClient, VaultRequest, VaultRequester } from '../../../vault/types.ts';
import { NAMESPACES, SECRETS } from '../../../kube/resources.ts';
import { CLUSTER_SECRET_STORES, EXTERNAL_SECRETS, SECRET_STORES } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { StoreConnector } from '../../../controller/reconcilers/store-connector.ts';
import { CoalescingKvReader } from '../../../controller/reconcilers/kv-reader.ts';
import { createSecretStoreReconciler } from '../../../controller/reconcilers/secretstore.ts';
import { createExternalSecretReconciler } from '../../../controller/reconcilers/externalsecret.ts';
import { ANNOTATION_DATA_HASH, LABEL_MANAGED } from '../../../eso/target.ts';
import { FakeKube, readyOf } from './harness.ts';

const SECRET_VALUES = ['s3cr3t-Passw0rd', 'admin-user-xyz', 'api-t0ken-123'];

let sim: VaultSim;
let root: VaultClient;
let kv: KvApi;

function asRoot(c: VaultClient, token: string): VaultRequester {
  return { request: <T>(req: VaultRequest) => c.request<T>({ ...req, token }) };
}

void before(async () => {
  sim = await VaultSim.start();
  root = createVaultClient({ address: sim.addr, timeoutMs: 2000 });
  const sys = createSysApi(asRoot(root, sim.rootToken));
  await sys.writePolicy(
    'team-a-read',
    'path "secret/data/team-a/*" { capabilities = ["read"] }\npath "secret/metadata/team-a/*" { capabilities = ["read", "list"] }\n',
  );
  await sys.writeKubernetesRole('kubernetes', 'app', {
    bound_service_account_names: ['vault-reader'],
    bound_service_account_namespaces: ['team-a', 'team-b'],
    token_policies: ['team-a-read'],
    audience: 'vault',
    token_ttl: 3600,
    token_max_ttl: 7200,
  });
  kv = createKvApi(asRoot(root, sim.rootToken), { mount: 'secret', version: 2 });
});
void after(async () => {
  root.close();
  await sim.stop();
});

interface World {
  kube: FakeKube;
  connector: StoreConnector;
  tokens: TokenCache;
  reader: CoalescingKvReader;
  store: ReturnType<typeof createSecretStoreReconciler>;
  css: ReturnType<typeof createSecretStoreReconciler>;
  es: ReturnType<typeof createExternalSecretReconciler>;
}

function world(): World {
  const kube = new FakeKube();
  kube.tokenFor = (ns, sa, opts) => sim.jwtFor(ns, sa, { audiences: opts?.audiences });
  const tokens = new TokenCache({ revokeOnEvict: false });
  const connector = new StoreConnector({ client: kube, tokens, timeoutMs: 2000 });
  const reader = new CoalescingKvReader();
  const common = { connector, controllerClass: '', namePrefix: 'vaultgate' };
  return {
    kube,
    connector,
    tokens,
    reader,
    store: createSecretStoreReconciler({ ...common, kind: 'SecretStore' }),
    css: createSecretStoreReconciler({ ...common, kind: 'ClusterSecretStore' }),
    es: createExternalSecretReconciler({ ...common, reader }),
  };
}

function storeSpec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    provider: {
      vault: {
        server: sim.addr,
        path: 'secret',
        version: 'v2',
        auth: {
          kubernetes: {
            mountPath: 'kubernetes',
            role: 'app',
            serviceAccountRef: { name: 'vault-reader', ...(extra.saNamespace ? { namespace: extra.saNamespace } : {}) },
          },
        },
      },
    },
    ...(extra.conditions ? { conditions: extra.conditions } : {}),
    ...(extra.controller ? { controller: extra.controller } : {}),
  };
}

function externalSecret(
  name: string,
  spec: Record<string, unknown>,
  ns = 'team-a',
  annotations?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
    spec: { secretStoreRef: { name: 'vault', kind: 'SecretStore' }, refreshInterval: '1h', ...spec },
  };
}

async function setup(w: World, ns = 'team-a'): Promise<void> {
  w.kube.put(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns, labels: { 'kubernetes.io/metadata.name': ns } },
  });
  w.kube.put(SECRET_STORES, {
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: { name: 'vault', namespace: ns },
    spec: storeSpec(),
  });
  await w.kube.reconcile(w.store, `${ns}/vault`);
}

function secretData(w: World, key: string): Record<string, string> | undefined {
  const s = w.kube.getObj(SECRETS, key) as { data?: Record<string, string> } | undefined;
  return s?.data
    ? Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]))
    : undefined;
}

void describe('SecretStore reconciler', () => {
  void test('authenticates as the referenced service account (TokenRequest), Ready=Valid, ReadOnly', async () => {
    const w = world();
    await setup(w);
    const store = w.kube.getObj(SECRET_STORES, 'team-a/vault');
    assert.equal(readyOf(store)?.reason, 'Valid');
    assert.equal((store?.status as { capabilities?: string }).capabilities, 'ReadOnly');
    // The first TokenRequest (no audience) only tells the apiserver's own audiences (kube/api-audiences.ts);
    // the store's token carries "vault", the default when the store names none.
    assert.deepEqual(w.kube.tokenRequests, ['team-a/vault-reader', 'team-a/vault-reader']);
    assert.deepEqual(w.kube.tokenAudiences, [[], ['vault']]);
  });

  void test('a store without serviceAccountRef or secretRef is refused: never the controller identity', async () => {
    const w = world();
    w.kube.put(SECRET_STORES, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: 'bad', namespace: 'team-a' },
      spec: { provider: { vault: { server: sim.addr, path: 'secret', auth: { kubernetes: { role: 'app' } } } } },
    });
    await w.kube.reconcile(w.store, 'team-a/bad');
    const ready = readyOf(w.kube.getObj(SECRET_STORES, 'team-a/bad'));
    assert.equal(ready?.status, 'False');
    assert.ok(['InvalidProviderConfig', 'InvalidStoreConfiguration'].includes(ready?.reason ?? ''), ready?.reason);
    assert.deepEqual(w.kube.tokenRequests, []);
  });

  void test('a wrong role fails validation with ValidationFailed', async () => {
    const w = world();
    const spec = storeSpec() as { provider: { vault: { auth: { kubernetes: { role: string } } } } };
    spec.provider.vault.auth.kubernetes.role = 'nope';
    w.kube.put(SECRET_STORES, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: 'v2', namespace: 'team-a' },
      spec,
    });
    await w.kube.reconcile(w.store, 'team-a/v2').catch(() => undefined);
    assert.equal(readyOf(w.kube.getObj(SECRET_STORES, 'team-a/v2'))?.reason, 'ValidationFailed');
  });
});

void describe('ExternalSecret reconciler', () => {
  void beforeEach(async () => {
    sim.clearFaults();
    await kv.write('team-a/db', { username: 'admin-user-xyz', password: 's3cr3t-Passw0rd', nested: { port: 5432 } });
    await kv.write('team-a/api', { token: 'api-t0ken-123' });
  });

  void test('syncs data and dataFrom into an owned Secret; a second reconcile writes nothing', async () => {
    const w = world();
    await setup(w);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('app', {
        data: [
          { secretKey: 'db-password', remoteRef: { key: 'team-a/db', property: 'password' } },
          { secretKey: 'port', remoteRef: { key: 'team-a/db', property: 'nested.port' } },
        ],
        dataFrom: [{ extract: { key: 'team-a/api' } }],
      }),
    );
    const res = await w.kube.reconcile(w.es, 'team-a/app');
    assert.ok(res.requeueAfterMs && res.requeueAfterMs > 3_000_000, 'next refresh in about an hour');
    assert.deepEqual(secretData(w, 'team-a/app'), {
      'db-password': 's3cr3t-Passw0rd',
      port: '5432',
      token: 'api-t0ken-123',
    });
    const secret = w.kube.getObj(SECRETS, 'team-a/app')!;
    assert.equal(secret.metadata.labels?.[LABEL_MANAGED], 'true');
    assert.ok(secret.metadata.annotations?.[ANNOTATION_DATA_HASH]);
    assert.equal(secret.metadata.ownerReferences?.[0]?.kind, 'ExternalSecret');
    assert.equal(secret.metadata.ownerReferences?.[0]?.controller, true);
    const es = w.kube.getObj(EXTERNAL_SECRETS, 'team-a/app')!;
    const st = es.status as { refreshTime?: string; syncedResourceVersion?: string; binding?: { name?: string } };
    assert.equal(readyOf(es)?.reason, 'SecretSynced');
    assert.ok(st.refreshTime && st.syncedResourceVersion);
    assert.equal(st.binding?.name, 'app');
    w.kube.takeWrites();
    sim.resetCounts();
    await w.kube.reconcile(w.es, 'team-a/app');
    assert.deepEqual(w.kube.takeWrites(), []);
    assert.equal(sim.count('read'), 0);
    assert.equal(sim.loginCount(), 0);
  });

  void test('template, hand-edit repair and force-sync', async () => {
    const w = world();
    await setup(w);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('tpl', {
        dataFrom: [{ extract: { key: 'team-a/db' } }],
        target: {
          template: {
            type: 'kubernetes.io/basic-auth',
            data: { dsn: 'postgres://{{ .username }}:{{ .password }}@db:{{ (.nested | fromJson).port }}' },
          },
        },
      }),
    );
    await w.kube.reconcile(w.es, 'team-a/tpl');
    assert.deepEqual(secretData(w, 'team-a/tpl'), { dsn: 'postgres://admin-user-xyz:s3cr3t-Passw0rd@db:5432' });
    assert.equal((w.kube.getObj(SECRETS, 'team-a/tpl') as { type?: string }).type, 'kubernetes.io/basic-auth');
    // Someone edits the Secret by hand: the data no longer matches its hash → repaired.
    const edited = w.kube.getObj(SECRETS, 'team-a/tpl')!;
    w.kube.put(SECRETS, { ...edited, data: { dsn: Buffer.from('tampered').toString('base64'), extra: 'eA==' } });
    await w.kube.reconcile(w.es, 'team-a/tpl');
    assert.deepEqual(secretData(w, 'team-a/tpl'), { dsn: 'postgres://admin-user-xyz:s3cr3t-Passw0rd@db:5432' });
    // Vault changes; force-sync fetches fresh data at once (no cache reuse).
    await kv.write('team-a/db', { username: 'admin-user-xyz', password: 'rotated-pw', nested: { port: 5432 } });
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('tpl', w.kube.getObj(EXTERNAL_SECRETS, 'team-a/tpl')!.spec as Record<string, unknown>, 'team-a', {
        'external-secrets.io/force-sync': '1',
      }),
    );
    await w.kube.reconcile(w.es, 'team-a/tpl');
    assert.match(secretData(w, 'team-a/tpl')?.dsn ?? '', /rotated-pw/);
  });

  void test('Vault failure keeps the last good data; status says what failed without values', async () => {
    const w = world();
    await setup(w);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('keep', { data: [{ secretKey: 'pw', remoteRef: { key: 'team-a/db', property: 'password' } }] }),
    );
    await w.kube.reconcile(w.es, 'team-a/keep');
    const before = w.kube.getObj(SECRETS, 'team-a/keep');
    sim.inject({ path: 'secret/data/team-a/db', status: 503, errors: ['Vault is sealed'] });
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret(
        'keep',
        w.kube.getObj(EXTERNAL_SECRETS, 'team-a/keep')!.spec as Record<string, unknown>,
        'team-a',
        { 'external-secrets.io/force-sync': 'x' },
      ),
    );
    await assert.rejects(w.kube.reconcile(w.es, 'team-a/keep'));
    assert.deepEqual(w.kube.getObj(SECRETS, 'team-a/keep'), before);
    const ready = readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/keep'));
    assert.equal(ready?.reason, 'SecretSyncedError');
    assert.match(ready?.message ?? '', /sealed|unavailable|503/i);
    assert.ok(w.kube.events.some((e) => e.reason === 'UpdateFailed'));
  });

  void test('creationPolicy matrix: Orphan, Merge (existing / missing), None', async () => {
    const w = world();
    await setup(w);
    const data = [{ secretKey: 'pw', remoteRef: { key: 'team-a/db', property: 'password' } }];
    w.kube.put(EXTERNAL_SECRETS, externalSecret('orphan', { data, target: { creationPolicy: 'Orphan' } }));
    await w.kube.reconcile(w.es, 'team-a/orphan');
    assert.equal(w.kube.getObj(SECRETS, 'team-a/orphan')?.metadata.ownerReferences, undefined);
    assert.equal(secretData(w, 'team-a/orphan')?.pw, 's3cr3t-Passw0rd');

    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('merge', { data, target: { creationPolicy: 'Merge', name: 'existing' } }),
    );
    await w.kube.reconcile(w.es, 'team-a/merge');
    assert.equal(w.kube.getObj(SECRETS, 'team-a/existing'), undefined, 'Merge never creates');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/merge'))?.status, 'False');
    w.kube.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'existing', namespace: 'team-a' },
      data: { mine: Buffer.from('keep-me').toString('base64') },
    });
    await w.kube.reconcile(w.es, 'team-a/merge');
    assert.deepEqual(secretData(w, 'team-a/existing'), { mine: 'keep-me', pw: 's3cr3t-Passw0rd' });
    assert.equal(w.kube.getObj(SECRETS, 'team-a/existing')?.metadata.ownerReferences, undefined);

    w.kube.put(EXTERNAL_SECRETS, externalSecret('none', { data, target: { creationPolicy: 'None' } }));
    await w.kube.reconcile(w.es, 'team-a/none');
    assert.equal(w.kube.getObj(SECRETS, 'team-a/none'), undefined);
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/none'))?.status, 'True');
  });

  void test('deletionPolicy: Retain keeps the Secret and reports; Delete removes the owned Secret', async () => {
    const w = world();
    await setup(w);
    await kv.write('team-a/tmp', { v: 'x' });
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('retain', { data: [{ secretKey: 'v', remoteRef: { key: 'team-a/tmp', property: 'v' } }] }),
    );
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('delete', {
        data: [{ secretKey: 'v', remoteRef: { key: 'team-a/tmp', property: 'v' } }],
        target: { deletionPolicy: 'Delete' },
      }),
    );
    await w.kube.reconcile(w.es, 'team-a/retain');
    await w.kube.reconcile(w.es, 'team-a/delete');
    await kv.deleteAll('team-a/tmp');
    for (const n of ['retain', 'delete']) {
      const es = w.kube.getObj(EXTERNAL_SECRETS, `team-a/${n}`)!;
      w.kube.put(EXTERNAL_SECRETS, {
        ...es,
        metadata: { ...es.metadata, annotations: { 'external-secrets.io/force-sync': 'now' } },
      });
      await w.kube.reconcile(w.es, `team-a/${n}`).catch(() => undefined);
    }
    assert.equal(secretData(w, 'team-a/retain')?.v, 'x');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/retain'))?.reason, 'SecretSyncedError');
    assert.equal(w.kube.getObj(SECRETS, 'team-a/delete'), undefined);
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/delete'))?.reason, 'SecretDeleted');
  });

  void test('ClusterSecretStore conditions are enforced per namespace', async () => {
    const w = world();
    for (const ns of ['team-a', 'team-b'])
      w.kube.put(NAMESPACES, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: ns, labels: { tier: ns === 'team-b' ? 'gold' : 'bronze' } },
      });
    w.kube.put(CLUSTER_SECRET_STORES, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'ClusterSecretStore',
      metadata: { name: 'shared' },
      spec: storeSpec({ conditions: [{ namespaceSelector: { matchLabels: { tier: 'gold' } } }] }),
    });
    await w.kube.reconcile(w.css, 'shared');
    assert.equal(readyOf(w.kube.getObj(CLUSTER_SECRET_STORES, 'shared'))?.reason, 'ValidationUnknown');
    const spec = {
      secretStoreRef: { name: 'shared', kind: 'ClusterSecretStore' },
      data: [{ secretKey: 'pw', remoteRef: { key: 'team-a/db', property: 'password' } }],
    };
    w.kube.put(EXTERNAL_SECRETS, externalSecret('x', spec, 'team-a'));
    w.kube.put(EXTERNAL_SECRETS, externalSecret('x', spec, 'team-b'));
    await w.kube.reconcile(w.es, 'team-a/x');
    await w.kube.reconcile(w.es, 'team-b/x');
    assert.match(
      readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/x'))?.message ?? '',
      /does not allow namespace team-a/,
    );
    assert.equal(w.kube.getObj(SECRETS, 'team-a/x'), undefined);
    assert.equal(secretData(w, 'team-b/x')?.pw, 's3cr3t-Passw0rd');
    assert.deepEqual(
      w.kube.tokenRequests,
      ['team-b/vault-reader', 'team-b/vault-reader'],
      'referent auth: the service account of the ExternalSecret namespace (audience discovery, then the token)',
    );
  });

  void test('reads of one path by many ExternalSecrets are coalesced; one login per identity', async () => {
    const w = world();
    await setup(w);
    sim.resetCounts();
    for (let i = 0; i < 10; i++)
      w.kube.put(
        EXTERNAL_SECRETS,
        externalSecret(`c${i}`, { data: [{ secretKey: 'pw', remoteRef: { key: 'team-a/db', property: 'password' } }] }),
      );
    await Promise.all(Array.from({ length: 10 }, (_, i) => w.kube.reconcile(w.es, `team-a/c${i}`)));
    assert.equal(sim.count('read', 'secret/data/team-a/db'), 1);
    assert.equal(sim.loginCount(), 0, 'the store check already logged in');
  });

  void test('stores of another controller class are ignored', async () => {
    const w = world();
    w.kube.put(SECRET_STORES, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: 'vault', namespace: 'team-a' },
      spec: storeSpec({ controller: 'other-eso' }),
    });
    await w.kube.reconcile(w.store, 'team-a/vault');
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('ignored', { data: [{ secretKey: 'pw', remoteRef: { key: 'team-a/db', property: 'password' } }] }),
    );
    await w.kube.reconcile(w.es, 'team-a/ignored');
    assert.equal(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/ignored')?.status, undefined);
    assert.equal(w.kube.getObj(SECRET_STORES, 'team-a/vault')?.status, undefined);
    assert.deepEqual(w.kube.writes, []);
  });

  void test('no secret value appears in statuses, events or logs', async () => {
    const w = world();
    await setup(w);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('leak', {
        dataFrom: [{ extract: { key: 'team-a/db' } }, { extract: { key: 'team-a/api' } }],
        target: { template: { data: { x: '{{ .password }}{{ .missing }}' } } },
      }),
    );
    await w.kube.reconcile(w.es, 'team-a/leak').catch(() => undefined);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('leak2', {
        data: [{ secretKey: 'a', remoteRef: { key: 'team-a/db', property: 'password', decodingStrategy: 'Base64' } }],
      }),
    );
    await w.kube.reconcile(w.es, 'team-a/leak2').catch(() => undefined);
    const statuses = JSON.stringify(
      [...w.kube.cacheOf(EXTERNAL_SECRETS).list(), ...w.kube.cacheOf(SECRET_STORES).list()].map((o) => o.status),
    );
    const events = JSON.stringify(w.kube.events);
    const logs = w.kube.logLines.join('\n');
    assert.match(statuses, /SecretSyncedError/);
    for (const v of [...SECRET_VALUES, Buffer.from(SECRET_VALUES[0]!).toString('base64')]) {
      assert.ok(!statuses.includes(v), `status leaks ${v}`);
      assert.ok(!events.includes(v), `event leaks ${v}`);
      assert.ok(!logs.includes(v), `log leaks ${v}`);
    }
  });
});
