import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mutateVaultGuardrail, validateVaultGuardrail } from '../../../webhook/rules/vaultguardrail.ts';
import { defaultContext } from '../../../webhook/admission/context.ts';
import type { AdmissionRequest } from '../../../webhook/admission/types.ts';

const req: AdmissionRequest = {
  uid: 'u',
  kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultGuardrail' },
  resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultguardrails' },
  operation: 'CREATE',
  userInfo: { username: 'admin' },
};
const guardrail = (spec: Record<string, unknown>) => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultGuardrail',
  metadata: { name: 'g' },
  spec,
});

test('the CRD defaults are applied, so `vaultgate validate` shows what the cluster stores; given values stay', () => {
  const g = guardrail({});
  mutateVaultGuardrail(g, defaultContext(), req);
  assert.equal(g.spec.mode, 'enforce');
  assert.ok(Array.isArray(g.spec.forbiddenPaths) && g.spec.forbiddenPaths.includes('sys/*'));
  assert.ok(Array.isArray(g.spec.forbiddenCapabilities) && g.spec.forbiddenCapabilities.length > 0);
  const w = guardrail({ mode: 'warn', forbiddenPaths: [] });
  mutateVaultGuardrail(w, defaultContext(), req);
  assert.equal(w.spec.mode, 'warn');
  assert.deepEqual(w.spec.forbiddenPaths, []);
});

test('an unknown mode and a bad namespace selector are refused, naming the field', () => {
  const findings = validateVaultGuardrail(
    guardrail({ mode: 'strict', namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Near' }] } }),
    undefined,
    defaultContext(),
    req,
  );
  const rules = findings.filter((f) => f.severity === 'deny').map((f) => `${f.rule} ${f.field}`);
  assert.ok(
    rules.some((r) => r.endsWith(' spec.mode')),
    rules.join('; '),
  );
  assert.ok(
    rules.some((r) => r.includes('spec.namespaceSelector')),
    rules.join('; '),
  );
  assert.deepEqual(validateVaultGuardrail(guardrail({ mode: 'audit' }), undefined, defaultContext(), req), []);
});
