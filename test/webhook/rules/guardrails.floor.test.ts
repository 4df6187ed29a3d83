// Issue #12 item 1: the built-in floor (no sudo, no sys/* auth/* or bare "*", nothing outside the
// namespace's own secret/ subtree, "+" segments included) denies in every namespace, whatever guardrails
// select it; warn and audit soften only a guardrail's own rules; only an enforce guardrail relaxes a
// named part of the floor (spec.relaxFloor).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decideSync } from '../../../webhook/review/review.ts';
import { defaultContext, type AdmissionContext } from '../../../webhook/admission/context.ts';
import type { AdmissionRequest } from '../../../webhook/admission/types.ts';
import { adoptionConsent, guardrailsFor } from '../../../webhook/rules/guardrails.ts';

type Obj = Record<string, unknown>;
const G = 'vaultgate.io';
function request(kind: string, spec: unknown, namespace = 'orders'): AdmissionRequest {
  return {
    uid: 'uid-1',
    kind: { group: G, version: 'v1alpha1', kind },
    resource: { group: G, version: 'v1alpha1', resource: `${kind.toLowerCase()}s` },
    name: 'app',
    namespace,
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object: { apiVersion: 'vaultgate.io/v1alpha1', kind, metadata: { name: 'app', namespace }, spec },
  };
}
function run(req: AdmissionRequest, ctx: AdmissionContext) {
  const { validation } = decideSync(req, ctx);
  return {
    allowed: validation.response.allowed,
    rules: validation.rules,
    message: validation.response.status?.message ?? '',
    warnings: validation.response.warnings ?? [],
    audit: validation.response.auditAnnotations?.['guardrail-audit'] ?? '',
  };
}
/** Namespace `orders` labelled vaultgate.io/tier=prod, and one guardrail selecting that label. */
function prod(spec: Obj, name = 'prod'): AdmissionContext {
  return defaultContext({
    guardrails: [
      { metadata: { name }, spec: { namespaceSelector: { matchLabels: { 'vaultgate.io/tier': 'prod' } }, ...spec } },
    ],
    namespaceLabels: (ns): Record<string, string> | undefined =>
      ns === 'orders' ? { 'vaultgate.io/tier': 'prod' } : undefined,
  });
}
const count = (message: string, rule: string) => message.split(`(rule ${rule})`).length - 1;

// The issue's reproduction: sudo on sys/mounts/* and a "+" segment reaching every namespace's db secret.
const issuePolicy = request('VaultPolicy', {
  rules: [
    { path: 'sys/mounts/*', capabilities: ['read', 'sudo'] },
    { path: 'secret/data/+/db', capabilities: ['read'] },
  ],
});

void describe('the built-in floor always denies', () => {
  void test('no guardrail: 4 denials (sudo, sys/*, and two paths outside the namespace subtree)', () => {
    const r = run(issuePolicy, defaultContext());
    assert.equal(r.allowed, false);
    assert.equal(count(r.message, 'guardrail.forbidden-capability'), 1);
    assert.equal(count(r.message, 'guardrail.forbidden-path'), 1);
    assert.equal(count(r.message, 'guardrail.allowed-path'), 2);
  });

  for (const mode of ['warn', 'audit'] as const) {
    void test(`a ${mode} guardrail that only sets allowedPaths does not remove it (same 4 denials, no duplicate warnings)`, () => {
      const r = run(
        issuePolicy,
        prod({ mode, allowedPaths: ['secret/data/{{namespace}}/*', 'secret/metadata/{{namespace}}/*'] }),
      );
      assert.equal(r.allowed, false, 'refused, not admitted with warnings');
      assert.match(
        r.message,
        /spec\.rules\[0\]\.capabilities\[1\]: "sudo" is forbidden by the built-in guardrail defaults \(rule guardrail\.forbidden-capability\)/,
      );
      assert.match(
        r.message,
        /spec\.rules\[0\]\.path: "sys\/mounts\/\*" is forbidden by the built-in guardrail defaults \(forbidden path "sys\/\*"\) \(rule guardrail\.forbidden-path\)/,
      );
      assert.match(
        r.message,
        /spec\.rules\[1\]\.path: "secret\/data\/\+\/db" is forbidden by the built-in guardrail defaults: it reaches outside the allowed paths "secret\/data\/orders\/\*", "secret\/metadata\/orders\/\*" \(rule guardrail\.allowed-path\)/,
      );
      assert.equal(count(r.message, 'guardrail.allowed-path'), 2);
      assert.deepEqual(r.warnings, [], 'what the floor denies is not repeated as a warning');
    });
  }

  void test("warn and audit still soften the guardrail's own extra rules", () => {
    const del = request('VaultPolicy', { rules: [{ path: 'secret/data/orders/x', capabilities: ['delete'] }] });
    const warned = run(del, prod({ mode: 'warn', forbiddenCapabilities: ['delete'] }));
    assert.equal(warned.allowed, true);
    assert.match(
      warned.warnings.join('\n'),
      /"delete" violates guardrail "prod" \(mode warn: admitted\) \(rule guardrail\.forbidden-capability\)/,
    );
    const audited = run(del, prod({ mode: 'audit', forbiddenCapabilities: ['delete'] }));
    assert.equal(audited.allowed, true);
    assert.match(audited.audit, /delete/);
  });

  void test('relaxFloor in a warn or audit guardrail relaxes nothing', () => {
    for (const mode of ['warn', 'audit']) {
      const r = run(
        issuePolicy,
        prod({
          mode,
          relaxFloor: ['sudo', 'sys-paths', 'namespace-subtree'],
          allowedPaths: ['*'],
          forbiddenPaths: [],
          forbiddenCapabilities: [],
        }),
      );
      assert.equal(r.allowed, false, mode);
      assert.equal(count(r.message, 'guardrail.forbidden-capability'), 1, mode);
    }
  });

  void test('an enforce guardrail with wide allowedPaths but no relaxFloor relaxes nothing', () => {
    const r = run(issuePolicy, prod({ allowedPaths: ['*'], forbiddenPaths: [], forbiddenCapabilities: [] }));
    assert.equal(r.allowed, false);
    assert.equal(
      count(r.message, 'guardrail.forbidden-capability') +
        count(r.message, 'guardrail.forbidden-path') +
        count(r.message, 'guardrail.allowed-path'),
      4,
    );
  });

  void test('bare "*" and auth/* are part of the floor', () => {
    const ctx = prod({ mode: 'warn', allowedPaths: ['*'], forbiddenPaths: [] });
    assert.match(
      run(request('VaultPolicy', { rules: [{ path: '*', capabilities: ['read'] }] }), ctx).message,
      /forbidden path "\*"/,
    );
    assert.match(
      run(request('VaultPolicy', { rules: [{ path: 'auth/token/create', capabilities: ['update'] }] }), ctx).message,
      /forbidden path "auth\/\*"/,
    );
  });

  void test('the floor comes first, whatever guardrails match', () => {
    const gs = guardrailsFor('orders', prod({ mode: 'warn' }));
    assert.deepEqual(
      gs.map((g) => [g.name, g.mode]),
      [
        ['built-in defaults', 'enforce'],
        ['prod', 'warn'],
      ],
    );
    assert.deepEqual(
      guardrailsFor('elsewhere', prod({})).map((g) => g.name),
      ['built-in defaults'],
    );
  });
});

