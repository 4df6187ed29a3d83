import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Cache } from '../../kube/cache.ts';
import { FakeClock } from '../../kube/clock.ts';
import { isReady, setCondition } from '../../kube/conditions.ts';
import { KubeApiError } from '../../kube/errors.ts';
import { KubeEventRecorder } from '../../kube/events.ts';
import { FINALIZER, withFinalizer } from '../../kube/finalizer.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { applyStatus } from '../../kube/status.ts';
import { applyOwned } from '../../kube/apply.ts';
import { CONFIGMAPS, EVENTS } from '../../kube/resources.ts';
import { VAULT_POLICIES } from '../../schemas/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

const policy = (name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: 'default', ...extra },
  spec: { policy: 'p' },
});

describe('conditions', () => {
  test('lastTransitionTime moves only when the status changes', () => {
    const t1 = '2026-01-01T00:00:00Z';
    let conds = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'VaultUnavailable', message: 'connection refused' },
      1,
      t1,
    );
    conds = setCondition(
      conds,
      { type: 'Ready', status: 'False', reason: 'PolicyInvalid', message: 'other' },
      2,
      '2026-01-01T00:05:00Z',
    );
    assert.equal(conds[0]?.lastTransitionTime, t1, 'same status: time kept, reason/message/generation updated');
    assert.equal(conds[0]?.reason, 'PolicyInvalid');
    assert.equal(conds[0]?.observedGeneration, 2);
    conds = setCondition(
      conds,
      { type: 'Ready', status: 'True', reason: 'Synced', message: '' },
      2,
      new Date('2026-01-01T00:10:00.123Z'),
    );
    assert.equal(conds[0]?.lastTransitionTime, '2026-01-01T00:10:00Z');
    assert.equal(conds.length, 1);
  });

  test('isReady needs Ready=True for the current generation', () => {
    const conds = setCondition([], { type: 'Ready', status: 'True', reason: 'Synced', message: '' }, 3, new Date());
    assert.equal(isReady(conds), true);
    assert.equal(isReady(conds, 3), true);
    assert.equal(isReady(conds, 4), false, 'a Ready from an older spec does not count');
    assert.equal(
      isReady(setCondition(conds, { type: 'Ready', status: 'Unknown', reason: 'Reconciling', message: '' }, 3)),
      false,
    );
  });

  test('condition messages are scrubbed of tokens and reasons must be CamelCase', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLXZhbHVl';
    const conds = setCondition(
      [],
      {
        type: 'Ready',
        status: 'False',
        reason: 'LoginFailed',
        message: `login with ${jwt} and hvs.CAESIabcdefghijklmnopqrstuvwx failed`,
      },
      1,
    );
    assert.ok(!conds[0]?.message.includes('eyJ') && !conds[0]?.message.includes('hvs.'), conds[0]?.message);
    assert.throws(() => setCondition([], { type: 'Ready', status: 'False', reason: 'not camel case', message: '' }, 1));
  });
});

describe('finalizer helper', () => {
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
});

describe('status and apply helpers', () => {
  test('a status write that changes nothing is skipped', async () => {
    const kube = new FakeKubeClient();
    const obj = await kube.create(VAULT_POLICIES, policy('s'));
    const status = {
      observedGeneration: 1,
      conditions: setCondition(
        [],
        { type: 'Ready', status: 'True', reason: 'Synced', message: '' },
        1,
        '2026-01-01T00:00:00Z',
      ),
    };
    const first = await applyStatus(kube, VAULT_POLICIES, obj, status);
    assert.equal(first.written, true);
    const second = await applyStatus(kube, VAULT_POLICIES, first.obj!, status);
    assert.equal(second.written, false);
    assert.equal(kube.calls.filter((c) => c.verb === 'apply').length, 1);
    const stored = await kube.get(VAULT_POLICIES, 's', 'default');
    assert.ok(stored?.metadata.managedFields?.some((m) => m.manager === 'vaultgate' && m.subresource === 'status'));
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
});

describe('event recorder', () => {
  test('repeats become one Event with a growing series count, notes scrubbed', async () => {
    const kube = new FakeKubeClient();
    const clock = new FakeClock();
    const rec = new KubeEventRecorder({
      client: kube,
      controller: 'vaultgate.io/controller',
      instance: 'pod-1',
      clock,
      seriesUpdateMs: 1000,
    });
    const obj = await kube.create(VAULT_POLICIES, policy('ev'));
    const note = 'Vault refused token hvs.CAESIabcdefghijklmnopqrstuvwx';
    for (let i = 0; i < 5; i++) {
      rec.record(obj, { type: 'Warning', reason: 'VaultWriteFailed', note });
      await clock.advance(400);
    }
    await rec.flush();
    const events = (await kube.list(EVENTS, { namespace: 'default' })).items as (KubeObject & {
      note: string;
      series?: { count: number };
      regarding: { name: string };
    })[];
    assert.equal(events.length, 1, 'one Event object for five repeats');
    assert.ok(!events[0]!.note.includes('hvs.'), 'note scrubbed');
    assert.equal(events[0]!.regarding.name, 'ev');
    assert.ok((events[0]!.series?.count ?? 0) >= 3, `series count ${events[0]!.series?.count}`);
    rec.record(obj, { type: 'Normal', reason: 'PolicyWritten', note: 'written' });
    await rec.flush();
    assert.equal(
      (await kube.list(EVENTS, { namespace: 'default' })).items.length,
      2,
      'a different reason is a different Event',
    );
  });

  test('a failing Event write never throws into the reconcile', async () => {
    const kube = new FakeKubeClient();
    kube.failWith(() => new KubeApiError(500, 'InternalError', 'boom'));
    const rec = new KubeEventRecorder({ client: kube, controller: 'c', instance: 'i' });
    rec.record(policy('x'), { type: 'Normal', reason: 'R', note: 'n' });
    await rec.flush();
  });
});

describe('cache indexes', () => {
  test('custom indexes follow updates and deletes', () => {
    const cache = new Cache<KubeObject & { spec: { policies: string[] } }>();
    cache.addIndex('policy', (o) => o.spec.policies);
    const vrb = (name: string, policies: string[]) => ({
      metadata: { name, namespace: 'ns', resourceVersion: String(Math.random()) },
      spec: { policies },
    });
    cache.upsert(vrb('b1', ['p1', 'p2']));
    cache.upsert(vrb('b2', ['p2']));
    assert.deepEqual(cache.keysByIndex('policy', 'p2').sort(), ['ns/b1', 'ns/b2']);
    cache.upsert(vrb('b1', ['p3']));
    assert.deepEqual(cache.keysByIndex('policy', 'p2'), ['ns/b2']);
    assert.deepEqual(
      cache.byIndex('policy', 'p3').map((o) => o.metadata.name),
      ['b1'],
    );
    cache.remove('ns/b2');
    assert.deepEqual(cache.keysByIndex('policy', 'p2'), []);
    assert.deepEqual(cache.list('ns').length, 1);
    assert.throws(() => cache.byIndex('nope', 'x'), /no index named/);
  });
});
