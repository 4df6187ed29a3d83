// The Secret's metadata is ESO's (so a Secret ESO wrote is taken over without a rewrite), and Events are
// only for what a user should look at: no Event for a routine sync. The expected hashes were computed with
// Go (crypto/sha3 over fmt.Sprintf("%+v", …), ESO's utils.ObjectHash), not with the code under test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../kube/objects.ts';
import { SECRET_STORES } from '../../../schemas/resources.ts';
import { ANNOTATION_DATA_HASH, ANNOTATION_FORCE_SYNC, LABEL_CREATED_BY, LABEL_MANAGED } from '../../../eso/target.ts';
import { readyOf } from './harness.ts';
import { EXTERNAL_SECRETS, SECRETS, startVault, stopVault, world as newWorld, type Vault } from './eso-world.ts';

/** Go: sha3.Sum224(fmt.Sprintf("%+v", map[string][]byte{"password": "s3cr3t-Passw0rd", "username": "admin-user-xyz"})) */
const ESO_HASH_OF_DB = 'f7967ba3033a299c432429901e594c195cd265de29a16a6d1fb23022';
/** Go: sha3.Sum224("team-a/app") */
const ESO_CREATED_BY_TEAM_A_APP = 'c95ab3945b22b5a0ca794e8ae4509f00cea935954bd860ac3ce1ea15';

let vault: Vault;

void before(async () => {
  vault = await startVault();
  await vault.kv.write('team-a/db', { username: 'admin-user-xyz', password: 's3cr3t-Passw0rd' });
});
void after(() => stopVault(vault));

const world = (): ReturnType<typeof newWorld> => newWorld(vault);

function externalSecret(
  spec: Record<string, unknown>,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
  name = 'app',
): KubeObject {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { name, namespace: 'team-a', ...meta },
    spec: {
      secretStoreRef: { name: 'vault', kind: 'SecretStore' },
      refreshInterval: '1h',
      dataFrom: [{ extract: { key: 'team-a/db' } }],
      ...spec,
    },
  };
}

