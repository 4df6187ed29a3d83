// Which priority an informer event's keys get (issue #24.2): table tests of the pure rules.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { eventPriority, primaryEventPriority } from '../../kube/event-priority.ts';
import type { ObjectEvent } from '../../kube/informer.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { Priority } from '../../kube/workqueue.ts';

const obj = (rv: string, meta: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  metadata: { name: 'es', namespace: 'ns', resourceVersion: rv, ...meta },
});
const { High, Refresh, Low } = Priority;

describe('event priority', () => {
  const cases: Array<{ name: string; ev: ObjectEvent; any: number; primary: number }> = [
    { name: 'a new object', ev: { type: 'add', obj: obj('1', { generation: 1 }) }, any: High, primary: High },
    {
      name: 'an object of the initial list',
      ev: { type: 'add', obj: obj('1', { generation: 1 }), initial: true },
      any: Low,
      primary: Low,
    },
    { name: 'a resync', ev: { type: 'resync', obj: obj('1', { generation: 1 }) }, any: Low, primary: Low },
    { name: 'a deletion', ev: { type: 'delete', obj: obj('2', { generation: 1 }) }, any: High, primary: High },
    {
      name: 'a spec change (generation up)',
      ev: { type: 'update', old: obj('1', { generation: 1 }), obj: obj('2', { generation: 2 }) },
      any: High,
      primary: High,
    },
    {
      name: 'a force-sync annotation (metadata only)',
      ev: {
        type: 'update',
        old: obj('1', { generation: 1 }),
        obj: obj('2', { generation: 1, annotations: { 'external-secrets.io/force-sync': '1' } }),
      },
      any: High,
      primary: Refresh,
    },
    {
      name: 'deletion started (same generation)',
      ev: {
        type: 'update',
        old: obj('1', { generation: 1 }),
        obj: obj('2', { generation: 1, deletionTimestamp: '2026-01-01T00:00:00Z' }),
      },
      any: High,
      primary: High,
    },
    {
      name: 'an update of a kind without generation (a Secret edited by hand)',
      ev: { type: 'update', old: obj('1'), obj: obj('2') },
      any: High,
      primary: High,
    },
    {
      name: 'an update with the same resourceVersion',
      ev: { type: 'update', old: obj('1', { generation: 1 }), obj: obj('1', { generation: 1 }) },
      any: Low,
      primary: Low,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(eventPriority(c.ev), c.any, 'owned or watched kinds');
      assert.equal(primaryEventPriority(c.ev), c.primary, "the controller's own kind");
    });
  }
});
