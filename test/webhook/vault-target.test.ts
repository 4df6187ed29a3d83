// The webhook refuses what the target Vault refuses: capabilities per flavour (OpenBao 2.7 by default,
// HashiCorp Vault as the other), in structured rules and in raw policy text, each finding naming the
// field and the rule. OpenBao 2.7.2 itself answers `400 invalid capability "subscribe"` (and "recover").
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decideSync } from '../../webhook/review/review.ts';
import { defaultContext, type AdmissionContext } from '../../webhook/admission/context.ts';
import type { AdmissionRequest } from '../../webhook/admission/types.ts';
import { DEFAULT_TARGET } from '../../policy/capabilities.ts';

const VAULT = defaultContext({ vaultTarget: { flavor: 'vault', version: '1.19' } });
const OPENBAO = defaultContext();

function policy(spec: Record<string, unknown>): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
    resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultpolicies' },
    name: 'p',
    namespace: 'team-a',
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object: {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultPolicy',
      metadata: { name: 'p', namespace: 'team-a' },
      spec,
    },
  };
}

function review(spec: Record<string, unknown>, ctx: AdmissionContext) {
  const { validation } = decideSync(policy(spec), ctx);
  return {
    allowed: validation.response.allowed,
    rules: validation.rules,
    message: validation.response.status?.message ?? '',
  };
}

void describe('the target flavour in admission', () => {
  void test('OpenBao 2.7 is the default target', () => {
    assert.deepEqual(defaultContext().vaultTarget, { flavor: 'openbao', version: '2.7' });
    assert.deepEqual(DEFAULT_TARGET, { flavor: 'openbao', version: '2.7' });
  });

  for (const cap of ['subscribe', 'recover']) {
    void test(`"${cap}" in spec.rules: denied for OpenBao naming the field and the rule, admitted for HashiCorp Vault`, () => {
      const spec = { rules: [{ path: 'secret/data/team-a/app', capabilities: ['read', cap] }] };
      const bao = review(spec, OPENBAO);
      assert.equal(bao.allowed, false);
      assert.ok(bao.rules.includes('vaultpolicy.capability'), bao.rules.join(','));
      assert.match(
        bao.message,
        new RegExp(
          `spec\\.rules\\[0\\]\\.capabilities\\[1\\]: "${cap}" is a HashiCorp Vault capability: OpenBao 2\\.7 refuses it \\(invalid capability "${cap}"\\); OpenBao 2\\.7 accepts deny, create, read, update, delete, list, sudo, patch, scan`,
        ),
      );
      assert.match(bao.message, /rule vaultpolicy\.capability/);
      assert.equal(review(spec, VAULT).allowed, true, review(spec, VAULT).message);
    });
  }

  void test('"subscribe" in raw spec.policy: denied for OpenBao with its line and column, under vaultpolicy.capability', () => {
    const spec = { policy: 'path "secret/data/team-a/app" {\n  capabilities = ["read", "subscribe"]\n}' };
    const bao = review(spec, OPENBAO);
    assert.equal(bao.allowed, false);
    assert.deepEqual(bao.rules, ['vaultpolicy.capability']);
    assert.match(
      bao.message,
      /spec\.policy: line 2, column 27: path "secret\/data\/team-a\/app": "subscribe" is a HashiCorp Vault capability: OpenBao 2\.7 refuses it/,
    );
    assert.equal(review(spec, VAULT).allowed, true);
  });

  void test('"scan" in raw spec.policy: admitted for OpenBao, denied for HashiCorp Vault', () => {
    const spec = { policy: 'path "secret/metadata/team-a/*" {\n  capabilities = ["list", "scan"]\n}' };
    assert.equal(review(spec, OPENBAO).allowed, true, review(spec, OPENBAO).message);
    const v = review(spec, VAULT);
    assert.equal(v.allowed, false);
    assert.deepEqual(v.rules, ['vaultpolicy.capability']);
    assert.match(v.message, /"scan" is an OpenBao capability: HashiCorp Vault 1\.19 refuses it/);
  });

  void test('object values in parameter constraints are admitted (Vault and OpenBao accept them)', () => {
    const spec = {
      policy:
        'path "kv/team-a/app" {\n  capabilities = ["create", "update"]\n  allowed_parameters = { "map" = [{"good" = "one"}] }\n}',
    };
    const bao = review(spec, OPENBAO);
    // The built-in guardrail defaults refuse paths outside secret/; only the parameter rule matters here.
    assert.ok(!bao.rules.includes('vaultpolicy.parameter-constraint'), bao.message);
    assert.ok(!bao.rules.includes('vaultpolicy.policy-parse'), bao.message);
  });
});
