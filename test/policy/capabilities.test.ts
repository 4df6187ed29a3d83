// policy/capabilities.ts: capabilities and parameter constraints as the target Vault flavour accepts them.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeCapabilities, ruleCapabilities, parameterConstraintProblems } from '../../policy/capabilities.ts';

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
