// The ACL evaluator against Vault's documented semantics (docs/concepts/policies) and the cases of
// Vault's own vault/acl_test.go, translated to the rule model. Old-style `policy = "write"` stanzas are
// written out as the capabilities Vault maps them to.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as acl from '../../policy/acl.ts';
import {
  patternMatches,
  patternProblems,
  type AclRequest,
  type AclRule,
  type CompiledAcl,
  type PolicyRules,
  type RequestCapability,
  type VaultTarget,
} from '../../policy/acl.ts';

// Vault's semantics, so HashiCorp Vault is the target (`recover` exists there, not on OpenBao); what
// OpenBao answers differently is in test/policy/acl.openbao.test.ts.
const VAULT: VaultTarget = { flavor: 'vault', version: '1.19' };
const compileAcl = (pols: readonly PolicyRules[]) => acl.compileAcl(pols, VAULT);
const evaluate = (pols: readonly PolicyRules[] | CompiledAcl, req: AclRequest) => acl.evaluate(pols, req, VAULT);
const effectiveCapabilities = (pols: readonly PolicyRules[] | CompiledAcl, path: string) =>
  acl.effectiveCapabilities(pols, path, VAULT);

const READ = ['read', 'list'];
const WRITE = ['create', 'read', 'update', 'delete', 'list'];
const SUDO = [...WRITE, 'sudo'];

const p = (name: string, ...rules: AclRule[]): PolicyRules => ({ name, rules });
const r = (path: string, capabilities: string[], extra: Partial<AclRule> = {}): AclRule => ({
  path,
  capabilities,
  ...extra,
});
const allowed = (
  pols: PolicyRules[],
  path: string,
  capability: RequestCapability,
  parameters?: Record<string, unknown>,
) => evaluate(pols, { path, capability, parameters }).allowed;

