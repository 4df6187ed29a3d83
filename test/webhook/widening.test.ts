import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reviewValidation } from '../../webhook/review/review.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import type { AdmissionRequest } from '../../webhook/admission/types.ts';

const policy = (spec: Record<string, unknown>) => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name: 'app', namespace: 'team-a' },
  spec,
});
const update = (oldSpec: Record<string, unknown>, newSpec: Record<string, unknown>): AdmissionRequest => ({
  uid: 'u1',
  operation: 'UPDATE',
  namespace: 'team-a',
  name: 'app',
  userInfo: { username: 'bob' },
  kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
  resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultpolicies' },
  object: policy(newSpec),
  oldObject: policy(oldSpec),
});

test('an update that adds a capability is allowed with a warning saying what it widens', async () => {
  const d = await reviewValidation(
    update(
      { rules: [{ path: 'secret/data/team-a/app/*', capabilities: ['read'] }] },
      {
        rules: [
          { path: 'secret/data/team-a/app/*', capabilities: ['read', 'update'] },
          { path: 'secret/data/team-a/db', capabilities: ['read'] },
        ],
      },
    ),
    defaultContext(),
  );
  assert.equal(d.response.allowed, true);
  const w = (d.response.warnings ?? []).join('\n');
  assert.match(w, /widens access: \+update on secret\/data\/team-a\/app\/\*; \+read on secret\/data\/team-a\/db/);
  assert.ok(d.rules.includes('vaultpolicy.widens-access'));
});

test('the warning compares raw policy text with structured rules too', async () => {
  const d = await reviewValidation(
    update(
      { policy: 'path "secret/data/{{namespace}}/app/*" { capabilities = ["read"] }' },
      { rules: [{ path: 'secret/data/team-a/app/*', capabilities: ['read', 'list'] }] },
    ),
    defaultContext(),
  );
  assert.match((d.response.warnings ?? []).join('\n'), /\+list on secret\/data\/team-a\/app\/\*/);
});

test('an update that narrows or keeps access gives no widening warning', async () => {
  const d = await reviewValidation(
    update(
      { rules: [{ path: 'secret/data/team-a/app/*', capabilities: ['read', 'update'] }] },
      { rules: [{ path: 'secret/data/team-a/app/*', capabilities: ['read'] }] },
    ),
    defaultContext(),
  );
  assert.equal(d.response.allowed, true);
  assert.ok(!(d.response.warnings ?? []).some((w) => /widens/.test(w)));
});
