// policy/paths.ts, policy/parse.ts, policy/capabilities.ts: the Vault ACL domain logic the rules use.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pathProblems, pathWithin, pathsOverlap, pathForbiddenBy, expandNamespace } from '../../policy/paths.ts';
import { parsePolicyText } from '../../policy/parse.ts';
import { normalizeCapabilities, ruleCapabilities, parameterConstraintProblems } from '../../policy/capabilities.ts';

void describe('path syntax', () => {
  const codes = (p: string) => pathProblems(p, { allowNamespaceTemplate: true }).map((x) => x.code);
  void test('valid patterns', () => {
    for (const p of [
      'secret/data/app/*',
      'secret/data/+/config',
      'secret/+/x/*',
      'auth/token/lookup-self',
      'secret/data/{{namespace}}/*',
      '*',
      '+/*',
    ]) {
      assert.deepEqual(codes(p), [], p);
    }
  });
  void test('each mistake is named', () => {
    assert.deepEqual(codes('/secret/data/x'), ['leading-slash']);
    assert.deepEqual(codes('secret/*/x'), ['glob-not-last']);
    assert.deepEqual(codes('secret/+*'), ['plus-star']);
    assert.deepEqual(codes('secret/a+/x'), ['plus-partial']);
    assert.deepEqual(codes('secret//x'), ['empty-segment']);
    assert.deepEqual(codes('secret/{{identity.entity.id}}/*'), ['template']);
    assert.deepEqual(codes('secret/a b'), ['whitespace']);
    assert.deepEqual(codes(''), ['empty']);
    assert.match(pathProblems('/a')[0]?.message ?? '', /write "a"/);
  });
  void test('{{namespace}} is expanded', () => {
    assert.equal(expandNamespace('secret/data/{{namespace}}/{{ namespace }}/*', 'ns'), 'secret/data/ns/ns/*');
  });
});

void describe('path containment and overlap', () => {
  void test('containment', () => {
    assert.ok(pathWithin('secret/data/a/x', 'secret/data/a/*'));
    assert.ok(pathWithin('secret/data/a/+/x', 'secret/data/a/*'));
    assert.ok(pathWithin('secret/data/a/b', 'secret/data/+/b'));
    assert.ok(!pathWithin('secret/data/+/x', 'secret/data/a/*'));
    assert.ok(!pathWithin('secret/data/a*', 'secret/data/a/*'), 'a* also matches secret/data/ab');
    assert.ok(!pathWithin('*', 'secret/data/a/*'));
  });
  void test('forbidden paths: overlap, and pure wildcards only forbid what is at least as broad', () => {
    assert.ok(pathForbiddenBy('sys/mounts', 'sys/*'));
    assert.ok(pathForbiddenBy('+/mounts', 'sys/*'));
    assert.ok(pathForbiddenBy('s*', 'sys/*'));
    assert.ok(!pathForbiddenBy('secret/data/a/*', 'sys/*'));
    assert.ok(pathForbiddenBy('*', '*'));
    assert.ok(!pathForbiddenBy('secret/data/a/*', '*'));
  });

  const segment = fc.constantFrom('a', 'b', 'data', '+', 'ab');
  const pattern = fc
    .tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.constantFrom('', '*'))
    .map(([segs, glob]) => `${segs.join('/')}${glob}`)
    .filter((p) => !p.includes('+*'));
  void test('properties: reflexive, and containment implies overlap', () => {
    fc.assert(
      fc.property(pattern, pattern, (p, q) => {
        assert.ok(pathWithin(p, p));
        if (pathWithin(p, q)) assert.ok(pathsOverlap(p, q), `${p} within ${q} but no overlap`);
        assert.equal(pathsOverlap(p, q), pathsOverlap(q, p));
      }),
      { numRuns: 300 },
    );
  });
  void test('property: a concrete path is within a pattern exactly when the pattern matches it', () => {
    const concrete = fc
      .array(fc.constantFrom('a', 'b', 'data', 'ab'), { minLength: 1, maxLength: 5 })
      .map((s) => s.join('/'));
    fc.assert(
      fc.property(concrete, pattern, (path, pat) => {
        const re = new RegExp(
          `^${pat
            .split('/')
            .map((s) => (s === '+' ? '[^/]+' : s.replace('*', '.*')))
            .join('/')}$`,
        );
        assert.equal(pathWithin(path, pat), re.test(path), `${path} vs ${pat}`);
      }),
      { numRuns: 300 },
    );
  });
});