void describe('documentation: policy syntax examples', () => {
  const docPolicy = [
    p(
      'doc',
      r('secret/*', ['create', 'read', 'update', 'patch', 'delete', 'list']),
      r('secret/super-secret', ['deny']),
      r('secret/restricted', ['create'], { allowedParameters: { foo: [], bar: ['zip', 'zap'] } }),
    ),
  ];

  void test('"Even though we allowed secret/*, this line explicitly denies secret/super-secret. This takes precedence."', () => {
    assert.equal(allowed(docPolicy, 'secret/anything', 'read'), true);
    const d = evaluate(docPolicy, { path: 'secret/super-secret', capability: 'read' });
    assert.equal(d.allowed, false);
    assert.equal(d.code, 'explicit-deny');
    assert.equal(d.matchedPattern, 'secret/super-secret');
    assert.deepEqual(d.policies, ['doc']);
    assert.match(d.reason, /denied by policy "doc"/);
  });

  void test('"the key secret/restricted can only contain foo (any value) and bar (one of zip or zap)"', () => {
    assert.equal(allowed(docPolicy, 'secret/restricted', 'create', { foo: 'anything', bar: 'zip' }), true);
    assert.equal(allowed(docPolicy, 'secret/restricted', 'create', { bar: 'zap' }), true);
    assert.equal(allowed(docPolicy, 'secret/restricted', 'create', { bar: 'zoom' }), false);
    const d = evaluate(docPolicy, { path: 'secret/restricted', capability: 'create', parameters: { other: 1 } });
    assert.equal(d.code, 'parameter-not-allowed');
    assert.match(d.reason, /"other"/);
    // The exact stanza wins over secret/*, and it grants only create.
    assert.equal(allowed(docPolicy, 'secret/restricted', 'read'), false);
  });

  void test('"Permit reading only secret/foo. An attached token cannot read secret/food or secret/foo/bar."', () => {
    const pol = [p('x', r('secret/foo', ['read']))];
    assert.equal(allowed(pol, 'secret/foo', 'read'), true);
    assert.equal(allowed(pol, 'secret/food', 'read'), false);
    assert.equal(allowed(pol, 'secret/foo/bar', 'read'), false);
    assert.equal(evaluate(pol, { path: 'secret/food', capability: 'read' }).code, 'no-match');
  });

  void test('"secret/bar/* ... could read secret/bar/zip, secret/bar/zip/zap, but not secret/bars/zip"', () => {
    const pol = [p('x', r('secret/bar/*', ['read']))];
    assert.equal(allowed(pol, 'secret/bar/zip', 'read'), true);
    assert.equal(allowed(pol, 'secret/bar/zip/zap', 'read'), true);
    assert.equal(allowed(pol, 'secret/bars/zip', 'read'), false);
  });

  void test('"secret/zip-* ... could read secret/zip-zap or secret/zip-zap/zong, but not secret/zip/zap"', () => {
    const pol = [p('x', r('secret/zip-*', ['read']))];
    assert.equal(allowed(pol, 'secret/zip-zap', 'read'), true);
    assert.equal(allowed(pol, 'secret/zip-zap/zong', 'read'), true);
    assert.equal(allowed(pol, 'secret/zip/zap', 'read'), false);
  });

  void test('"secret/+/teamb: reading the teamb path under any top-level path under secret/"', () => {
    const pol = [p('x', r('secret/+/teamb', ['read']), r('secret/+/+/teamb', ['read']))];
    assert.equal(allowed(pol, 'secret/foo/teamb', 'read'), true);
    assert.equal(allowed(pol, 'secret/foo/bar/teamb', 'read'), true, '"Permit reading secret/foo/bar/teamb"');
    assert.equal(allowed(pol, 'secret/bar/foo/teamb', 'read'), true);
    assert.equal(allowed(pol, 'secret/teamb', 'read'), false);
    assert.equal(allowed(pol, 'secret/a/b/c/teamb', 'read'), false);
  });

  void test('"if you define a policy for secret/foo*, the policy would also match secret/foobar"', () => {
    assert.equal(allowed([p('x', r('secret/foo*', ['read']))], 'secret/foobar', 'read'), true);
  });

  void test('"If the same pattern appears in multiple policies, we take the union of the capabilities"', () => {
    const pols = [p('a', r('secret/data/x/*', ['read'])), p('b', r('secret/data/x/*', ['list', 'update']))];
    assert.deepEqual(effectiveCapabilities(pols, 'secret/data/x/y'), ['read', 'list', 'update']);
    const d = evaluate(pols, { path: 'secret/data/x/y', capability: 'update' });
    assert.equal(d.allowed, true);
    assert.deepEqual(d.policies, ['b'], 'the granting policy of that capability is named');
  });

  void test('"If different patterns appear in the applicable policies, we take only the highest-priority match"', () => {
    const pols = [p('a', r('secret/data/x/*', ['read'])), p('b', r('secret/data/x/y', ['update']))];
    assert.equal(allowed(pols, 'secret/data/x/y', 'read'), false);
    assert.equal(allowed(pols, 'secret/data/x/y', 'update'), true);
    const d = evaluate(pols, { path: 'secret/data/x/y', capability: 'read' });
    assert.equal(d.code, 'capability-missing');
    assert.equal(d.matchedPattern, 'secret/data/x/y');
    assert.deepEqual(
      d.outranked.map((o) => [o.pattern, o.rule]),
      [['secret/data/x/*', 0]],
    );
  });

  void test('"deny - Disallows access. This always takes precedence regardless of any other defined capabilities, including sudo"', () => {
    const pols = [p('a', r('sys/audit/*', ['read', 'sudo', 'update'])), p('b', r('sys/audit/*', ['deny']))];
    const d = evaluate(pols, { path: 'sys/audit/file', capability: 'sudo' });
    assert.equal(d.allowed, false);
    assert.equal(d.code, 'explicit-deny');
    assert.deepEqual(d.capabilities, ['deny']);
    assert.deepEqual(effectiveCapabilities(pols, 'sys/audit/file'), ['deny']);
    // Order of policies does not matter.
    assert.equal(evaluate([pols[1]!, pols[0]!], { path: 'sys/audit/file', capability: 'read' }).code, 'explicit-deny');
  });

  void test("deny in a stanza discards the stanza's other capabilities", () => {
    assert.deepEqual(effectiveCapabilities([p('a', r('x/y', ['read', 'deny', 'update']))], 'x/y'), ['deny']);
  });

  void test('"Policies are deny by default, so an empty policy grants no permission"', () => {
    assert.equal(evaluate([p('empty')], { path: 'secret/foo', capability: 'read' }).code, 'no-match');
    assert.deepEqual(effectiveCapabilities([], 'secret/foo'), ['deny']);
  });

  void test('sudo: "Tokens are not permitted to interact with these paths unless they have the sudo capability (in addition to...)"', () => {
    const pol = [p('a', r('sys/audit/*', ['read'])), p('b', r('sys/mounts/*', ['read', 'sudo']))];
    const d = evaluate(pol, { path: 'sys/audit/x', capability: 'read', requiresSudo: true });
    assert.equal(d.allowed, false);
    assert.equal(d.code, 'sudo-required');
    assert.equal(allowed(pol, 'sys/audit/x', 'read'), true);
    const ok = evaluate(pol, { path: 'sys/mounts/x', capability: 'read', requiresSudo: true });
    assert.equal(ok.allowed, true);
    assert.equal(ok.rootPrivs, true);
    assert.equal(evaluate(pol, { path: 'sys/mounts/x', capability: 'sudo' }).allowed, true);
    assert.equal(evaluate(pol, { path: 'sys/audit/x', capability: 'sudo' }).allowed, false);
  });
});

