import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CREATED_BY,
  LAST_APPLIED_BY,
  MANAGED_BY_LABEL,
  defaultVaultName,
  mutateOwnership,
  vaultNameFindings,
} from '../../../webhook/rules/common.ts';
import { defaultContext } from '../../../webhook/admission/context.ts';
import type { AdmissionRequest } from '../../../webhook/admission/types.ts';

function req(operation: AdmissionRequest['operation'], over: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
    resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultpolicies' },
    namespace: 'team-a',
    operation,
    userInfo: { username: 'alice' },
    ...over,
  };
}

test('CREATE labels the object as managed and names its creator and last applier', () => {
  const obj: Record<string, unknown> = { metadata: { name: 'p' }, spec: { a: 1 } };
  mutateOwnership(obj, req('CREATE'));
  assert.deepEqual(obj.metadata, {
    name: 'p',
    labels: { [MANAGED_BY_LABEL]: 'vaultgate' },
    annotations: { [LAST_APPLIED_BY]: 'alice', [CREATED_BY]: 'alice' },
  });
});

test('an UPDATE that leaves spec alone (the controller adding its finalizer) does not take the credit', () => {
  const metadata = { name: 'p', annotations: { [LAST_APPLIED_BY]: 'alice', [CREATED_BY]: 'alice' } };
  const same: Record<string, unknown> = { metadata: structuredClone(metadata), spec: { a: 1 } };
  mutateOwnership(same, req('UPDATE', { userInfo: { username: 'controller' }, oldObject: { spec: { a: 1 } } }));
  assert.deepEqual((same.metadata as typeof metadata).annotations, metadata.annotations);
  const changed: Record<string, unknown> = { metadata: structuredClone(metadata), spec: { a: 2 } };
  mutateOwnership(changed, req('UPDATE', { userInfo: { username: 'bob' }, oldObject: { spec: { a: 1 } } }));
  assert.deepEqual((changed.metadata as typeof metadata).annotations, {
    [LAST_APPLIED_BY]: 'bob',
    [CREATED_BY]: 'alice',
  });
});

test('vaultName is filled in as <prefix>.<namespace>.<name>; a different one given is refused naming the field', () => {
  const ctx = defaultContext({ namePrefix: 'vg' });
  const obj: Record<string, unknown> = { metadata: { name: 'db' }, spec: {} };
  defaultVaultName(obj, req('CREATE'), ctx);
  assert.deepEqual(obj.spec, { vaultName: 'vg.team-a.db' });
  assert.deepEqual(vaultNameFindings(obj, req('CREATE'), ctx, 'vaultpolicy.vault-name'), []);
  const other = { metadata: { name: 'db' }, spec: { vaultName: 'vg.team-b.db' } };
  const [f] = vaultNameFindings(other, req('CREATE'), ctx, 'vaultpolicy.vault-name');
  assert.equal(f?.field, 'spec.vaultName');
  assert.equal(f?.severity, 'deny');
  assert.match(f?.message ?? '', /"vg.team-b.db" is not the derived Vault name "vg.team-a.db"/);
});
