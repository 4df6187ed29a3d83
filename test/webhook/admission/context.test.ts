import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext } from '../../../webhook/admission/context.ts';

test('the default context: no guardrails (built-in defaults apply), no namespace known, prefix vaultgate', () => {
  const ctx = defaultContext();
  assert.deepEqual(ctx.guardrails, []);
  assert.equal(ctx.namespaceLabels('team-a'), undefined);
  assert.equal(ctx.namePrefix, 'vaultgate');
  assert.equal(ctx.controllerClass, '');
  assert.ok(ctx.vaultTarget);
});

test('overrides win, and each context has its own Vault target (editing one leaves the next alone)', () => {
  const a = defaultContext({ namePrefix: 'vg', vaultServers: ['https://vault:8200'] });
  assert.equal(a.namePrefix, 'vg');
  assert.deepEqual(a.vaultServers, ['https://vault:8200']);
  const before = structuredClone(defaultContext().vaultTarget);
  Object.assign(a.vaultTarget ?? {}, { version: '0.0.1' });
  assert.deepEqual(defaultContext().vaultTarget, before);
});
