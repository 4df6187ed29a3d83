import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerBuilder, generationChanged, type ControllerSpec } from '../../kube/builder.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { CONFIGMAPS, SECRETS } from '../../kube/resources.ts';
import { DONE } from '../../kube/reconciler.ts';

function host(): { specs: ControllerSpec[]; addController(s: ControllerSpec): void } {
  const specs: ControllerSpec[] = [];
  return { specs, addController: (s) => specs.push(s) };
}
const reconcile = () => Promise.resolve(DONE);

test('complete() hands the manager one spec with everything declared', () => {
  const h = host();
  const map = (o: KubeObject) => [o.metadata.name];
  new ControllerBuilder(h, 'demo')
    .for(SECRETS, { labelSelector: 'a=b' })
    .owns(CONFIGMAPS, { fieldSelector: 'metadata.name=x' })
    .watches(CONFIGMAPS, map)
    .withIndex('by-name', (o) => [o.metadata.name])
    .workers(3)
    .complete(reconcile);
  assert.equal(h.specs.length, 1);
  const s = h.specs[0];
  assert.ok(s);
  assert.equal(s.name, 'demo');
  assert.equal(s.primary, SECRETS);
  assert.deepEqual(s.primarySelectors, { labelSelector: 'a=b' });
  assert.deepEqual(s.owns, [
    { resource: CONFIGMAPS, predicate: undefined, selectors: { fieldSelector: 'metadata.name=x' } },
  ]);
  assert.equal(s.watches[0]?.map, map);
  assert.deepEqual(s.watches[0]?.selectors, {});
  assert.deepEqual(
    s.indexes.map((i) => i.name),
    ['by-name'],
  );
  assert.equal(s.workers, 3);
  assert.equal(s.reconciler, reconcile);
});

test('wiring mistakes throw at startup, naming the controller', () => {
  assert.throws(() => new ControllerBuilder(host(), 'c1').complete(reconcile), /controller c1: for\(\) is required/);
  assert.throws(
    () => new ControllerBuilder(host(), 'c2').for(SECRETS).for(SECRETS),
    /controller c2: for\(\) called twice/,
  );
  for (const n of [0, 1.5, -1])
    assert.throws(
      () => new ControllerBuilder(host(), 'c3').workers(n),
      /controller c3: workers must be a positive integer/,
    );
  const h = host();
  new ControllerBuilder(h, 'c4').for(SECRETS).complete(reconcile);
  assert.equal(h.specs[0]?.workers, 1, 'one worker by default');
});

test('generationChanged passes spec changes, deletions in progress and non-updates; drops status-only updates', () => {
  const obj = (generation?: number, deletionTimestamp?: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'X',
    metadata: { name: 'x', generation, deletionTimestamp },
  });
  assert.equal(generationChanged({ type: 'update', old: obj(1), obj: obj(1) }), false);
  assert.equal(generationChanged({ type: 'update', old: obj(1), obj: obj(2) }), true);
  assert.equal(generationChanged({ type: 'update', old: obj(1), obj: obj(1, '2026-01-01T00:00:00Z') }), true);
  assert.equal(generationChanged({ type: 'update', old: obj(), obj: obj() }), true, 'no generation: cannot tell');
  for (const type of ['add', 'delete', 'resync'] as const) assert.equal(generationChanged({ type, obj: obj(1) }), true);
});
