// One handler shape for every ESO kind: the schema's findings plus the rules', ratcheted on an update that
// leaves spec unchanged, and nothing at all for an object of another controller class.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext } from '../../../../webhook/admission/context.ts';
import type { Finding, KubeObject } from '../../../../webhook/admission/kinds.ts';
import type { AdmissionRequest } from '../../../../webhook/admission/types.ts';
import { esoKindHandler } from '../../../../webhook/rules/eso/handler.ts';

// A schema violation (version must be v1 or v2) the rules below do not explain.
const store: KubeObject = {
  apiVersion: 'external-secrets.io/v1',
  kind: 'SecretStore',
  metadata: { name: 'vault', namespace: 'team-a' },
  spec: { provider: { vault: { server: 'https://v:8200', version: 'v3', auth: { tokenSecretRef: { name: 't' } } } } },
};
const rule: Finding = { field: 'spec.provider.vault.server', rule: 'test.rule', message: 'refused', severity: 'deny' };
const req = { namespace: 'team-a' } as AdmissionRequest;
const kind = { group: 'external-secrets.io', version: 'v1', kind: 'SecretStore' };

test("findings are the schema's plus the rules'", () => {
  const fs = esoKindHandler(kind, () => [rule]).validate(store, undefined, defaultContext(), req);
  assert.ok(fs.some((f) => f.rule.startsWith('schema') && f.field.includes('version') && f.severity === 'deny'));
  assert.ok(fs.some((f) => f.rule === 'test.rule' && f.severity === 'deny'));
});

test('an update that leaves spec unchanged only warns (ratchet)', () => {
  const fs = esoKindHandler(kind, () => [rule]).validate(store, store, defaultContext(), req);
  assert.ok(fs.length >= 2);
  assert.deepEqual(
    fs.filter((f) => f.severity === 'deny'),
    [],
  );
});

test("another controller class's object (rules say undefined) is admitted untouched: not even its schema", () => {
  assert.deepEqual(esoKindHandler(kind, () => undefined).validate(store, undefined, defaultContext(), req), []);
});

test('size limits only where the kind has them', () => {
  assert.equal('limits' in esoKindHandler(kind, () => []), false);
  const tooLong: Finding = { field: 'spec', rule: 'test.size', message: 'too long', severity: 'deny' };
  assert.deepEqual(
    esoKindHandler(
      kind,
      () => [],
      () => [tooLong],
    ).limits?.(store),
    [tooLong],
  );
});
