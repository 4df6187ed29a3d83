// An existing Secret is not ours to take (issue #12 item 5): with creationPolicy Owner or Orphan, a
// target Secret vaultgate did not create is left untouched (no key nulled, no ownerReference added)
// and the ExternalSecret says why, unless it carries vaultgate.io/adopt-secret: "true".
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readyOf } from './harness.ts';
import {
  EXTERNAL_SECRETS,
  SECRETS,
  externalSecret,
  secretData,
  startVault,
  stopVault,
  world,
  type Vault,
} from './eso-world.ts';

let v: Vault;
void before(async () => {
  v = await startVault();
  await v.kv.write('team-a/argocd', { 'admin.password': 'n3w-admin-pw' });
});
void after(() => stopVault(v));

const b64 = (s: string) => Buffer.from(s).toString('base64');
const argocdSecret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'argocd-secret', namespace: 'team-a', labels: { 'app.kubernetes.io/part-of': 'argocd' } },
  type: 'Opaque',
  data: { 'server.secretkey': b64('signing-key-of-argocd'), 'admin.password': b64('old') },
};
const spec = (creationPolicy: string) => ({
  data: [{ secretKey: 'admin.password', remoteRef: { key: 'team-a/argocd', property: 'admin.password' } }],
  target: { name: 'argocd-secret', creationPolicy },
});

