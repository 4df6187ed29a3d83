// Issue #21.1 in the controller, with no webhook in front (bypassed or down): a PushSecret whose remote
// key climbs out of its namespace with `..` must not write or delete team-b's secret. The identity may
// write secret/* (a shared store), so only vaultgate's checks stand in the way: the admission re-check,
// the check of keys computed at sync (dataTo rewrites), and the Vault adapter.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { stopVault, type Vault } from './eso-world.ts';
import { KV2_STORE, pushReady, pushSecret, pushWorld, type PushWorld, rootOf, startPushVault } from './push-world.ts';
import { createKvApi } from '../../../vault/kv.ts';
import { PUSH_SECRETS } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { PUSH_FINALIZER } from '../../../eso/push.ts';

let v: Vault;
const kv2 = () => createKvApi(rootOf(v), { mount: 'secret', version: 2 });
before(async () => {
  // The identity may write anywhere under secret/, team-b's part included.
  v = await startPushVault([KV2_STORE]);
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

const world = (): PushWorld =>
  pushWorld(v, [KV2_STORE], { password: 'attacker-chosen', doc: '{"password":"attacker-chosen"}' });
const ps = (name: string, spec: Record<string, unknown>, extra: Partial<KubeObject> = {}): KubeObject =>
  pushSecret(name, { deletionPolicy: 'Delete', ...spec }, extra);
const ready = pushReady;

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
