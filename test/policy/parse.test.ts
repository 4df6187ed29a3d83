// policy/parse.ts: policy text (HCL) parsed as Vault parses it; the rules and the controller read it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicyText } from '../../policy/parse.ts';

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
