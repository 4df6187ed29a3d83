import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cache } from '../../kube/cache.ts';
import type { KubeObject } from '../../kube/objects.ts';

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