void describe('documentation: the five priority rules', () => {
  // Each pair: the lower-priority pattern grants read, the higher grants update; on the path, update must
  // be allowed and read not (the scheme of TestACL_SegmentWildcardPriority).
  const cases: Array<{ name: string; low: string; high: string; path: string; rule: number }> = [
    {
      name: 'documentation example: "secret/*" vs "secret/+/+/foo/*": "we end at rule (3), and give secret/+/+/foo/* lower priority"',
      low: 'secret/+/+/foo/*',
      high: 'secret/*',
      path: 'secret/a/b/foo/c',
      rule: 3,
    },
    {
      name: 'rule 1 "If the first wildcard (+) or glob (*) occurs earlier in P1, P1 is lower priority": +/* vs foo/+/*',
      low: '+/*',
      high: 'foo/+/*',
      path: 'foo/bar/bar/baz',
      rule: 1,
    },
    {
      name: 'rule 1 edge (acl_test): "+/*" vs "*": the glob counts from position 0 but "+/*" has its wildcard at 0 too, more + segments lose',
      low: '+/*',
      high: '*',
      path: 'foo/bar/bar/baz',
      rule: 3,
    },
    {
      name: 'rule 1 (acl_test): foo/+/(ar/baz vs foo/(ar/+/baz, "first wildcard position is lower priority"',
      low: 'foo/+/(ar/baz',
      high: 'foo/(ar/+/baz',
      path: 'foo/(ar/(ar/baz',
      rule: 1,
    },
    {
      name: 'rule 1: a plain glob whose * comes later beats a + earlier: secret/+/x vs secret/data/*',
      low: 'secret/+/x',
      high: 'secret/data/*',
      path: 'secret/data/x',
      rule: 1,
    },
    {
      name: 'rule 2 "If P1 ends in * and P2 doesn\'t, P1 is lower priority": foo/bar/+/baz* vs foo/bar/+/baz',
      low: 'foo/bar/+/baz*',
      high: 'foo/bar/+/baz',
      path: 'foo/bar/bar/baz',
      rule: 2,
    },
    {
      name: 'rule 2 with a plain glob (acl_test "1/2/*" vs "1/2/+/+")',
      low: '1/2/*',
      high: '1/2/+/+',
      path: '1/2/3/4',
      rule: 2,
    },
    {
      name: 'rule 3 "If P1 has more + (wildcard) segments, P1 is lower priority": foo/+/+/baz vs foo/+/bar/baz',
      low: 'foo/+/+/baz',
      high: 'foo/+/bar/baz',
      path: 'foo/bar/bar/baz',
      rule: 3,
    },
    {
      name: 'rule 3 (acl_test): foo/+/+/* vs foo/+/bar/baz',
      low: 'foo/+/+/*',
      high: 'foo/+/bar/baz',
      path: 'foo/bar/bar/baz',
      rule: 2,
    },
    {
      name: 'rule 4 "If P1 is shorter, it is lower priority": foo/bar/+/b* vs foo/bar/+/ba*',
      low: 'foo/bar/+/b*',
      high: 'foo/bar/+/ba*',
      path: 'foo/bar/bar/baz',
      rule: 4,
    },
    {
      name: 'rule 4 among plain globs: longest prefix wins (secret/* vs secret/data/*)',
      low: 'secret/*',
      high: 'secret/data/*',
      path: 'secret/data/x',
      rule: 1,
    },
    {
      name: 'rule 5 "If P1 is smaller lexicographically, it is lower priority": +/+/a vs +/a/+ (equal under rules 1-4)',
      low: '+/+/a',
      high: '+/a/+',
      path: 'a/a/a',
      rule: 5,
    },
  ];
  for (const c of cases) {
    void test(c.name, () => {
      const pols = [p('low', r(c.low, ['read'])), p('high', r(c.high, ['update']))];
      const up = evaluate(pols, { path: c.path, capability: 'update' });
      assert.equal(up.allowed, true, `${c.high} should win on ${c.path}`);
      assert.equal(up.matchedPattern, c.high);
      assert.equal(allowed(pols, c.path, 'read'), false);
      // Policy order must not matter.
      assert.equal(evaluate([pols[1]!, pols[0]!], { path: c.path, capability: 'update' }).matchedPattern, c.high);
      const lost = up.outranked.find((o) => o.pattern === c.low);
      assert.ok(lost, 'the losing pattern is reported');
      assert.equal(lost.rule, c.rule);
    });
  }

  void test('identical patterns in two policies are one entry (merged), not a priority contest', () => {
    const both = [p('low', r('m/+/a', ['read'])), p('high', r('m/+/a', ['update']))];
    assert.deepEqual(effectiveCapabilities(both, 'm/z/a'), ['read', 'update']);
  });

  void test('an exact match wins over every glob and wildcard', () => {
    const pols = [p('a', r('secret/*', ['read']), r('secret/+/foo', ['read'])), p('b', r('secret/x/foo', ['update']))];
    const d = evaluate(pols, { path: 'secret/x/foo', capability: 'update' });
    assert.equal(d.matchedPattern, 'secret/x/foo');
    assert.equal(d.matchKind, 'exact');
    assert.deepEqual(
      d.outranked.map((o) => o.rule),
      [0, 0],
    );
  });
});

