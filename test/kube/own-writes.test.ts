// A watch drops the event of the reconciler's own write, and only that one: every other change to the
// object must still wake its owner (a hand edit of a synced Secret is repaired because of it).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { OwnWrites } from '../../kube/own-writes.ts';
import type { KubeObject } from '../../kube/objects.ts';
import type { ObjectEvent } from '../../kube/informer.ts';

const secret = (name: string, rv: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'team-a', resourceVersion: rv },
});
const add = (obj: KubeObject): ObjectEvent => ({ type: 'add', obj });
const update = (old: KubeObject, obj: KubeObject): ObjectEvent => ({ type: 'update', old, obj });

void describe('OwnWrites', () => {
  void test('the add or update event at the resourceVersion our write returned is dropped, once', () => {
    const own = new OwnWrites();
    own.record(secret('db', '10'));
    assert.equal(own.notOwn(add(secret('db', '10'))), false, 'the create we made');
    assert.equal(
      own.notOwn(update(secret('db', '10'), secret('db', '10'))),
      true,
      'consumed: a later event at that version passes',
    );
    own.record(secret('db', '12'));
    assert.equal(own.notOwn(update(secret('db', '10'), secret('db', '12'))), false, 'the update we made');
  });

  void test("someone else's edit, a deletion, a resync and another Secret all pass", () => {
    const own = new OwnWrites();
    own.record(secret('db', '10'));
    assert.equal(own.notOwn(update(secret('db', '10'), secret('db', '11'))), true, 'an edit after ours');
    own.record(secret('db', '20'));
    assert.equal(own.notOwn({ type: 'delete', obj: secret('db', '20') }), true);
    assert.equal(own.notOwn({ type: 'resync', obj: secret('db', '20') }), true);
    assert.equal(own.notOwn(add(secret('other', '20'))), true);
  });

  void test('an event that never comes does not pin memory: the oldest entries go', () => {
    const own = new OwnWrites(3);
    for (let i = 0; i < 10; i++) own.record(secret(`s${i}`, String(i)));
    assert.equal(own.size, 3);
    assert.equal(own.notOwn(add(secret('s0', '0'))), true, 'evicted: passes (a spare reconcile, never a lost one)');
    assert.equal(own.notOwn(add(secret('s9', '9'))), false);
    own.record(undefined);
    own.record({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'no-rv', namespace: 'team-a' } });
    assert.equal(own.size, 2);
  });
});
