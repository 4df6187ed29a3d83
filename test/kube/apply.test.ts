import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyOwned } from '../../kube/apply.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { CONFIGMAPS } from '../../kube/resources.ts';
import { VAULT_POLICIES } from '../../schemas/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

const policy = (name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: 'default', ...extra },
  spec: { policy: 'p' },
});

test('owned objects get the managed-by label and a controller ownerReference', async () => {
  const kube = new FakeKubeClient();
  const owner = await kube.create(VAULT_POLICIES, policy('owner'));
  const cm = await applyOwned(
    kube,
    CONFIGMAPS,
    { metadata: { name: 'owned', namespace: 'default' }, data: { a: '1' } },
    { owner: { res: VAULT_POLICIES, obj: owner } },
  );
  assert.equal(cm.metadata.labels?.['app.kubernetes.io/managed-by'], 'vaultgate');
  assert.equal(cm.metadata.ownerReferences?.[0]?.uid, owner.metadata.uid);
  assert.equal(cm.metadata.ownerReferences?.[0]?.controller, true);
  await kube.delete(VAULT_POLICIES, 'owner', 'default');
  assert.equal(await kube.get(CONFIGMAPS, 'owned', 'default'), undefined, 'garbage-collected with its owner');
});
