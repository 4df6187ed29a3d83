import { test } from 'node:test';
import assert from 'node:assert/strict';
import { objectKey, splitKey } from '../../kube/objects.ts';

test('an object key is namespace/name, or the name alone for a cluster-scoped object', () => {
  assert.equal(objectKey({ metadata: { namespace: 'team-a', name: 'db' } }), 'team-a/db');
  assert.equal(objectKey({ metadata: { name: 'cluster-store' } }), 'cluster-store');
});

test('splitKey inverts objectKey, splitting at the first slash only', () => {
  assert.deepEqual(splitKey('team-a/db'), { namespace: 'team-a', name: 'db' });
  assert.deepEqual(splitKey('cluster-store'), { name: 'cluster-store' });
  assert.deepEqual(splitKey('ns/a/b'), { namespace: 'ns', name: 'a/b' });
  for (const metadata of [{ namespace: 'x', name: 'y' }, { name: 'z' }])
    assert.deepEqual(splitKey(objectKey({ metadata })), metadata);
});
