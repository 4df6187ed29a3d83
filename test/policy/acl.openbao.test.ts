// policy/parse.ts + policy/acl.ts against the answers a real OpenBao 2.7.2 gave: the recorded answers
// (test/contract/openbao-answers.json, `npm run record:openbao`, re-checked against OpenBao in the real
// tier) to the policies and requests of test/policy/openbao-cases.ts: LIST of a path ending in '/' matched
// as sent, object values in parameter constraints, the root token's ["root"], OpenBao's `scan`, and
// OpenBao's parameter matching (no comma splitting, numbers never match). The cases' own `expect` and
// `allowed` fields are checked against the recording too, so they cannot drift from what OpenBao said.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { aclAnswerKey, ANSWERS_FILE, type AnswersFile } from '../contract/openbao-exchanges.ts';
import {
  compileAcl,
  effectiveCapabilities,
  evaluate,
  sysCapabilities,
  type AclRule,
  type CompiledAcl,
  type PolicyRules,
  type VaultTarget,
} from '../../policy/acl.ts';
import { parsePolicyText } from '../../policy/parse.ts';
import { OPENBAO_CASES, OPENBAO_REFUSED, ROOT_CAPABILITIES, type AclCase, type CaseCheck } from './openbao-cases.ts';

const OPENBAO: VaultTarget = { flavor: 'openbao', version: '2.7' };
const RECORD_COMMAND_HINT = 're-record with npm run record:openbao';
const RECORDED = (JSON.parse(readFileSync(ANSWERS_FILE, 'utf8')) as AnswersFile).answers;

/** What OpenBao answered to check `i` of case `c`: its capabilities, or whether the request passed the ACL (403 = denied). */
function recordedAnswer(c: AclCase, i: number): { capabilities: string[] } | { allowed: boolean } | undefined {
  const key = aclAnswerKey(c, i);
  const a = key === undefined ? undefined : RECORDED[key];
  if (!a) return undefined;
  return a.capabilities ? { capabilities: a.capabilities } : { allowed: a.status !== 403 };
}
const VAULT: VaultTarget = { flavor: 'vault', version: '1.19' };

/** The case's policy as vaultgate reads it: parsed for OpenBao, compiled for OpenBao. */
export function caseAcl(c: AclCase, target: VaultTarget = OPENBAO): CompiledAcl {
  const parsed = parsePolicyText(c.policy, target);
  assert.ok(parsed.ok, `${c.name}: ${parsed.ok ? '' : parsed.errors.map((e) => e.message).join('; ')}`);
  const acl = compileAcl([{ name: c.name, rules: parsed.rules.map((r) => r.rule as AclRule) }], target);
  assert.deepEqual(acl.problems, [], c.name);
  return acl;
}

export function describeCheck(check: CaseCheck): string {
  return 'capabilities' in check
    ? `sys/capabilities ${check.capabilities} → ${JSON.stringify(check.expect)}`
    : `${check.op.toUpperCase()} ${check.path}${check.body ? ` ${JSON.stringify(check.body)}` : ''} → ${check.allowed ? 'allowed' : 'denied'}`;
}