void describe('vault/acl_test.go TestACL_Single and TestACL_Layered', () => {
  const aclPolicy = p(
    'DeV',
    r('dev/*', SUDO),
    r('stage/*', WRITE),
    r('stage/aws/*', [...READ, 'update', 'sudo']),
    r('stage/aws/policy/*', SUDO),
    r('prod/*', READ),
    r('prod/aws/*', ['deny']),
    r('sys/*', ['deny']),
    r('foo/bar', ['read', 'create', 'sudo']),
    r('baz/quux', ['read', 'create', 'patch']),
    r('test/+/segment', ['read']),
    r('+/segment/at/front', ['read']),
    r('test/segment/at/end/+', ['read']),
    r('test/segment/at/end/v2/+/', ['read']),
    r('test/+/wildcard/+/*', ['read']),
    r('test/+/wildcardglob/+/end*', ['read']),
    r('1/2/*', ['create']),
    r('1/2/+', ['read']),
    r('1/2/+/+', ['update', 'recover']),
  );
  const aclPolicy2 = p(
    'OpS',
    r('dev/hide/*', ['deny']),
    r('stage/aws/policy/*', ['deny', 'read', 'update', 'sudo']),
    r('prod/*', WRITE),
    r('sys/seal', SUDO),
    r('foo/bar', ['deny']),
    r('baz/quux', ['deny']),
  );
  type Case = [RequestCapability, string, boolean, boolean];
  const check = (pols: PolicyRules[], cases: Case[]) => {
    const acl = compileAcl(pols);
    for (const [op, path, ok, rootPrivs] of cases) {
      const d = evaluate(acl, { path, capability: op });
      assert.equal(d.allowed, ok, `${op} ${path}: ${d.reason}`);
      assert.equal(d.rootPrivs, rootPrivs, `${op} ${path} rootPrivs`);
    }
  };

  void test('single policy: globs, old-style write/sudo mappings, segment wildcards, wildcard vs glob', () => {
    check(
      [aclPolicy],
      [
        ['read', 'root', false, false],
        ['read', 'dev/foo', true, true],
        ['update', 'dev/foo', true, true],
        ['delete', 'stage/foo', true, false],
        ['list', 'stage/aws/foo', true, true],
        ['update', 'stage/aws/foo', true, true],
        ['update', 'stage/aws/policy/foo', true, true],
        ['delete', 'prod/foo', false, false],
        ['update', 'prod/foo', false, false],
        ['read', 'prod/foo', true, false],
        ['list', 'prod/foo', true, false],
        ['read', 'prod/aws/foo', false, false],
        ['read', 'foo/bar', true, true],
        ['list', 'foo/bar', false, true],
        ['update', 'foo/bar', false, true],
        ['create', 'foo/bar', true, true],
        ['read', 'baz/quux', true, false],
        ['create', 'baz/quux', true, false],
        ['patch', 'baz/quux', true, false],
        ['list', 'baz/quux', false, false],
        ['update', 'baz/quux', false, false],
        ['read', 'test/foo/bar/segment', false, false],
        ['read', 'test/foo/segment', true, false],
        ['read', 'test/bar/segment', true, false],
        ['read', 'test/segment/at/frond', false, false],
        ['read', 'test/segment/at/front', true, false],
        ['read', 'test/segment/at/end/foo', true, false],
        ['read', 'test/segment/at/end/foo/', false, false],
        ['read', 'test/segment/at/end/v2/foo/', true, false],
        ['read', 'test/segment/wildcard/at/foo/', true, false],
        ['read', 'test/segment/wildcard/at/end', true, false],
        ['read', 'test/segment/wildcard/at/end/', true, false],
        ['read', '1/2/3/4', false, false],
        ['read', '1/2/3', true, false],
        ['update', '1/2/3', false, false],
        ['update', '1/2/3/4', true, false],
        ['create', '1/2/3/4/5', true, false],
        ['recover', '1/2/3/4', true, false],
      ],
    );
  });

  void test('layered policies: deny on the same pattern overrides, union elsewhere', () => {
    check(
      [aclPolicy, aclPolicy2],
      [
        ['read', 'dev/foo', true, true],
        ['update', 'dev/foo', true, true],
        ['read', 'dev/hide/foo', false, false],
        ['update', 'dev/hide/foo', false, false],
        ['delete', 'stage/foo', true, false],
        ['list', 'stage/aws/foo', true, true],
        ['update', 'stage/aws/foo', true, true],
        ['update', 'stage/aws/policy/foo', false, false],
        ['delete', 'prod/foo', true, false],
        ['update', 'prod/foo', true, false],
        ['read', 'prod/foo', true, false],
        ['list', 'prod/foo', true, false],
        ['read', 'prod/aws/foo', false, false],
        ['read', 'sys/status', false, false],
        ['update', 'sys/seal', true, true],
        ['read', 'foo/bar', false, false],
        ['list', 'foo/bar', false, false],
        ['update', 'foo/bar', false, false],
        ['create', 'foo/bar', false, false],
        ['read', 'baz/quux', false, false],
        ['patch', 'baz/quux', false, false],
      ],
    );
  });

  void test('TestACL_Capabilities: "dev" → deny, "dev/" → sudo read list update delete create, "stage/aws/test" → sudo read list update', () => {
    assert.deepEqual(effectiveCapabilities([aclPolicy], 'dev'), ['deny']);
    assert.deepEqual(effectiveCapabilities([aclPolicy], 'dev/'), [
      'sudo',
      'read',
      'list',
      'update',
      'delete',
      'create',
    ]);
    assert.deepEqual(effectiveCapabilities([aclPolicy], 'stage/aws/test'), ['sudo', 'read', 'list', 'update']);
  });

  void test('TestACLGrantingPolicies: the granting policies are those that grant the requested capability on the matched pattern', () => {
    const granting = p(
      'granting_policy',
      r('kv/foo', ['update', 'read']),
      r('kv/path/*', ['read']),
      r('kv/path/longer', ['update', 'read']),
      r('kv/path/longer2', ['update']),
      r('kv/deny', ['deny']),
      r('ns1/kv/foo', ['update', 'read', 'recover']),
    );
    const merged = p(
      'granting_policy_merged',
      r('kv/foo', ['update', 'read']),
      r('kv/bar', ['update', 'read']),
      r('kv/path/*', ['read']),
      r('kv/path/longer', ['read']),
      r('kv/path/longer3', ['read']),
      r('kv/deny', ['update']),
    );
    const cases: Array<[string, RequestCapability, PolicyRules[], string[], boolean]> = [
      ['kv/foo', 'read', [granting], ['granting_policy'], true],
      ['kv/foo', 'update', [granting], ['granting_policy'], true],
      ['kv/bad', 'read', [granting], [], false],
      ['kv/deny', 'read', [granting], ['granting_policy'], false],
      ['kv/path/foo', 'read', [granting], ['granting_policy'], true],
      ['kv/path/longer', 'read', [granting], ['granting_policy'], true],
      ['kv/foo', 'read', [granting, merged], ['granting_policy', 'granting_policy_merged'], true],
      ['kv/path/longer3', 'read', [granting, merged], ['granting_policy_merged'], true],
      ['kv/bar', 'read', [granting, merged], ['granting_policy_merged'], true],
      ['kv/deny', 'read', [granting, merged], ['granting_policy'], false],
      ['kv/path/longer', 'update', [granting, merged], ['granting_policy'], true],
      ['kv/path/foo', 'read', [granting, merged], ['granting_policy', 'granting_policy_merged'], true],
      ['ns1/kv/foo', 'recover', [granting, merged], ['granting_policy'], true],
    ];
    for (const [path, op, pols, names, ok] of cases) {
      const d = evaluate(pols, { path, capability: op });
      assert.equal(d.allowed, ok, `${op} ${path}`);
      // For a deny, `policies` names the denying policy.
      assert.deepEqual(d.policies, names, `${op} ${path}`);
    }
  });

  void test('the root policy allows everything', () => {
    const d = evaluate([{ name: 'root', rules: [] }], { path: 'sys/mounts/foo', capability: 'update' });
    assert.equal(d.allowed, true);
    assert.equal(d.code, 'root');
  });
});