void describe('an enforce guardrail relaxes named parts of the floor', () => {
  const relaxing = (relaxFloor: string[], extra: Obj = {}) =>
    prod({
      relaxFloor,
      allowedPaths: ['sys/mounts/*', 'secret/data/*'],
      forbiddenPaths: [],
      forbiddenCapabilities: [],
      ...extra,
    });

  void test('all needed parts relaxed: admitted', () => {
    const r = run(issuePolicy, relaxing(['sudo', 'sys-paths', 'namespace-subtree']));
    assert.equal(r.allowed, true, r.message);
  });

  void test('each part relaxes only itself', () => {
    const noSudo = run(issuePolicy, relaxing(['sys-paths', 'namespace-subtree']));
    assert.deepEqual(
      [noSudo.allowed, noSudo.rules.filter((x) => x.startsWith('guardrail.'))],
      [false, ['guardrail.forbidden-capability']],
    );
    const noSys = run(issuePolicy, relaxing(['sudo', 'namespace-subtree']));
    assert.deepEqual(
      [noSys.allowed, noSys.rules.filter((x) => x.startsWith('guardrail.'))],
      [false, ['guardrail.forbidden-path']],
    );
    const noSubtree = run(issuePolicy, relaxing(['sudo', 'sys-paths']));
    assert.deepEqual(
      [noSubtree.allowed, noSubtree.rules.filter((x) => x.startsWith('guardrail.'))],
      [false, ['guardrail.allowed-path']],
    );
    assert.equal(count(noSubtree.message, 'guardrail.allowed-path'), 2);
  });

  void test("the relaxing guardrail's own rules still apply", () => {
    const r = run(
      issuePolicy,
      relaxing(['sudo', 'sys-paths', 'namespace-subtree'], { forbiddenCapabilities: ['sudo'] }),
    );
    assert.equal(r.allowed, false);
    assert.match(r.message, /"sudo" is forbidden by guardrail "prod" \(rule guardrail\.forbidden-capability\)/);
  });

  void test('a relaxation applies only to the namespaces the guardrail selects (labels pick guardrails)', () => {
    const ctx = relaxing(['sudo', 'sys-paths', 'namespace-subtree']);
    const other = run(
      request('VaultPolicy', { rules: [{ path: 'sys/mounts/*', capabilities: ['read', 'sudo'] }] }, 'payments'),
      ctx,
    );
    assert.equal(other.allowed, false);
  });
});

void describe('adoption consent', () => {
  void test('only an enforce guardrail with allowAdoption: true consents', () => {
    assert.equal(adoptionConsent('orders', defaultContext()), undefined);
    assert.equal(adoptionConsent('orders', prod({})), undefined);
    assert.equal(adoptionConsent('orders', prod({ mode: 'warn', allowAdoption: true })), undefined);
    assert.equal(adoptionConsent('orders', prod({ allowAdoption: true })), 'prod');
    assert.equal(adoptionConsent('payments', prod({ allowAdoption: true })), undefined, 'not selected');
  });
});
