// The in-process fake client's watch must end whenever its signal aborts, including during its first
// await (before it could listen for 'abort'): otherwise Informer.stop() waits forever.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Informer } from '../../kube/informer.ts';
import { CONFIGMAPS } from '../../kube/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

void describe('FakeKubeClient watch and abort', () => {
  void test('a signal aborted while the watch is starting ends it', async () => {
    const kube = new FakeKubeClient();
    const abort = new AbortController();
    const it = kube.watch(CONFIGMAPS, { namespace: 'default', signal: abort.signal })[Symbol.asyncIterator]();
    const first = it.next(); // runs up to the watch's first await
    abort.abort();
    assert.deepEqual(await first, { done: true, value: undefined });
  });

  void test('Informer.stop() returns whatever microtask the stop lands on', async () => {
    const kube = new FakeKubeClient();
    await kube.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'default' },
      data: {},
    });
    // Every offset from "right after start" to "well into the watch": one of them is the gap between
    // the watch call and its abort listener.
    for (let ticks = 0; ticks < 40; ticks++) {
      const inf = new Informer(kube, { resource: CONFIGMAPS, namespace: 'default', resyncMs: 0 });
      inf.start();
      for (let i = 0; i < ticks; i++) await Promise.resolve();
      await inf.stop();
      assert.equal(inf.phase, 'Stopped', `stopped after ${ticks} microtasks`);
    }
  });
});