void describe('list on a trailing-slash prefix', () => {
  void test('"since listing always operates on a prefix, policies must operate on a prefix": secret/metadata/app/ is listable via secret/metadata/app/*', () => {
    const pol = [p('a', r('secret/metadata/app/*', ['list']))];
    assert.equal(allowed(pol, 'secret/metadata/app/', 'list'), true);
    assert.equal(
      allowed(pol, 'secret/metadata/app', 'list'),
      false,
      'the bare prefix without "/" is not under the glob',
    );
  });

  void test('an exact pattern without the trailing slash also allows LIST of "path/" (not other operations)', () => {
    const pol = [p('a', r('secret/metadata/app', ['list', 'read']))];
    assert.equal(allowed(pol, 'secret/metadata/app/', 'list'), true);
    assert.equal(allowed(pol, 'secret/metadata/app/', 'read'), false);
  });

  void test('LIST of "path/" also tries the wildcard patterns for "path" (vault PR #23874: +/sys/policies/acl lists like +/sys/policies/acl/)', () => {
    const pol = [p('a', r('secret/metadata/+', ['list']))];
    assert.equal(allowed(pol, 'secret/metadata/app/', 'list'), true);
    assert.equal(
      evaluate(pol, { path: 'secret/metadata/app/', capability: 'read' }).code,
      'no-match',
      'only LIST gets the fallback',
    );
  });
});