void describe('OpenBao 2.7.2 answers, reproduced by policy/acl.ts', () => {
  void test('every ACL check but SCAN has a recorded answer, and the cases say what OpenBao said', () => {
    for (const c of OPENBAO_CASES) {
      c.checks.forEach((check, i) => {
        const got = recordedAnswer(c, i);
        if ('op' in check && check.op === 'scan') {
          assert.equal(got, undefined);
          return;
        }
        assert.ok(got, `${c.name}#${i}: no recorded answer (${RECORD_COMMAND_HINT})`);
        if ('capabilities' in check)
          assert.deepEqual(got, { capabilities: check.expect }, `${c.name}#${i} ${describeCheck(check)}`);
        else assert.deepEqual(got, { allowed: check.allowed }, `${c.name}#${i} ${describeCheck(check)}`);
      });
    }
  });

  for (const c of OPENBAO_CASES) {
    void test(c.name, () => {
      const acl = caseAcl(c);
      c.checks.forEach((check, i) => {
        // OpenBao's recorded answer where there is one (SCAN is not recorded: the case's own answer, checked by hand).
        const answer = recordedAnswer(c, i);
        if ('capabilities' in check) {
          const expect = answer && 'capabilities' in answer ? answer.capabilities : check.expect;
          assert.deepEqual(sysCapabilities(acl, check.capabilities), expect, describeCheck(check));
        } else {
          const allowed = answer && 'allowed' in answer ? answer.allowed : check.allowed;
          const d = evaluate(acl, {
            path: check.path,
            capability: check.op,
            ...(check.body ? { parameters: check.body } : {}),
          });
          assert.equal(d.allowed, allowed, `${describeCheck(check)}: ${d.reason}`);
        }
      });
    });
  }

  void test('the root token: sys/capabilities is ["root"] on any path', () => {
    const root: PolicyRules[] = [{ name: 'root', rules: [] }];
    assert.deepEqual(effectiveCapabilities(root, 'secret/data/x'), ROOT_CAPABILITIES);
    assert.deepEqual(effectiveCapabilities(root, 'sys/audit'), ROOT_CAPABILITIES);
    assert.equal(evaluate(root, { path: 'sys/mounts/x', capability: 'update' }).code, 'root');
  });

  void test('what OpenBao refuses, the parser refuses for an OpenBao target, naming the rule', () => {
    for (const { policy, error } of OPENBAO_REFUSED) {
      const parsed = parsePolicyText(policy, OPENBAO);
      assert.equal(parsed.ok, false, policy);
      if (parsed.ok) continue;
      assert.match(parsed.errors.map((e) => e.message).join('; '), error, policy);
    }
    const sub = parsePolicyText('path "secret/data/x" { capabilities = ["read", "subscribe"] }', OPENBAO);
    assert.equal(sub.ok, false);
    if (!sub.ok) {
      assert.equal(sub.errors[0]?.rule, 'vaultpolicy.capability');
      assert.match(
        sub.errors[0]?.message ?? '',
        /path "secret\/data\/x": "subscribe" is a HashiCorp Vault capability: OpenBao 2\.7 refuses it/,
      );
      assert.deepEqual([sub.errors[0]?.line, sub.errors[0]?.column], [1, 48]);
    }
  });
});

void describe('the target flavour', () => {
  void test('HashiCorp Vault: subscribe and recover parse, scan is refused', () => {
    assert.equal(parsePolicyText('path "x" { capabilities = ["subscribe", "recover"] }', VAULT).ok, true);
    const scan = parsePolicyText('path "x" { capabilities = ["scan"] }', VAULT);
    assert.equal(scan.ok, false);
    if (!scan.ok)
      assert.match(scan.errors[0]?.message ?? '', /"scan" is an OpenBao capability: HashiCorp Vault 1\.19 refuses it/);
  });

  void test('OpenBao before 2.2 has no scan', () => {
    const scan = parsePolicyText('path "x" { capabilities = ["scan"] }', { flavor: 'openbao', version: '2.1' });
    assert.equal(scan.ok, false);
    if (!scan.ok)
      assert.match(scan.errors[0]?.message ?? '', /a capability of OpenBao 2\.2 and later: OpenBao 2\.1 refuses it/);
  });

  void test('without a target the parser accepts either flavour (the controller re-reads what it wrote)', () => {
    assert.equal(parsePolicyText('path "x" { capabilities = ["scan", "subscribe"] }').ok, true);
  });

  void test('compiled for OpenBao, a Vault-only capability grants nothing and is a problem; for Vault it grants', () => {
    const pols: PolicyRules[] = [{ name: 'p', rules: [{ path: 'secret/data/x', capabilities: ['read', 'recover'] }] }];
    const bao = compileAcl(pols, OPENBAO);
    assert.match(bao.problems.join('\n'), /invalid capability "recover" \(OpenBao 2\.7 refuses it\)/);
    assert.equal(evaluate(bao, { path: 'secret/data/x', capability: 'recover' }).allowed, false);
    assert.equal(evaluate(pols, { path: 'secret/data/x', capability: 'recover' }, VAULT).allowed, true);
  });

  void test('HashiCorp Vault splits comma-separated and list values; OpenBao compares the whole value', () => {
    const pols: PolicyRules[] = [
      {
        name: 'p',
        rules: [
          {
            path: 'kv/x',
            capabilities: ['update'],
            deniedParameters: { d: ['bad'] },
            allowedParameters: { d: [], v: ['a', 'b'] },
          },
        ],
      },
    ];
    const req = (parameters: Record<string, unknown>, target: VaultTarget) =>
      evaluate(pols, { path: 'kv/x', capability: 'update', parameters }, target).allowed;
    assert.equal(req({ d: 'ok,bad' }, VAULT), false);
    assert.equal(req({ d: 'ok,bad' }, OPENBAO), true);
    assert.equal(req({ v: 'a,b' }, VAULT), true);
    assert.equal(req({ v: 'a,b' }, OPENBAO), false);
  });
});