void describe("the Secret's metadata is ESO's", () => {
  void test("ESO's data hash and created-by label; without a template the ExternalSecret's labels and annotations are copied, force-sync aside", async () => {
    const { kube, es } = await world();
    kube.put(
      EXTERNAL_SECRETS,
      externalSecret(
        {},
        { labels: { app: 'billing' }, annotations: { owner: 'team-a', [ANNOTATION_FORCE_SYNC]: '1' } },
      ),
    );
    await kube.reconcile(es, 'team-a/app');
    const s = kube.getObj(SECRETS, 'team-a/app')!;
    assert.equal(s.metadata.annotations?.[ANNOTATION_DATA_HASH], ESO_HASH_OF_DB);
    assert.equal(s.metadata.labels?.[LABEL_CREATED_BY], ESO_CREATED_BY_TEAM_A_APP);
    assert.equal(s.metadata.labels?.[LABEL_MANAGED], 'true');
    assert.equal(s.metadata.labels?.app, 'billing');
    assert.equal(s.metadata.annotations?.owner, 'team-a');
    assert.equal(
      s.metadata.annotations?.[ANNOTATION_FORCE_SYNC],
      undefined,
      'the force-sync trigger is not copied (a forced refresh would rewrite every Secret)',
    );
  });

  void test("with a template, the template's metadata and not the ExternalSecret's; no created-by label unless Owner", async () => {
    const { kube, es } = await world();
    kube.put(
      EXTERNAL_SECRETS,
      externalSecret(
        {
          target: {
            creationPolicy: 'Orphan',
            template: { metadata: { labels: { tier: 'db' } }, data: { dsn: '{{ .username }}@db' } },
          },
        },
        { labels: { app: 'billing' } },
      ),
    );
    await kube.reconcile(es, 'team-a/app');
    const s = kube.getObj(SECRETS, 'team-a/app')!;
    assert.equal(s.metadata.labels?.tier, 'db');
    assert.equal(s.metadata.labels?.app, undefined);
    assert.equal(
      s.metadata.labels?.[LABEL_CREATED_BY],
      undefined,
      'Orphan Secrets carry no created-by label (ESO deletes Secrets by it)',
    );
    // The one label of vaultgate's own: which ExternalSecret an Orphan Secret was created for (its uid).
    assert.deepEqual(Object.keys(s.metadata.labels ?? {}).sort(), [
      'reconcile.external-secrets.io/managed',
      'tier',
      'vaultgate.io/created-for',
    ]);
    assert.equal(
      s.metadata.labels?.['vaultgate.io/created-for'],
      kube.getObj(EXTERNAL_SECRETS, 'team-a/app')?.metadata.uid,
    );
  });

  void test("status holds only the fields ESO's CRD declares (with ESO's CRDs installed the apiserver refuses others)", async () => {
    // ESO v0.16.2 deploy/crds/bundle.yaml: ExternalSecret status and condition properties.
    const statusFields = ['binding', 'conditions', 'refreshTime', 'syncedResourceVersion'];
    const conditionFields = ['lastTransitionTime', 'message', 'reason', 'status', 'type'];
    const { kube, es } = await world();
    kube.put(EXTERNAL_SECRETS, externalSecret({}));
    await kube.reconcile(es, 'team-a/app');
    kube.put(EXTERNAL_SECRETS, externalSecret({ target: { name: 'absent', creationPolicy: 'Merge' } }));
    await kube.reconcile(es, 'team-a/app');
    const st = kube.getObj(EXTERNAL_SECRETS, 'team-a/app')!.status as Record<string, unknown> & {
      conditions: Array<Record<string, unknown>>;
    };
    assert.deepEqual(
      Object.keys(st).filter((k) => !statusFields.includes(k)),
      [],
    );
    assert.deepEqual(
      st.conditions.flatMap((c) => Object.keys(c)).filter((k) => !conditionFields.includes(k)),
      [],
    );
    assert.equal(
      readyOf(kube.getObj(EXTERNAL_SECRETS, 'team-a/app'))?.reason,
      'SecretMissing',
      "ESO's reason for a missing Merge target",
    );
    const store = kube.getObj(SECRET_STORES, 'team-a/vault')!.status as Record<string, unknown> & {
      conditions: Array<Record<string, unknown>>;
    };
    assert.deepEqual(
      Object.keys(store).filter((k) => !['capabilities', 'conditions'].includes(k)),
      [],
    );
    assert.deepEqual(
      store.conditions.flatMap((c) => Object.keys(c)).filter((k) => !conditionFields.includes(k)),
      [],
    );
  });

  void test('a Secret exactly as ESO wrote it is taken over without a write', async () => {
    const { kube, es } = await world();
    const obj = kube.put(EXTERNAL_SECRETS, externalSecret({}));
    kube.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: {
        name: 'app',
        namespace: 'team-a',
        labels: { [LABEL_MANAGED]: 'true', [LABEL_CREATED_BY]: ESO_CREATED_BY_TEAM_A_APP },
        annotations: { [ANNOTATION_DATA_HASH]: ESO_HASH_OF_DB },
        ownerReferences: [
          {
            apiVersion: 'external-secrets.io/v1',
            kind: 'ExternalSecret',
            name: 'app',
            uid: obj.metadata.uid!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      data: {
        password: Buffer.from('s3cr3t-Passw0rd').toString('base64'),
        username: Buffer.from('admin-user-xyz').toString('base64'),
      },
    });
    kube.takeWrites();
    await kube.reconcile(es, 'team-a/app');
    assert.equal(readyOf(kube.getObj(EXTERNAL_SECRETS, 'team-a/app'))?.reason, 'SecretSynced');
    assert.deepEqual(
      kube.takeWrites().filter((w) => w.includes('secrets') && !w.includes('externalsecrets')),
      [],
    );
  });
});

void describe('Events', () => {
  void test('none for a routine sync or a changed value from Vault; one when a hand-edited Secret is repaired', async () => {
    const { kube, es } = await world();
    kube.put(EXTERNAL_SECRETS, externalSecret({}));
    await kube.reconcile(es, 'team-a/app');
    assert.equal(kube.getObj(SECRETS, 'team-a/app')?.metadata.name, 'app');
    await vault.kv.write('team-a/db', { username: 'admin-user-xyz', password: 'rotated' });
    kube.put(EXTERNAL_SECRETS, externalSecret({}, { annotations: { [ANNOTATION_FORCE_SYNC]: '2' } }));
    await kube.reconcile(es, 'team-a/app');
    assert.equal(
      Buffer.from(
        (kube.getObj(SECRETS, 'team-a/app') as unknown as { data: Record<string, string> }).data.password ?? '',
        'base64',
      ).toString(),
      'rotated',
    );
    assert.ok(
      kube.events.length === 0,
      `no Event for a create or an update from Vault: ${JSON.stringify(kube.events)}`,
    );

    const s = kube.getObj(SECRETS, 'team-a/app') as KubeObject & { data: Record<string, string> };
    kube.put(SECRETS, { ...s, data: { ...s.data, password: Buffer.from('edited').toString('base64') } });
    kube.put(EXTERNAL_SECRETS, externalSecret({}, { annotations: { [ANNOTATION_FORCE_SYNC]: '2' } }));
    await kube.reconcile(es, 'team-a/app');
    assert.deepEqual(
      kube.events.map((e): string => e.reason),
      ['Repaired'],
      'one Event',
    );
    assert.ok(!JSON.stringify(kube.events).includes('rotated'), 'the Event names no value');
    await vault.kv.write('team-a/db', { username: 'admin-user-xyz', password: 's3cr3t-Passw0rd' });
  });
});

void describe('a force-sync request', () => {
  void test('ExternalSecrets force-synced by one request share its fresh reads: one read per identity and path, every Secret new', async () => {
    const { kube, es } = await world();
    const names = Array.from({ length: 5 }, (_, i) => `fs-${i}`);
    for (const n of names) kube.put(EXTERNAL_SECRETS, externalSecret({}, {}, n));
    for (const n of names) await kube.reconcile(es, `team-a/${n}`);
    await vault.kv.write('team-a/db', { username: 'admin-user-xyz', password: 'rotated-by-hand' });
    const reads = (): number => vault.sim.count('read', 'secret/data/team-a/db');
    const before = reads();
    // One `kubectl annotate --all`: the same value on all; reconciled one after another (no in-flight sharing).
    for (const n of names)
      kube.put(EXTERNAL_SECRETS, externalSecret({}, { annotations: { [ANNOTATION_FORCE_SYNC]: 'request-1' } }, n));
    for (const n of names) await kube.reconcile(es, `team-a/${n}`);
    assert.equal(reads() - before, 1, 'one read for the request, not one per ExternalSecret');
    for (const n of names)
      assert.equal(
        Buffer.from(
          (kube.getObj(SECRETS, `team-a/${n}`) as unknown as { data: Record<string, string> }).data.password ?? '',
          'base64',
        ).toString(),
        'rotated-by-hand',
      );
    // Another request is fresh again, whatever was read for the first one.
    await vault.kv.write('team-a/db', { username: 'admin-user-xyz', password: 'rotated-again' });
    kube.put(EXTERNAL_SECRETS, externalSecret({}, { annotations: { [ANNOTATION_FORCE_SYNC]: 'request-2' } }, 'fs-0'));
    await kube.reconcile(es, 'team-a/fs-0');
    assert.equal(reads() - before, 2);
    assert.equal(
      Buffer.from(
        (kube.getObj(SECRETS, 'team-a/fs-0') as unknown as { data: Record<string, string> }).data.password ?? '',
        'base64',
      ).toString(),
      'rotated-again',
    );
    await vault.kv.write('team-a/db', { username: 'admin-user-xyz', password: 's3cr3t-Passw0rd' });
  });
});
