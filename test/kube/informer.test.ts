import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import { Informer, type InformerLifecycleEvent, type InformerOptions, type ObjectEvent } from '../../kube/informer.ts';
import { CONFIGMAPS, NAMESPACES, resourcePath } from '../../kube/resources.ts';
import { KubeSim } from '../sim/kube.ts';

// Fast, deterministic reconnect settings: timings here are only knobs, nothing asserts on time.
const FAST: Partial<InformerOptions> = { backoff: { initialMs: 10, maxMs: 50, jitter: 0 }, minWatchMs: 0, resyncMs: 0 };

describe('informer against the simulator', () => {
  let sim: KubeSim;
  let client: HttpKubeClient;
  let n = 0;

  before(async () => {
    sim = await KubeSim.start();
    client = new HttpKubeClient(sim.kubeConfig(), { defaultTimeoutMs: 5_000 });
  });
  after(async () => {
    client.close();
    await sim.close();
  });

  /** A fresh namespace per test so informers don't see each other's objects. */
  async function setup(opts: Partial<InformerOptions> = {}): Promise<{
    ns: string;
    inf: Informer;
    events: ObjectEvent[];
    life: InformerLifecycleEvent[];
    until: (pred: () => boolean, what?: string) => Promise<void>;
  }> {
    const ns = `inf-${++n}`;
    await client.create(NAMESPACES, { metadata: { name: ns } });
    const inf = new Informer(client, { resource: CONFIGMAPS, namespace: ns, ...FAST, ...opts });
    const events: ObjectEvent[] = [];
    const life: InformerLifecycleEvent[] = [];
    const waiters: (() => void)[] = [];
    const poke = (): void => {
      for (const w of waiters.splice(0)) w();
    };
    inf.addHandler((ev) => {
      events.push(ev);
      poke();
    });
    inf.onLifecycle((ev) => {
      life.push(ev);
      poke();
    });
    /** Wait for a condition re-checked on every informer event (no sleeps), failing after 10 s without it. */
    const until = async (pred: () => boolean, what = pred.toString()): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (!pred()) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`informer never reached: ${what}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
    };
    return { ns, inf, events, life, until };
  }
  const cm = (ns: string, name: string, v = '1') => ({ metadata: { name, namespace: ns }, data: { v } });
  const lists = (ns: string): number =>
    sim.countRequests((r) => r.method === 'GET' && !r.watch && r.path === resourcePath(CONFIGMAPS, ns));
  const names = (evs: ObjectEvent[], type: ObjectEvent['type']): string[] =>
    evs
      .filter((e) => e.type === type)
      .map((e) => e.obj.metadata.name)
      .sort();

  test('the initial list is paginated and fills the cache before SYNCED', async () => {
    const { ns, inf, life, until } = await setupWith(5);
    inf.start();
    assert.equal(await inf.waitForSync(), true);
    assert.equal(inf.cache.size, 5);
    await client.create(CONFIGMAPS, cm(ns, 'watched'));
    await until(() => inf.cache.size === 6);
    const listEv = life.find((e) => e.type === 'LIST');
    assert.ok(listEv && listEv.type === 'LIST' && listEv.pages === 3, 'pages of 2 for 5 objects');
    assert.ok(
      sim.requests.some((r) => r.path === resourcePath(CONFIGMAPS, ns) && r.query.limit === '2' && r.query.continue),
    );
    const watch = sim.requests.find((r) => r.watch && r.path === resourcePath(CONFIGMAPS, ns));
    assert.equal(watch?.query.allowWatchBookmarks, 'true');
    assert.ok(watch?.query.timeoutSeconds, 'the watch asks the server to time it out');
    await inf.stop();

    async function setupWith(count: number) {
      const s = await setup({ pageSize: 2 });
      for (let i = 0; i < count; i++) await client.create(CONFIGMAPS, cm(s.ns, `obj-${i}`));
      return s;
    }
  });

  test('adds, updates and deletes are delivered and cached', async () => {
    const { ns, inf, events, until } = await setup();
    inf.start();
    await inf.waitForSync();
    await client.create(CONFIGMAPS, cm(ns, 'a'));
    await until(() => inf.cache.get(`${ns}/a`) !== undefined);
    await client.patch(CONFIGMAPS, 'a', ns, { data: { v: '2' } }, 'merge');
    await until(() => (inf.cache.get(`${ns}/a`)?.data as { v?: string } | undefined)?.v === '2');
    await client.delete(CONFIGMAPS, 'a', ns);
    await until(() => events.some((e) => e.type === 'delete'));
    assert.deepEqual(
      events.map((e) => e.type),
      ['add', 'update', 'delete'],
    );
    events.length = 0;
    assert.equal(inf.cache.get(`${ns}/a`), undefined);
    await client.create(CONFIGMAPS, cm(ns, 'frozen'));
    await until(() => inf.cache.size === 1);
    assert.throws(
      () => {
        (inf.cache.get(`${ns}/frozen`)!.data as Record<string, string>).v = 'mutated';
      },
      TypeError,
      'cached objects are frozen',
    );
    await inf.stop();
  });

  test('a cleanly closed watch resumes from the last resourceVersion without relisting', async () => {
    const { ns, inf, life, until } = await setup();
    inf.start();
    await inf.waitForSync();
    await client.create(CONFIGMAPS, cm(ns, 'before'));
    await until(() => inf.cache.size === 1);
    const listsBefore = lists(ns);
    const connects = life.filter((e) => e.type === 'CONNECT').length;
    sim.closeWatches();
    await until(() => life.filter((e) => e.type === 'CONNECT').length > connects);
    await client.create(CONFIGMAPS, cm(ns, 'after'));
    await until(() => inf.cache.size === 2);
    assert.equal(lists(ns), listsBefore, 'no relist');
    assert.ok(life.some((e) => e.type === 'WATCH_CLOSED'));
    assert.ok(!life.some((e) => e.type === 'BACKOFF'));
    await inf.stop();
  });

  test('410 Gone relists and emits deletes only for objects that vanished meanwhile', async () => {
    const { ns, inf, events, life, until } = await setup();
    await client.create(CONFIGMAPS, cm(ns, 'stays'));
    await client.create(CONFIGMAPS, cm(ns, 'vanishes'));
    inf.start();
    await inf.waitForSync();
    // Cut the watch and keep it down while the world changes and history is compacted.
    const unblock = sim.inject({ path: resourcePath(CONFIGMAPS, ns), watch: true, action: { status: 503 } });
    sim.dropWatches();
    await until(() => life.some((e) => e.type === 'BACKOFF'));
    await client.delete(CONFIGMAPS, 'vanishes', ns);
    await client.create(CONFIGMAPS, cm(ns, 'appears'));
    sim.compact();
    unblock();
    await until(() => life.filter((e) => e.type === 'LIST').length === 2);
    assert.ok(life.some((e) => e.type === 'RELIST_410'));
    assert.deepEqual(names(events, 'delete'), ['vanishes']);
    assert.deepEqual(names(events, 'add'), ['appears', 'stays', 'vanishes']);
    assert.deepEqual(inf.cache.keys().sort(), [`${ns}/appears`, `${ns}/stays`]);
    await inf.stop();
  });

  test('an in-stream ERROR 410 also relists', async () => {
    const { ns, inf, life, until } = await setup();
    inf.start();
    await inf.waitForSync();
    await client.create(CONFIGMAPS, cm(ns, 'x'));
    await until(() => inf.cache.size === 1);
    const unblock = sim.inject({ path: resourcePath(CONFIGMAPS, ns), watch: true, action: 'drop' });
    sim.dropWatches();
    await until(() => life.some((e) => e.type === 'BACKOFF'));
    await client.create(CONFIGMAPS, cm(ns, 'missed'));
    sim.compact();
    unblock();
    await until(() => life.some((e) => e.type === 'RELIST_410'));
    await until(() => inf.cache.size === 2);
    await inf.stop();
  });

  test('a failing watch backs off with growing delays and recovers', async () => {
    const { ns, inf, life, until } = await setup();
    inf.start();
    await inf.waitForSync();
    sim.inject({ path: resourcePath(CONFIGMAPS, ns), watch: true, times: 3, action: { status: 500 } });
    sim.dropWatches();
    await until(() => life.filter((e) => e.type === 'WATCH_ERROR').length >= 3);
    await client.create(CONFIGMAPS, cm(ns, 'later'));
    await until(() => inf.cache.size === 1);
    const delays = life.filter((e) => e.type === 'BACKOFF').map((e) => (e.type === 'BACKOFF' ? e.delayMs : 0));
    assert.ok(delays.length >= 3);
    assert.ok(delays[1]! > delays[0]! && delays[2]! > delays[1]!, `delays grow: ${delays.join(',')}`);
    const err = life.find((e) => e.type === 'WATCH_ERROR');
    assert.ok(
      err?.type === 'WATCH_ERROR' && err.error.code === 500 && !/Bearer|authorization/i.test(err.error.message),
    );
    await inf.stop();
  });

  test('a failing initial list is retried, not fatal', async () => {
    const s = await setup();
    const unblock = sim.inject({
      path: resourcePath(CONFIGMAPS, s.ns),
      watch: false,
      times: 2,
      action: { status: 503 },
    });
    s.inf.start();
    assert.equal(await s.inf.waitForSync(), true);
    assert.equal(s.life.filter((e) => e.type === 'LIST_ERROR').length, 2);
    unblock();
    await s.inf.stop();
  });

  test('an optional resource the server does not serve (404: no CRD) is synced and empty, and its objects arrive once it is served', async () => {
    const s = await setup({ optional: true, notServedRetryMs: 20 });
    await client.create(CONFIGMAPS, cm(s.ns, 'there-once-served'));
    const served = sim.inject({
      path: resourcePath(CONFIGMAPS, s.ns),
      watch: false,
      times: 3,
      action: { status: 404 },
    });
    s.inf.start();
    assert.equal(await s.inf.waitForSync(), true, 'synced although the LIST answers 404');
    assert.equal(s.life.filter((e) => e.type === 'NOT_SERVED').length, 1, 'reported once, not at every retry');
    await s.until(() => s.inf.cache.size === 1, 'the object listed once the resource is served');
    assert.equal(s.life.filter((e) => e.type === 'LIST_ERROR').length, 0);
    served();
    await s.inf.stop();
  });

  test('a required resource answering 404 does not count as synced', async () => {
    const s = await setup();
    const unblock = sim.inject({
      path: resourcePath(CONFIGMAPS, s.ns),
      watch: false,
      times: 1000,
      action: { status: 404 },
    });
    s.inf.start();
    await s.until(() => s.life.filter((e) => e.type === 'LIST_ERROR').length >= 2);
    assert.equal(s.inf.synced, false);
    unblock();
    await s.inf.stop();
  });

  test('a watch that hangs silently is restarted by the watchdog', async () => {
    const { ns, inf, life, until } = await setup({ watchdogMs: 300 });
    sim.inject({ path: resourcePath(CONFIGMAPS, ns), watch: true, times: 1, action: 'hang' });
    inf.start();
    await inf.waitForSync();
    await until(() => life.some((e) => e.type === 'WATCHDOG_RESTART'));
    await client.create(CONFIGMAPS, cm(ns, 'seen'));
    await until(() => inf.cache.size === 1);
    await inf.stop();
  });

  test('resync re-delivers every cached object', async () => {
    const { ns, inf, events, until } = await setup({ resyncMs: 50 });
    await client.create(CONFIGMAPS, cm(ns, 'r1'));
    inf.start();
    await inf.waitForSync();
    await until(() => events.filter((e) => e.type === 'resync').length >= 2);
    await inf.stop();
  });

  test('a throwing handler is reported and does not stop delivery', async () => {
    const { ns, inf, life, until } = await setup();
    inf.addHandler(() => {
      throw new Error('handler bug');
    });
    inf.start();
    await inf.waitForSync();
    await client.create(CONFIGMAPS, cm(ns, 'h'));
    await until(() => inf.cache.size === 1 && life.some((e) => e.type === 'HANDLER_ERROR'));
    await inf.stop();
  });
});
