import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FINALIZER, withFinalizer } from '../../kube/finalizer.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { VAULT_POLICIES } from '../../schemas/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

const policy = (name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: 'default', ...extra },
  spec: { policy: 'p' },
});

test('adds the finalizer before acting, then runs apply', async () => {
  const kube = new FakeKubeClient();
  const obj = await kube.create(VAULT_POLICIES, policy('a'));
  let applied: KubeObject | undefined;
  const res = await withFinalizer(kube, VAULT_POLICIES, obj, {
    apply: (o) => {
      applied = o;
      return Promise.resolve({ requeueAfterMs: 5 });
    },
    cleanup: () => assert.fail('no cleanup while alive'),
  });
  assert.deepEqual(res, { requeueAfterMs: 5 });
  assert.deepEqual(applied?.metadata.finalizers, [FINALIZER], 'apply sees the object with the finalizer on');
  assert.deepEqual((await kube.get(VAULT_POLICIES, 'a', 'default'))?.metadata.finalizers, [FINALIZER]);
});

test('on deletion runs cleanup and removes only our finalizer', async () => {
  const kube = new FakeKubeClient();
  await kube.create(VAULT_POLICIES, policy('b', { finalizers: ['other.io/keep', FINALIZER] }));
  await kube.delete(VAULT_POLICIES, 'b', 'default');
  const deleting = (await kube.get(VAULT_POLICIES, 'b', 'default'))!;
  let cleaned = 0;
  await withFinalizer(kube, VAULT_POLICIES, deleting, {
    apply: () => assert.fail('no apply when deleting'),
    cleanup: () => {
      cleaned++;
      return Promise.resolve();
    },
  });
  assert.equal(cleaned, 1);
  assert.deepEqual((await kube.get(VAULT_POLICIES, 'b', 'default'))?.metadata.finalizers, ['other.io/keep']);
});

test('a failing cleanup keeps the finalizer (and the object)', async () => {
  const kube = new FakeKubeClient();
  await kube.create(VAULT_POLICIES, policy('c', { finalizers: [FINALIZER] }));
  await kube.delete(VAULT_POLICIES, 'c', 'default');
  const deleting = (await kube.get(VAULT_POLICIES, 'c', 'default'))!;
  await assert.rejects(
    withFinalizer(kube, VAULT_POLICIES, deleting, {
      apply: () => Promise.resolve({}),
      cleanup: () => Promise.reject(new Error('vault down')),
    }),
    /vault down/,
  );
  assert.deepEqual((await kube.get(VAULT_POLICIES, 'c', 'default'))?.metadata.finalizers, [FINALIZER]);
});

test('a stale object (409) requeues; a vanished one (404) is done', async () => {
  const kube = new FakeKubeClient();
  const stale = await kube.create(VAULT_POLICIES, policy('d'));
  await kube.patch(VAULT_POLICIES, 'd', 'default', { metadata: { labels: { moved: 'on' } } }, 'merge');
  const res = await withFinalizer(kube, VAULT_POLICIES, stale, {
    apply: () => assert.fail('not with a stale object'),
    cleanup: () => Promise.resolve(),
  });
  assert.ok(res.requeueAfterMs !== undefined, 'requeued');
  assert.equal((await kube.get(VAULT_POLICIES, 'd', 'default'))?.metadata.finalizers, undefined, 'nothing clobbered');
  const gone = await kube.create(VAULT_POLICIES, policy('e'));
  await kube.delete(VAULT_POLICIES, 'e', 'default');
  assert.deepEqual(
    await withFinalizer(kube, VAULT_POLICIES, gone, {
      apply: () => Promise.resolve({}),
      cleanup: () => Promise.resolve(),
    }),
    {},
  );
});
