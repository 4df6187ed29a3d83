// Every vaultgate rule: one manifest it refuses (or warns about) and one it accepts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decideSync } from '../../../webhook/review/review.ts';
import { defaultContext, type AdmissionContext } from '../../../webhook/admission/context.ts';
import type { AdmissionRequest } from '../../../webhook/admission/types.ts';

type Obj = Record<string, unknown>;
const G = 'vaultgate.io';
function request(kind: string, spec: unknown, opts: { name?: string; namespace?: string } = {}): AdmissionRequest {
  const namespaced = kind !== 'VaultGuardrail';
  const namespace = namespaced ? (opts.namespace ?? 'team-a') : undefined;
  const name = opts.name ?? 'x';
  return {
    uid: 'uid-1',
    kind: { group: G, version: 'v1alpha1', kind },
    resource: { group: G, version: 'v1alpha1', resource: `${kind.toLowerCase()}s` },
    name,
    ...(namespace ? { namespace } : {}),
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object: {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind,
      metadata: { name, ...(namespace ? { namespace } : {}) },
      spec,
    },
  };
}
function run(req: AdmissionRequest, ctx: AdmissionContext = defaultContext()) {
  const { validation } = decideSync(req, ctx);
  return {
    allowed: validation.response.allowed,
    rules: validation.rules,
    message: validation.response.status?.message ?? '',
    warnings: validation.response.warnings ?? [],
  };
}

const okPolicy = { rules: [{ path: 'secret/data/team-a/app/*', capabilities: ['read'] }] };
const guard = (spec: Obj, name = 'g'): AdmissionContext =>
  defaultContext({ guardrails: [{ metadata: { name }, spec }] });

interface Case {
  rule: string;
  refused: AdmissionRequest;
  accepted: AdmissionRequest;
  ctx?: AdmissionContext;
  severity?: 'deny' | 'warn';
  message?: RegExp;
}
const VP = (spec: unknown, o?: { name?: string; namespace?: string }) => request('VaultPolicy', spec, o);
const VRB = (spec: Obj) => request('VaultRoleBinding', { serviceAccounts: ['app'], policies: ['p'], ...spec });
const VGR = (spec: Obj) => request('VaultGuardrail', spec);

