import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DONE, requeueAfter } from '../../kube/reconciler.ts';

test('DONE asks for no requeue and is frozen, so no reconciler can change what every other one returns', () => {
  assert.equal(DONE.requeueAfterMs, undefined);
  assert.ok(Object.isFrozen(DONE));
});

test('requeueAfter asks to look again after that many milliseconds', () => {
  assert.deepEqual(requeueAfter(30_000), { requeueAfterMs: 30_000 });
});
