// The generator handlers are registered with the ESO handlers, each for its kind in ESO's generator group,
// and add the schema's findings to the rules' (the rules themselves: generator-rules.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext } from '../../../../webhook/admission/context.ts';
import { esoHandlers } from '../../../../webhook/rules/eso/index.ts';
import { generatorHandlers } from '../../../../webhook/rules/eso/generator-handlers.ts';

test('registered with the ESO handlers, in generators.external-secrets.io/v1alpha1', () => {
  for (const h of generatorHandlers) assert.ok(esoHandlers.includes(h));
  assert.deepEqual(
    generatorHandlers.map((h) => `${h.group}/${h.version}/${h.kind}`),
    ['Password', 'VaultDynamicSecret', 'ClusterGenerator'].map((k) => `generators.external-secrets.io/v1alpha1/${k}`),
  );
});

test("a schema violation is refused with the schema's finding (a resultType ESO does not have)", () => {
  const h = generatorHandlers.find((x) => x.kind === 'VaultDynamicSecret')!;
  const o = {
    apiVersion: 'generators.external-secrets.io/v1alpha1',
    kind: 'VaultDynamicSecret',
    metadata: { name: 'g', namespace: 'team-a' },
    spec: {
      path: 'database/creds/app',
      resultType: 'Everything',
      provider: { server: 'https://v:8200', auth: { tokenSecretRef: { name: 't', key: 'k' } } },
    },
  };
  const fs = h.validate(
    o,
    undefined,
    { ...defaultContext(), vaultServers: ['https://v:8200'] },
    {
      uid: 'u',
      operation: 'CREATE',
      userInfo: { username: 'a' },
      kind: { group: 'generators.external-secrets.io', version: 'v1alpha1', kind: 'VaultDynamicSecret' },
      resource: { group: 'generators.external-secrets.io', version: 'v1alpha1', resource: 'vaultdynamicsecrets' },
      namespace: 'team-a',
      object: o,
    },
  );
  assert.deepEqual(
    fs.filter((f) => f.severity === 'deny').map((f) => f.field),
    ['spec.resultType'],
  );
});