const cases: Case[] = [
  {
    rule: 'vaultpolicy.capability',
    refused: VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['reed'] }] }),
    accepted: VP(okPolicy),
    message: /spec\.rules\[0\]\.capabilities\[0\]: "reed" is not a Vault capability/,
  },
  {
    rule: 'schema.enum',
    refused: VGR({ forbiddenCapabilities: ['root'] }),
    accepted: VGR({ forbiddenCapabilities: ['sudo'] }),
    message: /spec\.forbiddenCapabilities\[0\]: "root" is not one of/,
  },
  {
    rule: 'schema.required',
    refused: VP({ rules: [{ path: 'secret/data/team-a/x' }] }),
    accepted: VP(okPolicy),
    message: /spec\.rules\[0\]\.capabilities: is required/,
  },
  {
    rule: 'schema.pattern',
    refused: VRB({ tokenTTL: '1 hour' }),
    accepted: VRB({ tokenTTL: '30m' }),
    message: /spec\.tokenTTL: "1 hour" is not a Go duration/,
  },
  {
    rule: 'vaultpolicy.rules-xor-policy',
    refused: VP({ ...okPolicy, policy: 'path "secret/data/team-a/x" { capabilities = ["read"] }' }),
    accepted: VP({ policy: 'path "secret/data/team-a/x" { capabilities = ["read"] }' }),
    message: /either spec\.rules or spec\.policy, not both/,
  },
  {
    rule: 'vaultpolicy.rules-xor-policy',
    refused: VP({}),
    accepted: VP(okPolicy),
    message: /exactly one of spec\.rules/,
  },
  {
    rule: 'vaultpolicy.policy-parse',
    refused: VP({ policy: 'path "secret/data/team-a/x" {\n  capabilities = ["read"\n}' }),
    accepted: VP({ policy: 'path "secret/data/team-a/x" {\n  capabilities = ["read"]\n}' }),
    message: /spec\.policy: line 3, column 1: expected/,
  },
  {
    rule: 'vaultpolicy.deny-not-alone',
    severity: 'warn',
    refused: VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['deny', 'read'] }] }),
    accepted: VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['deny'] }] }),
    message: /"deny" overrides every other capability/,
  },
  {
    rule: 'vaultpolicy.path-syntax',
    refused: VP({ rules: [{ path: 'secret/data/team-a/*/x', capabilities: ['read'] }] }),
    accepted: VP(okPolicy),
    message: /spec\.rules\[0\]\.path: .*only allowed as the last character/,
  },
  {
    rule: 'vaultpolicy.path-syntax',
    refused: VP({ policy: 'path "/secret/data/team-a/x" { capabilities = ["read"] }' }),
    accepted: VP({ policy: 'path "secret/data/team-a/x" { capabilities = ["read"] }' }),
    message: /spec\.policy: line 1, column 6: .*must not start with "\/"/,
  },
  {
    rule: 'vaultpolicy.parameter-constraint',
    refused: VP({
      rules: [
        {
          path: 'secret/data/team-a/x',
          capabilities: ['update'],
          requiredParameters: ['x'],
          deniedParameters: { x: [] },
        },
      ],
    }),
    accepted: VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['update'] }] }),
    message: /"x" is required but also denied with any value/,
  },
  {
    rule: 'vaultpolicy.wrapping-ttl',
    refused: VP({
      rules: [{ path: 'secret/data/team-a/x', capabilities: ['read'], minWrappingTTL: '10m', maxWrappingTTL: '1m' }],
    }),
    accepted: VP({
      rules: [{ path: 'secret/data/team-a/x', capabilities: ['read'], minWrappingTTL: '1m', maxWrappingTTL: '10m' }],
    }),
  },
  {
    rule: 'vaultpolicy.duplicate-path',
    refused: VP({
      rules: [
        { path: 'secret/data/{{namespace}}/x', capabilities: ['read'] },
        { path: 'secret/data/team-a/x', capabilities: ['list'] },
      ],
    }),
    accepted: VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['read', 'list'] }] }),
    message: /spec\.rules\[1\]\.path: "secret\/data\/team-a\/x" is already the path of spec\.rules\[0\]/,
  },
  {
    rule: 'vaultpolicy.vault-name',
    refused: VP({ ...okPolicy, vaultName: 'vaultgate.other.x' }),
    accepted: VP({ ...okPolicy, vaultName: 'vaultgate.team-a.x' }),
    message: /"vaultgate\.other\.x" is not the derived Vault name "vaultgate\.team-a\.x"/,
  },
  {
    rule: 'guardrail.allowed-path',
    refused: VP({ rules: [{ path: 'secret/data/team-b/*', capabilities: ['read'] }] }),
    accepted: VP(okPolicy),
    message: /reaches outside the allowed paths "secret\/data\/team-a\/\*"/,
  },
  {
    rule: 'guardrail.forbidden-capability',
    refused: VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['read', 'sudo'] }] }),
    accepted: VP(okPolicy),
    message:
      /spec\.rules\[0\]\.capabilities\[1\]: "sudo" is forbidden by the built-in guardrail defaults \(rule guardrail\.forbidden-capability\)/,
  },
  {
    rule: 'guardrail.forbidden-path',
    refused: VP({ rules: [{ path: 'auth/token/create', capabilities: ['update'] }] }),
    accepted: VP(okPolicy),
    message: /forbidden path "auth\/\*"/,
  },
  {
    rule: 'guardrail.forbidden-capability',
    ctx: guard({ forbiddenCapabilities: ['delete'], allowedPaths: ['secret/data/{{namespace}}/*'] }, 'default'),
    refused: VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['delete'] }] }),
    accepted: VP(okPolicy),
    message: /"delete" is forbidden by guardrail "default"/,
  },
  {
    rule: 'vaultrolebinding.foreign-service-account',
    refused: VRB({ serviceAccounts: ['other:sa'] }),
    accepted: VRB({}),
    message: /spec\.serviceAccounts\[0\]: "other:sa" names a service account of namespace "other"/,
  },
  {
    rule: 'vaultrolebinding.foreign-service-account',
    refused: VRB({ serviceAccounts: ['system:serviceaccount:kube-system:default'] }),
    accepted: VRB({}),
    message: /namespace "kube-system"/,
  },
  { rule: 'vaultrolebinding.wildcard-service-account', refused: VRB({ serviceAccounts: ['*'] }), accepted: VRB({}) },
  {
    rule: 'vaultrolebinding.ttl-order',
    refused: VRB({ tokenTTL: '2h', tokenMaxTTL: '1h' }),
    accepted: VRB({ tokenTTL: '1h', tokenMaxTTL: '2h' }),
  },
  {
    rule: 'vaultrolebinding.policy-missing',
    severity: 'warn',
    ctx: defaultContext({ policyExists: (_ns, n) => n === 'p' }),
    refused: VRB({ policies: ['q'] }),
    accepted: VRB({}),
    message: /VaultPolicy "q" does not exist in namespace "team-a"/,
  },
  { rule: 'vaultrolebinding.foreign-policy', refused: VRB({ policies: ['other/p'] }), accepted: VRB({}) },
  {
    rule: 'vaultrolebinding.no-audience',
    severity: 'warn',
    refused: VRB({ audience: undefined }),
    accepted: VRB({ audience: 'vault' }),
    message: /set audience: vault/,
  },
  {
    rule: 'vaultrolebinding.auth-mount',
    refused: VRB({ authMount: 'auth/kubernetes' }),
    accepted: VRB({ authMount: 'clusters/prod' }),
    message: /without the "auth\/" prefix/,
  },
  {
    rule: 'vaultrolebinding.vault-name',
    refused: VRB({ vaultName: 'vaultgate.team-a.y' }),
    accepted: VRB({ vaultName: 'vaultgate.team-a.x' }),
  },
  {
    rule: 'guardrail.max-token-ttl',
    ctx: guard({ maxTokenTTL: '2h' }),
    refused: VRB({ tokenTTL: '1h', tokenMaxTTL: '3h' }),
    accepted: VRB({ tokenTTL: '1h', tokenMaxTTL: '2h' }),
    message: /spec\.tokenMaxTTL: tokenMaxTTL "3h" is forbidden by guardrail "g": it exceeds maxTokenTTL "2h"/,
  },
  {
    rule: 'guardrail.require-audience',
    ctx: guard({ requireAudience: true }),
    refused: VRB({}),
    accepted: VRB({ audience: 'vault' }),
  },
  {
    rule: 'vaultguardrail.path-template',
    refused: VGR({ allowedPaths: ['secret/data/{{ns}}/*'] }),
    accepted: VGR({ allowedPaths: ['secret/data/{{namespace}}/*'] }),
    message: /templates other than \{\{namespace\}\}/,
  },
  {
    rule: 'vaultguardrail.shared-path',
    severity: 'warn',
    refused: VGR({ allowedPaths: ['secret/data/shared/*'] }),
    accepted: VGR({ allowedPaths: ['secret/data/{{namespace}}/*'] }),
  },
  {
    rule: 'vaultguardrail.allowed-but-forbidden',
    severity: 'warn',
    refused: VGR({ allowedPaths: ['sys/{{namespace}}/*'] }),
    accepted: VGR({ allowedPaths: ['secret/data/{{namespace}}/*'] }),
  },
  {
    rule: 'vaultguardrail.mode',
    refused: VGR({ mode: 'block' }),
    accepted: VGR({ mode: 'audit' }),
    message: /"block" is not a mode/,
  },
  {
    rule: 'vaultguardrail.selector',
    refused: VGR({ namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'In' }] } }),
    accepted: VGR({ namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['prod'] }] } }),
  },
];

