// The simulator's policy parsing and ACL check, behind two functions so the evaluator can be swapped.
// Both delegate to the project's pure modules (policy/parse.ts, policy/acl.ts), which mirror Vault's
// vault/policy.go and vault/acl.go; the simulator therefore enforces what the webhook and audit reason about.
import {
  compileAcl,
  evaluate,
  type AclRule,
  type CompiledAcl,
  type PolicyRules,
  type RequestCapability,
} from '../../policy/acl.ts';
import { DEFAULT_TARGET } from '../../policy/capabilities.ts';
import { parsePolicyText } from '../../policy/parse.ts';

export type ParsedPolicy = { ok: true; rules: PolicyRules['rules'] } | { ok: false; error: string };

/**
 * The capabilities OpenBao 2.7.2 accepts in a policy (test/contract/vault.contract.ts, run against the real
 * server: `subscribe` and `recover` are 400 `invalid capability`, `scan` is accepted). The simulator is an
 * OpenBao 2.7 stand-in, whatever flavour the project's policy/ code is told to target.
 */
export const OPENBAO_CAPABILITIES: ReadonlySet<string> = new Set([
  'deny',
  'create',
  'read',
  'update',
  'delete',
  'list',
  'sudo',
  'patch',
  'scan',
]);

/** OpenBao treats `{{…}}` in a path as an identity template; the simulator has no identity store, so none resolves. */
const TEMPLATE = /\{\{.*?\}\}/;

/** Parse policy text (HCL or JSON) as OpenBao would accept it; the error reads like OpenBao's `failed to parse policy`. */
export function parsePolicy(text: string): ParsedPolicy {
  const r = parsePolicyText(text, DEFAULT_TARGET);
  if (r.ok) {
    // The generated VaultPolicyRule's parameter maps allow `undefined` values; AclRule's do not. Same data.
    const rules = r.rules.map((x) => x.rule as AclRule);
    for (const rule of rules) {
      const bad = rule.capabilities.find((c) => !OPENBAO_CAPABILITIES.has(c));
      // OpenBao's message names the path twice (vault/policy.go wraps the error once per level).
      if (bad !== undefined)
        return {
          ok: false,
          error: `failed to parse policy: path "${rule.path}": path "${rule.path}": invalid capability "${bad}"`,
        };
    }
    return { ok: true, rules };
  }
  const first = r.errors[0];
  // Refusals in OpenBao's words (test/contract/openbao-answers.json, "refused policy #…"): an unknown key is
  // its hclutil.CheckHCLKeys error wrapped once; a capability it lacks names the path twice.
  const path = first && /^path "(.*?)": /.exec(first.message)?.[1];
  const key = first && /invalid key "([^"]+)"/.exec(first.message)?.[1];
  if (first && path !== undefined && key)
    return {
      ok: false,
      error: `failed to parse policy: path "${path}": 1 error occurred:\n\t* invalid key "${key}" on line ${first.line}\n\n`,
    };
  const capability =
    first &&
    (/invalid capability "([^"]+)"/.exec(first.message) ??
      /"([^"]+)" is not a Vault capability/.exec(first.message))?.[1];
  if (path !== undefined && capability)
    return {
      ok: false,
      error: `failed to parse policy: path "${path}": path "${path}": invalid capability "${capability}"`,
    };
  return {
    ok: false,
    error: first
      ? `failed to parse policy: At ${first.line}:${first.column}: ${first.message}`
      : 'failed to parse policy',
  };
}

/**
 * Compile the named policies of a token (unknown names contribute nothing, as in Vault). Rules whose path
 * holds a `{{…}}` template are skipped, as OpenBao skips a rule whose template it cannot resolve.
 */
export function compilePolicies(policies: ReadonlyArray<{ name: string; rules: PolicyRules['rules'] }>): CompiledAcl {
  return compileAcl(policies.map((p) => ({ ...p, rules: p.rules.filter((r) => !TEMPLATE.test(r.path)) })));
}

/** Would Vault let a token with `acl` perform `capability` on `path`? */
export function aclAllows(
  acl: CompiledAcl,
  path: string,
  capability: RequestCapability,
  opts: { parameters?: Record<string, unknown>; requiresSudo?: boolean } = {},
): boolean {
  return evaluate(acl, {
    path,
    capability,
    ...(opts.parameters ? { parameters: opts.parameters } : {}),
    ...(opts.requiresSudo ? { requiresSudo: true } : {}),
  }).allowed;
}
