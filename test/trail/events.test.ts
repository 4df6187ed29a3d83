// Admission/Vault-write events carry no secret values.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { auditAdmission, auditVaultWrite } from '../../trail/events.ts';
import type { AdmissionDecision, AdmissionRequest } from '../../webhook/admission/types.ts';

const SECRET_VALUE = 'hunter2-very-secret';

function request(over: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'u-1',
    kind: { group: 'external-secrets.io', version: 'v1', kind: 'ExternalSecret' },
    resource: { group: 'external-secrets.io', version: 'v1', resource: 'externalsecrets' },
    namespace: 'payments',
    name: 'db',
    operation: 'CREATE',
    userInfo: { username: 'alice', uid: 'x', groups: ['devs'], extra: { token: [SECRET_VALUE] } },
    object: { metadata: { name: 'db' }, spec: { target: { template: { data: { password: SECRET_VALUE } } } } },
    ...over,
  };
}

void describe('auditAdmission', () => {
  void test('denied: outcome, rules, message; no object content and no userInfo.extra', () => {
    const decision: AdmissionDecision = {
      response: {
        uid: 'u-1',
        allowed: false,
        status: { code: 403, message: 'spec.provider: only vault is supported' },
        warnings: ['w1'],
      },
      rules: ['eso.provider', 'eso.provider'],
      patchOps: [],
    };
    const e = auditAdmission(decision, request(), { webhook: 'validating' });
    assert.deepEqual(e, {
      type: 'admission',
      webhook: 'validating',
      uid: 'u-1',
      kind: 'external-secrets.io/v1/ExternalSecret',
      namespace: 'payments',
      name: 'db',
      operation: 'CREATE',
      user: { username: 'alice', groups: ['devs'] },
      outcome: 'denied',
      rules: ['eso.provider'],
      warnings: ['w1'],
      message: 'spec.provider: only vault is supported',
      patch: [],
    });
    assert.doesNotMatch(JSON.stringify(e), new RegExp(SECRET_VALUE));
  });

  void test('mutated: patch ops keep op and path, never the value', () => {
    const decision: AdmissionDecision = {
      response: { uid: 'u-1', allowed: true },
      rules: [],
      patchOps: [{ op: 'add', path: '/spec/target/template/data/password', value: SECRET_VALUE }],
    };
    const e = auditAdmission(
      decision,
      request({ kind: { group: '', version: 'v1', kind: 'Secret' }, name: undefined }),
    );
    assert.equal(e.outcome, 'mutated');
    assert.equal(e.kind, 'v1/Secret');
    assert.equal(e.name, 'db', 'the name comes from metadata.name when the request has none');
    assert.deepEqual(e.patch, [{ op: 'add', path: '/spec/target/template/data/password' }]);
    assert.doesNotMatch(JSON.stringify(e), new RegExp(SECRET_VALUE));
  });

  void test('allowed without changes', () => {
    assert.equal(
      auditAdmission({ response: { uid: 'u', allowed: true }, rules: [], patchOps: [] }, request()).outcome,
      'allowed',
    );
  });
});

void test('auditVaultWrite hashes content instead of keeping it; equal role bodies hash equally regardless of key order', () => {
  const a = auditVaultWrite({
    action: 'repair',
    object: 'role',
    vaultName: 'vaultgate.p.r',
    mount: 'kubernetes',
    reason: 'drift',
    content: { b: 1, a: [SECRET_VALUE] },
  });
  const b = auditVaultWrite({
    action: 'repair',
    object: 'role',
    vaultName: 'vaultgate.p.r',
    mount: 'kubernetes',
    reason: 'drift',
    content: { a: [SECRET_VALUE], b: 1 },
  });
  assert.equal(a.contentSha256, b.contentSha256);
  assert.match(a.contentSha256 ?? '', /^[0-9a-f]{64}$/);
  assert.doesNotMatch(JSON.stringify(a), new RegExp(SECRET_VALUE));
});