void describe('a target Secret vaultgate did not create', () => {
  for (const policy of ['Owner', 'Orphan']) {
    void test(`creationPolicy ${policy}: refused with SecretNotOwned, the Secret untouched`, async () => {
      const w = await world(v);
      w.kube.put(SECRETS, argocdSecret);
      const before = w.kube.getObj(SECRETS, 'team-a/argocd-secret');
      w.kube.put(EXTERNAL_SECRETS, externalSecret('argocd', spec(policy)));
      v.sim.resetCounts();
      await w.kube.reconcile(w.es, 'team-a/argocd');
      assert.deepEqual(
        w.kube.getObj(SECRETS, 'team-a/argocd-secret'),
        before,
        'no key nulled, no ownerReference, no label',
      );
      assert.equal(v.sim.count('read'), 0, 'Vault is not even read');
      const ready = readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/argocd'));
      assert.equal(ready?.status, 'False');
      assert.equal(ready?.reason, 'SecretNotOwned');
      assert.match(
        ready?.message ?? '',
        /Secret team-a\/argocd-secret already exists and was not created by vaultgate/,
      );
      assert.match(ready?.message ?? '', /vaultgate\.io\/adopt-secret: "true"/);
      assert.ok(w.kube.events.some((e) => e.type === 'Warning' && /argocd-secret/.test(e.note ?? '')));
    });
  }

  void test('with vaultgate.io/adopt-secret: "true" it is taken over (Owner: owner reference, managed label, exact data)', async () => {
    const w = await world(v);
    w.kube.put(SECRETS, argocdSecret);
    w.kube.put(EXTERNAL_SECRETS, externalSecret('argocd', spec('Owner'), { 'vaultgate.io/adopt-secret': 'true' }));
    await w.kube.reconcile(w.es, 'team-a/argocd');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/argocd'))?.reason, 'SecretSynced');
    assert.deepEqual(secretData(w, 'team-a/argocd-secret'), { 'admin.password': 'n3w-admin-pw' });
    const s = w.kube.getObj(SECRETS, 'team-a/argocd-secret')!;
    assert.equal(s.metadata.ownerReferences?.[0]?.kind, 'ExternalSecret');
    assert.equal(s.metadata.labels?.['reconcile.external-secrets.io/managed'], 'true');
  });

  void test('a Secret this ExternalSecret created is still updated, with or without the annotation', async () => {
    const w = await world(v);
    w.kube.put(EXTERNAL_SECRETS, externalSecret('argocd', spec('Owner')));
    await w.kube.reconcile(w.es, 'team-a/argocd');
    assert.deepEqual(secretData(w, 'team-a/argocd-secret'), { 'admin.password': 'n3w-admin-pw' });
    // The label is removed by hand: the owner reference still says it is ours; it is repaired.
    const s = w.kube.getObj(SECRETS, 'team-a/argocd-secret')!;
    w.kube.put(SECRETS, {
      ...s,
      metadata: { ...s.metadata, labels: {} },
      data: { ...(s as unknown as { data: Record<string, string> }).data, extra: b64('x') },
    });
    const es = w.kube.getObj(EXTERNAL_SECRETS, 'team-a/argocd')!;
    w.kube.put(EXTERNAL_SECRETS, {
      ...es,
      metadata: { ...es.metadata, annotations: { 'external-secrets.io/force-sync': '1' } },
    });
    await w.kube.reconcile(w.es, 'team-a/argocd');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/argocd'))?.reason, 'SecretSynced');
    assert.deepEqual(secretData(w, 'team-a/argocd-secret'), { 'admin.password': 'n3w-admin-pw' });
  });

  // Issue #21 item 2: Merge stamped ESO's managed label on the foreign Secret, and the managed label
  // counted as "created by vaultgate": a second ExternalSecret with Owner then replaced its keys and
  // added an ownerReference (the garbage collector would delete it with that ExternalSecret).
  for (const policy of ['Owner', 'Orphan']) {
    void test(`two steps: after a Merge ExternalSecret wrote into it, one with ${policy} still cannot take the Secret over`, async () => {
      const w = await world(v);
      w.kube.put(SECRETS, argocdSecret);
      w.kube.put(EXTERNAL_SECRETS, externalSecret('merge-in', spec('Merge')));
      await w.kube.reconcile(w.es, 'team-a/merge-in');
      assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/merge-in'))?.reason, 'SecretSynced');
      const merged = w.kube.getObj(SECRETS, 'team-a/argocd-secret');
      assert.deepEqual(merged?.metadata.ownerReferences, undefined);
      assert.deepEqual(
        Object.keys(merged?.metadata.labels ?? {}).filter((k) => /created-(by|for)/.test(k)),
        [],
        'Merge marks no Secret as created for it',
      );

      w.kube.put(EXTERNAL_SECRETS, externalSecret('take', spec(policy)));
      await w.kube.reconcile(w.es, 'team-a/take');
      const ready = readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/take'));
      assert.equal(ready?.reason, 'SecretNotOwned', ready?.message);
      assert.deepEqual(
        w.kube.getObj(SECRETS, 'team-a/argocd-secret'),
        merged,
        'no key replaced, no ownerReference added',
      );
    });
  }

  void test('the created-by label of another ExternalSecret, or a created-for label with another uid, does not make a Secret ours', async () => {
    const w = await world(v);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('first', { ...spec('Orphan'), target: { name: 'argocd-secret', creationPolicy: 'Orphan' } }),
    );
    await w.kube.reconcile(w.es, 'team-a/first');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/first'))?.reason, 'SecretSynced');
    const created = w.kube.getObj(SECRETS, 'team-a/argocd-secret')!;
    assert.equal(
      created.metadata.labels?.['vaultgate.io/created-for'],
      w.kube.getObj(EXTERNAL_SECRETS, 'team-a/first')?.metadata.uid,
    );
    // The same ExternalSecret syncs it again (its own label)...
    const es = w.kube.getObj(EXTERNAL_SECRETS, 'team-a/first')!;
    w.kube.put(EXTERNAL_SECRETS, {
      ...es,
      metadata: { ...es.metadata, annotations: { 'external-secrets.io/force-sync': '1' } },
    });
    await w.kube.reconcile(w.es, 'team-a/first');
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/first'))?.reason, 'SecretSynced');
    // ...another one may not.
    for (const policy of ['Owner', 'Orphan']) {
      w.kube.put(EXTERNAL_SECRETS, externalSecret(`second-${policy}`, spec(policy)));
      await w.kube.reconcile(w.es, `team-a/second-${policy}`);
      assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, `team-a/second-${policy}`))?.reason, 'SecretNotOwned');
    }
  });

  void test('a Secret created by someone else between the read and the write is not taken over: the create fails on AlreadyExists', async () => {
    const w = await world(v);
    w.kube.put(EXTERNAL_SECRETS, externalSecret('argocd', spec('Owner')));
    // The Secret appears after the reconciler looked (it is absent then) and before it writes.
    const realGet = w.kube.get.bind(w.kube);
    w.kube.get = (async (res, name, ns) => {
      const found = await realGet(res, name, ns);
      if (res === SECRETS && name === 'argocd-secret' && !w.kube.getObj(SECRETS, 'team-a/argocd-secret'))
        w.kube.put(SECRETS, argocdSecret);
      return found;
    }) as typeof w.kube.get;
    await w.kube.reconcile(w.es, 'team-a/argocd').catch(() => undefined);
    const s = w.kube.getObj(SECRETS, 'team-a/argocd-secret')!;
    assert.deepEqual(secretData(w, 'team-a/argocd-secret'), {
      'server.secretkey': 'signing-key-of-argocd',
      'admin.password': 'old',
    });
    assert.equal(s.metadata.ownerReferences, undefined);
    assert.equal(readyOf(w.kube.getObj(EXTERNAL_SECRETS, 'team-a/argocd'))?.reason, 'SecretNotOwned');
  });

  void test('creationPolicy Merge still adds keys to a foreign Secret and removes none', async () => {
    const w = await world(v);
    w.kube.put(SECRETS, argocdSecret);
    w.kube.put(EXTERNAL_SECRETS, externalSecret('argocd', spec('Merge')));
    await w.kube.reconcile(w.es, 'team-a/argocd');
    assert.deepEqual(secretData(w, 'team-a/argocd-secret'), {
      'server.secretkey': 'signing-key-of-argocd',
      'admin.password': 'n3w-admin-pw',
    });
    assert.equal(w.kube.getObj(SECRETS, 'team-a/argocd-secret')?.metadata.ownerReferences, undefined);
  });
});
