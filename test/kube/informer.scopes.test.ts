// An informer scoped to several namespaces (a namespaced install's Roles allow no cluster-wide list) or to
// named cluster-scoped objects (the Namespace objects of those namespaces): one list/watch per scope, one
// cache, nothing from outside the scopes, and a relist of one scope never drops another scope's objects.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import { Informer, type InformerOptions } from '../../kube/informer.ts';
import { Manager } from '../../kube/manager.ts';
import { CONFIGMAPS, NAMESPACES, resourcePath } from '../../kube/resources.ts';
import { KubeSim } from '../sim/kube.ts';

const FAST: Partial<InformerOptions> = { backoff: { initialMs: 10, maxMs: 50, jitter: 0 }, minWatchMs: 0, resyncMs: 0 };

async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`never reached: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

void describe('informer scopes', () => {
  let sim: KubeSim;
  let client: HttpKubeClient;
  before(async () => {
    sim = await KubeSim.start();
    client = new HttpKubeClient(sim.kubeConfig(), { defaultTimeoutMs: 5_000 });
    for (const ns of ['a', 'b', 'c']) {
      await client.create(NAMESPACES, { metadata: { name: ns, labels: { team: ns } } });
      await client.create(CONFIGMAPS, { metadata: { name: 'x', namespace: ns }, data: {} });
    }
  });
  after(async () => {
    client.close();
    await sim.close();
  });

  void test('namespaces [a, b]: lists and watches each (never cluster-wide), caches both, ignores c', async () => {
    const inf = new Informer(client, { resource: CONFIGMAPS, namespaces: ['a', 'b'], ...FAST });
    inf.start();
    assert.equal(await inf.waitForSync(), true);
    assert.deepEqual(inf.cache.keys().sort(), ['a/x', 'b/x']);
    assert.equal(
      sim.countRequests((r) => r.method === 'GET' && r.path === resourcePath(CONFIGMAPS)),
      0,
      'no cluster-wide list or watch',
    );
    await client.create(CONFIGMAPS, { metadata: { name: 'y', namespace: 'b' }, data: {} });
    await client.create(CONFIGMAPS, { metadata: { name: 'y', namespace: 'c' }, data: {} });
    await until(() => inf.cache.get('b/y') !== undefined, 'b/y cached');
    assert.equal(inf.cache.get('c/y'), undefined);
    assert.equal(inf.phase, 'Watching');
    await inf.stop();
    assert.equal(inf.phase, 'Stopped');
  });

  void test('names [a, b] of a cluster-scoped kind: fieldSelector metadata.name per name', async () => {
    const inf = new Informer(client, { resource: NAMESPACES, names: ['a', 'b'], ...FAST });
    inf.start();
    await inf.waitForSync();
    assert.deepEqual(inf.cache.keys().sort(), ['a', 'b']);
    assert.ok(
      sim.requests.some((r) => r.path === resourcePath(NAMESPACES) && r.query.fieldSelector === 'metadata.name=a'),
    );
    await client.patch(NAMESPACES, 'b', undefined, { metadata: { labels: { team: 'b2' } } }, 'merge');
    await until(() => inf.cache.get('b')?.metadata.labels?.team === 'b2', 'relabel seen');
    await inf.stop();
  });

  void test("a relist (410) of one scope replaces only that scope's objects: no delete for the other's", async () => {
    const inf = new Informer(client, { resource: CONFIGMAPS, namespaces: ['a', 'b'], ...FAST });
    const deletes: string[] = [];
    const life: string[] = [];
    inf.addHandler((ev) => {
      if (ev.type === 'delete') deletes.push(`${ev.obj.metadata.namespace}/${ev.obj.metadata.name}`);
    });
    inf.onLifecycle((ev) => life.push(ev.type));
    inf.start();
    await inf.waitForSync();
    // Scope a's watch goes down while a's object is replaced and history is compacted: a relists (410),
    // scope b keeps watching.
    const unblock = sim.inject({ path: resourcePath(CONFIGMAPS, 'a'), watch: true, action: { status: 503 } });
    sim.dropWatches();
    await until(() => life.includes('BACKOFF'), 'a backs off');
    await client.delete(CONFIGMAPS, 'x', 'a');
    await client.create(CONFIGMAPS, { metadata: { name: 'z', namespace: 'a' }, data: {} });
    sim.compact();
    unblock();
    await until(() => life.includes('RELIST_410') && inf.cache.get('a/z') !== undefined, 'a relisted');
    assert.deepEqual(deletes, ['a/x'], 'only the object really gone');
    assert.ok(inf.cache.get('b/x'), 'b/x stays cached');
    assert.deepEqual(inf.cache.keys().sort(), ['a/z', 'b/x', 'b/y']);
    await inf.stop();
  });

  void test('a Manager with namespaces scopes namespaced informers and the Namespace informer alike', async () => {
    const mgr = new Manager({ client, namespaces: ['a', 'c'] });
    const cms = mgr.informer(CONFIGMAPS);
    const nss = mgr.informer(NAMESPACES);
    await mgr.start();
    assert.deepEqual(cms.cache.keys().sort(), ['a/z', 'c/x', 'c/y']);
    assert.deepEqual(nss.cache.keys().sort(), ['a', 'c']);
    await mgr.stop();
  });
});
