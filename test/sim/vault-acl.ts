// The simulator's policy parsing and ACL check, behind two functions so the evaluator can be swapped.
// Both delegate to the project's pure modules (policy/parse.ts, policy/acl.ts), which mirror Vault's
// vault/policy.go and vault/acl.go; the simulator therefore enforces what the webhook and audit reason about.
import { compileAcl, evaluate, type AclRule, type CompiledAcl, type PolicyRules, type RequestCapability } from '../../policy/acl.ts';
import { parsePolicyText } from '../../policy/parse.ts';

export type ParsedPolicy = { ok: true; rules: PolicyRules['rules'] } | { ok: false; error: string };

/** Parse policy text (HCL or JSON) as Vault would accept it; the error reads like Vault's `failed to parse policy`. */
export function parsePolicy(text: string): ParsedPolicy {
  const r = parsePolicyText(text);
  // The generated VaultPolicyRule's parameter maps allow `undefined` values; AclRule's do not. Same data.
  if (r.ok) return { ok: true, rules: r.rules.map((x) => x.rule as AclRule) };
  const first = r.errors[0];
  return { ok: false, error: first ? `failed to parse policy: At ${first.line}:${first.column}: ${first.message}` : 'failed to parse policy' };
}

/** Compile the named policies of a token (unknown names contribute nothing, as in Vault). */
export function compilePolicies(policies: ReadonlyArray<{ name: string; rules: PolicyRules['rules'] }>): CompiledAcl {
  return compileAcl(policies);
}

/** Would Vault let a token with `acl` perform `capability` on `path`? */
export function aclAllows(acl: CompiledAcl, path: string, capability: RequestCapability, opts: { parameters?: Record<string, unknown>; requiresSudo?: boolean } = {}): boolean {
  return evaluate(acl, {
    path, capability,
    ...(opts.parameters ? { parameters: opts.parameters } : {}),
    ...(opts.requiresSudo ? { requiresSudo: true } : {}),
  }).allowed;
}