void describe('policy text parsing', () => {
  void test('HCL as Vault accepts it: comments, old-style policy, parameter maps in both forms, wrapping TTLs', () => {
    const r = parsePolicyText(`# tenant policy
path "secret/data/app/*" {
  capabilities = ["read", "list"]
}
/* block
   comment */
path "secret/data/app/config" {
  capabilities = ["create", "update"]
  allowed_parameters = {
    "foo" = ["bar", 1, true]
    "*"   = []
  }
  denied_parameters { "x" = [] }
  required_parameters = ["foo"]
  min_wrapping_ttl = "1s"
  max_wrapping_ttl = 90
}
path "old" { policy = "read" }
`);
    assert.ok(r.ok);
    assert.equal(r.rules.length, 3);
    assert.deepEqual(r.rules[1]?.rule, {
      path: 'secret/data/app/config',
      capabilities: ['create', 'update'],
      allowedParameters: { foo: ['bar', 1, true], '*': [] },
      deniedParameters: { x: [] },
      requiredParameters: ['foo'],
      minWrappingTTL: '1s',
      maxWrappingTTL: '90s',
    });
    assert.deepEqual(r.rules[2]?.rule.capabilities, ['read', 'list']);
    assert.deepEqual([r.rules[1]?.line, r.rules[1]?.column], [7, 6]);
  });

  void test('JSON policies', () => {
    const r = parsePolicyText('{"path": {"secret/data/a/*": {"capabilities": ["read"]}}}');
    assert.ok(r.ok);
    assert.deepEqual(r.rules[0]?.rule, { path: 'secret/data/a/*', capabilities: ['read'] });
  });

  void test('errors carry line:column, and every semantic error is reported', () => {
    const r = parsePolicyText(
      'path "a" {\n  capabilities = ["read", "READ"]\n  foo = 1\n}\npath "b" { capabilities = "read" }',
    );
    assert.ok(!r.ok);
    assert.deepEqual(
      r.errors.map((e) => [e.line, e.column]),
      [
        [2, 27],
        [3, 3],
        [5, 27],
      ],
    );
    assert.match(r.errors[0]?.message ?? '', /invalid capability "READ"/);
    assert.match(r.errors[1]?.message ?? '', /invalid key "foo"/);
  });

  void test('syntax errors', () => {
    const cases: Array<[string, number, number, RegExp]> = [
      ['path "a" {\n  capabilities = ["read"\n}', 3, 1, /expected "," or "]"/],
      ['path "a" {\n  capabilities = ["read"]\n', 1, 10, /never closed/],
      ['path "a {}', 1, 6, /string is not closed/],
      ['path "a" { capabilities: ["read"] }', 1, 24, /unexpected ":"/],
      ['{"path": {"a": {}},}', 1, 20, /invalid JSON/],
      ['', 1, 1, /no path/],
    ];
    for (const [text, line, column, message] of cases) {
      const r = parsePolicyText(text);
      assert.ok(!r.ok, text);
      assert.deepEqual([r.errors[0]?.line, r.errors[0]?.column], [line, column], text);
      assert.match(r.errors[0]?.message ?? '', message, text);
    }
  });

  void test('Enterprise-only keys are refused by name', () => {
    const r = parsePolicyText('path "a" { capabilities = ["read"]\n mfa_methods = ["x"] }');
    assert.ok(!r.ok);
    assert.match(r.errors[0]?.message ?? '', /mfa_methods" is Vault Enterprise-only/);
  });
});

void describe('capabilities', () => {
  void test('normalised: lower case, de-duplicated, in Vault order', () => {
    assert.deepEqual(normalizeCapabilities(['LIST', 'read', 'Read', 'create', 'sudo']), [
      'create',
      'read',
      'list',
      'sudo',
    ]);
    assert.deepEqual(normalizeCapabilities(['patch', 'bogus', 'deny']), ['deny', 'patch', 'bogus']);
  });
  void test('deny stands alone in effect', () => {
    assert.deepEqual(ruleCapabilities(['read', 'deny']), ['deny']);
  });
  void test('parameter constraints as Vault applies them', () => {
    const problems = parameterConstraintProblems({
      path: 'secret/data/a',
      capabilities: ['read'],
      allowedParameters: { ttl: [{ nested: true }, 30, { n: [1] }] },
      deniedParameters: { x: [] },
      requiredParameters: ['x'],
    });
    const messages = problems.map((p) => `${p.severity} ${p.field}: ${p.message}`);
    // Object values are what Vault and OpenBao accept (`"map" = [{"good" = "one"}]`); numbers never match a request.
    assert.ok(!messages.some((m) => m.startsWith('deny allowedParameters["ttl"]')), messages.join('\n'));
    assert.ok(!messages.some((m) => m.includes('allowedParameters["ttl"][0]')), messages.join('\n'));
    assert.ok(messages.some((m) => m.startsWith('warn allowedParameters["ttl"][1]') && m.includes('json.Number')));
    assert.ok(messages.some((m) => m.startsWith('warn allowedParameters["ttl"][2]') && m.includes('json.Number')));
    assert.ok(messages.some((m) => m.startsWith('deny requiredParameters[0]') && m.includes('no request can succeed')));
    assert.ok(messages.some((m) => m.startsWith('warn capabilities') && m.includes('no effect')));
    assert.ok(messages.some((m) => m.startsWith('warn path') && m.includes('KV version 2')));
  });
});
