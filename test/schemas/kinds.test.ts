// The list of served kinds: a manifest's apiVersion + kind finds its entry, whichever group it is in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findKindOf, KINDS } from '../../schemas/kinds.ts';

test('apiVersion "group/version" and kind find the kind; a wrong version or a core kind finds nothing', () => {
  assert.equal(findKindOf('vaultgate.io/v1alpha1', 'VaultPolicy')?.plural, 'vaultpolicies');
  assert.equal(findKindOf('external-secrets.io/v1', 'ExternalSecret')?.scope, 'Namespaced');
  assert.equal(findKindOf('external-secrets.io/v1alpha1', 'PushSecret')?.plural, 'pushsecrets');
  assert.equal(findKindOf('external-secrets.io/v1beta1', 'ExternalSecret'), undefined);
  assert.equal(findKindOf('v1', 'Secret'), undefined);
});

test('no two kinds share a plural or a short name within their group (kubectl would resolve one of them)', () => {
  const seen = new Set<string>();
  for (const k of KINDS)
    for (const name of [k.plural, k.singular, ...(k.shortNames ?? [])]) {
      const key = `${k.group}/${name}`;
      assert.ok(!seen.has(key), `${key} is used twice`);
      seen.add(key);
    }
});
