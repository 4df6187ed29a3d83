import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KindRegistry, gvkKey, type KindHandler } from '../../../webhook/admission/kinds.ts';

const handler = (group: string, version: string, kind: string): KindHandler => ({
  group,
  version,
  kind,
  validate: () => [],
});

test('handlers are found by group/version/kind, and a kind registered twice is a startup error', () => {
  const v1 = handler('external-secrets.io', 'v1', 'ExternalSecret');
  const reg = new KindRegistry([v1, handler('external-secrets.io', 'v1beta1', 'ExternalSecret')]);
  assert.equal(reg.get({ group: 'external-secrets.io', version: 'v1', kind: 'ExternalSecret' }), v1);
  assert.equal(reg.get({ group: 'external-secrets.io', version: 'v2', kind: 'ExternalSecret' }), undefined);
  assert.throws(() => reg.register(handler('external-secrets.io', 'v1', 'ExternalSecret')), {
    message: 'admission handler for external-secrets.io/v1/ExternalSecret registered twice',
  });
  assert.equal(reg.all().length, 2);
});

test('the registry names the versions it serves, so an unexpected version is named instead of waved through', () => {
  const reg = new KindRegistry([
    handler('external-secrets.io', 'v1', 'ExternalSecret'),
    handler('external-secrets.io', 'v1beta1', 'ExternalSecret'),
    handler('external-secrets.io', 'v1', 'SecretStore'),
  ]);
  assert.ok(reg.servesGroup('external-secrets.io'));
  assert.ok(!reg.servesGroup('vaultgate.io'));
  assert.deepEqual(reg.versionsOf('external-secrets.io', 'ExternalSecret'), ['v1', 'v1beta1']);
  assert.deepEqual(reg.versionsOf('external-secrets.io', 'PushSecret'), []);
  assert.equal(gvkKey({ group: '', version: 'v1', kind: 'Secret' }), '/v1/Secret');
});