void describe('merging the same pattern (TestACL_PolicyMerge)', () => {
  void test('wrapping TTLs: the lesser of the specified values wins (min 50, max 200)', () => {
    const pol = [
      p(
        'ops',
        r('hello/universe', WRITE, {
          allowedParameters: { foo: [] },
          requiredParameters: ['foo'],
          maxWrappingTTL: 300,
          minWrappingTTL: 100,
        }),
        r('hello/universe', WRITE, {
          allowedParameters: { bar: [] },
          requiredParameters: ['bar'],
          maxWrappingTTL: '200s',
          minWrappingTTL: '50',
        }),
      ),
    ];
    const req = (wrapTTL: number | undefined, parameters: Record<string, unknown>) =>
      evaluate(pol, { path: 'hello/universe', capability: 'update', wrapTTL, parameters });
    assert.equal(req(60, { foo: 1, bar: 2 }).allowed, true);
    assert.equal(req(250, { foo: 1, bar: 2 }).code, 'wrapping-ttl', 'max is now 200');
    assert.equal(req(40, { foo: 1, bar: 2 }).code, 'wrapping-ttl', 'min is now 50');
    assert.equal(req(60, { foo: 1 }).code, 'required-parameter', 'required parameters are unioned');
    assert.equal(
      req(60, { foo: 1, bar: 2, baz: 3 }).code,
      'parameter-not-allowed',
      'allowed parameters are unioned, nothing more',
    );
  });

  void test('allowed "*" merged with named keys keeps everything allowed; named values stay restricted', () => {
    const pol = [
      p(
        'ops',
        r('allow/all', WRITE, { allowedParameters: { test: [], test1: ['foo'] } }),
        r('allow/all', WRITE, { allowedParameters: { '*': [] } }),
      ),
    ];
    assert.equal(allowed(pol, 'allow/all', 'update', { anything: 'x', test1: 'foo' }), true);
    assert.equal(allowed(pol, 'allow/all', 'update', { test1: 'bar' }), false);
  });

  void test('denied "*" merged with a named key denies every parameter', () => {
    const pol = [
      p('ops', r('deny/all', WRITE, { deniedParameters: { test: [] } })),
      p('two', r('deny/all', WRITE, { deniedParameters: { '*': [] } })),
    ];
    assert.equal(
      evaluate(pol, { path: 'deny/all', capability: 'update', parameters: { other: 1 } }).code,
      'denied-parameter',
    );
    assert.equal(allowed(pol, 'deny/all', 'update'), true, 'no parameters, nothing to deny');
  });

  void test('value lists append on key conflict; an empty list (any value) overrides', () => {
    const pol = [
      p(
        'ops',
        // Vault's test uses the numbers 1-4; strings here, as a number in a policy never matches a real
        // request's json.Number (see test/policy/acl.openbao.test.ts).
        r('value/merge', WRITE, { allowedParameters: { test: ['1', '2'] } }),
        r('value/merge', WRITE, { allowedParameters: { test: ['3', '4'] } }),
        r('value/empty', WRITE, { allowedParameters: { empty: [] }, deniedParameters: { empty: ['1'] } }),
        r('value/empty', WRITE, { allowedParameters: { empty: ['1'] }, deniedParameters: { empty: [] } }),
      ),
    ];
    for (const v of ['1', '2', '3', '4'])
      assert.equal(allowed(pol, 'value/merge', 'update', { test: v }), true, `value ${v}`);
    assert.equal(allowed(pol, 'value/merge', 'update', { test: '5' }), false);
    // denied "empty" = [] after the merge: any value of it is denied.
    assert.equal(allowed(pol, 'value/empty', 'update', { empty: '2' }), false);
  });

  void test('a deny arriving later on the same pattern drops the earlier grants and constraints', () => {
    const pols = [p('a', r('secret/x', ['read'], { allowedParameters: { v: [] } })), p('b', r('secret/x', ['deny']))];
    const d = evaluate(pols, { path: 'secret/x', capability: 'read' });
    assert.equal(d.code, 'explicit-deny');
    assert.deepEqual(d.policies, ['b']);
  });

  void test('different patterns never merge: a narrower pattern with fewer capabilities hides a broader one', () => {
    const pols = [p('a', r('secret/data/app/*', ['read', 'update'])), p('b', r('secret/data/app/db', []))];
    assert.deepEqual(effectiveCapabilities(pols, 'secret/data/app/db'), ['deny']);
    assert.equal(evaluate(pols, { path: 'secret/data/app/db', capability: 'read' }).code, 'capability-missing');
  });
});