void describe('every rule refuses one manifest and accepts another', () => {
  for (const c of cases) {
    void test(`${c.rule}${c.message ? ` (${c.message.source.slice(0, 40)})` : ''}`, () => {
      const bad = run(c.refused, c.ctx);
      assert.ok(bad.rules.includes(c.rule), `expected ${c.rule} in ${bad.rules.join(', ')}\n${bad.message}`);
      if ((c.severity ?? 'deny') === 'deny') {
        assert.equal(bad.allowed, false);
        assert.match(bad.message, new RegExp(`\\(rule ${c.rule.replace(/\./g, '\\.')}\\)`));
        if (c.message) assert.match(bad.message, c.message);
      } else {
        assert.ok(
          bad.warnings.some((w) => w.includes(`(rule ${c.rule})`)),
          bad.warnings.join('\n'),
        );
        if (c.message)
          assert.ok(
            bad.warnings.some((w) => c.message?.test(w)),
            bad.warnings.join('\n'),
          );
      }
      const good = run(c.accepted, c.ctx);
      assert.ok(
        !good.rules.includes(c.rule),
        `accepted manifest still fired ${c.rule}: ${good.message} ${good.warnings.join(' ')}`,
      );
      assert.equal(good.allowed, true, good.message);
    });
  }
});

