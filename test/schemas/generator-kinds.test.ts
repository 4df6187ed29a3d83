// ESO's generator kinds are served in ESO's group and version, beside vaultgate's own VaultDynamicSecret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findKindOf } from '../../schemas/kinds.ts';
import { CLUSTER_GENERATOR_SPECS, GENERATOR_API_VERSION, GENERATOR_KINDS } from '../../schemas/generator-kinds.ts';

test("an ESO generator manifest's apiVersion and kind find ESO's kind, not vaultgate's VaultDynamicSecret", () => {
  assert.equal(GENERATOR_API_VERSION, 'generators.external-secrets.io/v1alpha1');
  for (const kind of GENERATOR_KINDS)
    assert.equal(findKindOf(GENERATOR_API_VERSION, kind)?.group, 'generators.external-secrets.io');
  assert.equal(findKindOf(GENERATOR_API_VERSION, 'ClusterGenerator')?.scope, 'Cluster');
  assert.equal(findKindOf('vaultgate.io/v1alpha1', 'VaultDynamicSecret')?.schemaFile, 'vaultdynamicsecret.schema.json');
  assert.equal(
    findKindOf(GENERATOR_API_VERSION, 'VaultDynamicSecret')?.schemaFile,
    'vaultdynamicsecret-generator.schema.json',
  );
  assert.equal(findKindOf(GENERATOR_API_VERSION, 'UUID'), undefined);
  assert.deepEqual(CLUSTER_GENERATOR_SPECS, { Password: 'passwordSpec', VaultDynamicSecret: 'vaultDynamicSecretSpec' });
});