void describe('pattern helpers', () => {
  void test("patternProblems names Vault's surprises: +*, * not last, + inside a segment", () => {
    assert.match(patternProblems('secret/+*').join(), /forbidden/);
    assert.match(patternProblems('secret/*/x').join(), /literally/);
    assert.match(patternProblems('secret/a+b').join(), /whole path segment/);
    assert.deepEqual(patternProblems('secret/+/x/*'), []);
  });

  void test('"+*" is rejected at compile time and reported', () => {
    const acl = compileAcl([p('bad', r('secret/+*', ['read']), r('secret/ok', ['read', 'bogus']))]);
    assert.equal(acl.problems.length, 2);
    assert.match(acl.problems.join('\n'), /invalid capability "bogus"/);
  });

  void test('a * in the middle is a literal character, as in Vault', () => {
    assert.equal(patternMatches('secret/*/x', 'secret/a/x'), false);
    assert.equal(patternMatches('secret/*/x', 'secret/*/x'), true);
  });

  void test('"+" matches one whole segment, an empty one included (Vault splits the path on "/")', () => {
    assert.equal(patternMatches('foo/+', 'foo/'), true);
    assert.equal(patternMatches('foo/+', 'foo/a/b'), false);
    assert.equal(patternMatches('foo/+/*', 'foo/a/b/c'), true);
  });
});