void describe('guardrails apply per mode and per namespace', () => {
  const sudo = VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['sudo'] }] });
  const del = VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['delete'] }] });
  void test('warn mode admits with a warning naming the guardrail (its own rules)', () => {
    const r = run(del, guard({ mode: 'warn', forbiddenCapabilities: ['delete'] }));
    assert.equal(r.allowed, true);
    assert.match(r.warnings.join('\n'), /"delete" violates guardrail "g" \(mode warn: admitted\)/);
  });
  void test('audit mode admits silently and records the violation (its own rules)', () => {
    const { validation } = decideSync(del, guard({ mode: 'audit', forbiddenCapabilities: ['delete'] }));
    assert.equal(validation.response.allowed, true);
    assert.equal(validation.response.warnings, undefined);
    assert.ok(validation.rules.includes('guardrail.forbidden-capability'));
    assert.match(validation.response.auditAnnotations?.['guardrail-audit'] ?? '', /delete/);
  });
  void test('several matching guardrails each apply in their own mode', () => {
    const ctx = defaultContext({
      guardrails: [
        { metadata: { name: 'soft' }, spec: { mode: 'warn', forbiddenCapabilities: ['delete'] } },
        { metadata: { name: 'hard' }, spec: { mode: 'enforce', forbiddenCapabilities: ['sudo'] } },
      ],
    });
    const r = run(VP({ rules: [{ path: 'secret/data/team-a/x', capabilities: ['delete'] }] }), ctx);
    assert.equal(r.allowed, true);
    assert.match(r.warnings.join('\n'), /guardrail "soft"/);
    assert.equal(run(sudo, ctx).allowed, false);
  });
  void test('a guardrail selecting other namespaces leaves the built-in defaults in force', () => {
    const ctx = defaultContext({
      guardrails: [
        {
          metadata: { name: 'prod' },
          spec: {
            namespaceSelector: { matchLabels: { tier: 'prod' } },
            allowedPaths: ['kv/*'],
            forbiddenPaths: [],
            forbiddenCapabilities: [],
            relaxFloor: ['namespace-subtree'],
          },
        },
      ],
      namespaceLabels: (ns): Record<string, string> => (ns === 'prod-a' ? { tier: 'prod' } : {}),
    });
    const wide = (ns: string) => VP({ rules: [{ path: 'kv/anything', capabilities: ['read'] }] }, { namespace: ns });
    assert.equal(run(wide('prod-a'), ctx).allowed, true);
    const other = run(wide('team-a'), ctx);
    assert.equal(other.allowed, false);
    assert.match(other.message, /built-in guardrail defaults/);
  });
  void test('rules that only deny are not held to path limits', () => {
    assert.equal(run(VP({ rules: [{ path: 'sys/*', capabilities: ['deny'] }] })).allowed, true);
  });
});
