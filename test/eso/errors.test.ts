import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EsoDataError } from '../../eso/errors.ts';
import { ReconcileError, isTerminal } from '../../kube/reconcile-error.ts';

test('bad provider data is a reconcile error that is never retried (the same data fails the same way)', () => {
  const e = new EsoDataError('property "db" of key "app" is not an object');
  assert.ok(e instanceof ReconcileError);
  assert.equal(e.name, 'EsoDataError');
  assert.equal(e.reason, 'InvalidProviderData');
  assert.ok(isTerminal(e));
  assert.equal(e.message, 'property "db" of key "app" is not an object');
  assert.equal(new EsoDataError('collision', 'KeyCollision').reason, 'KeyCollision');
});
