// What reconcilers look up besides their object: whether a store is this controller's (ESO's
// spec.controller), and a cache the controller may not watch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isOurClass, tryCache } from '../../../controller/reconcilers/lookups.ts';
import type { ReconcileContext } from '../../../kube/reconciler.ts';
import { NAMESPACES } from '../../../kube/resources.ts';
import { Cache } from '../../../kube/cache.ts';

test('a store without spec.controller, or naming ours, is served; one naming another controller is not', () => {
  assert.equal(isOurClass(undefined, 'vaultgate'), true);
  assert.equal(isOurClass({ provider: {} }, 'vaultgate'), true);
  assert.equal(isOurClass({ controller: 'vaultgate' } as never, 'vaultgate'), true);
  assert.equal(isOurClass({ controller: 'eso' } as never, 'vaultgate'), false);
});

test('an unwatched cache is undefined (a namespace-scoped install), a watched one is returned', () => {
  const cache = new Cache();
  const watching = { cache: () => cache } as unknown as ReconcileContext;
  const notWatching = {
    cache: () => {
      throw new Error('no informer for namespaces');
    },
  } as unknown as ReconcileContext;
  assert.equal(tryCache(watching, NAMESPACES), cache);
  assert.equal(tryCache(notWatching, NAMESPACES), undefined);
});
