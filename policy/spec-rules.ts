// The ACL rules a VaultPolicy spec stands for, whichever form it uses (structured `rules` or raw
// `policy` text), with `{{namespace}}` expanded: the one place every consumer (the controller's write,
// admission's widening warning, `plan`, `audit access`) turns a spec into rules. Raw text is expanded
// too: OpenBao reads `{{…}}` in a path as an identity template and silently skips a rule it cannot
// resolve, so an unexpanded `{{namespace}}` would grant nothing while the object reports Ready.
import type { AclRule } from './acl.ts';
import { parsePolicyText } from './parse.ts';
import { expandNamespace } from './paths.ts';

export interface SpecRules {
  rules: AclRule[];
  /** Why the spec stands for no rules (each names the field); absent when it parsed. */
  errors?: string[];
}

export function specRules(spec: Record<string, unknown> | undefined, namespace: string): SpecRules {
  const hasRules = Array.isArray(spec?.rules);
  const hasPolicy = typeof spec?.policy === 'string';
  if (hasRules && hasPolicy) return { rules: [], errors: ['spec.rules and spec.policy are both set; set exactly one'] };
  if (!hasRules && !hasPolicy) return { rules: [], errors: ['one of spec.rules or spec.policy is required'] };
  let raw: AclRule[];
  if (hasRules) {
    raw = (spec.rules as unknown[]).filter(
      (r): r is AclRule =>
        typeof r === 'object' &&
        r !== null &&
        typeof (r as AclRule).path === 'string' &&
        Array.isArray((r as AclRule).capabilities),
    );
  } else {
    const parsed = parsePolicyText(spec.policy as string);
    if (!parsed.ok)
      return {
        rules: [],
        errors: [
          `spec.policy does not parse: ${parsed.errors.map((e) => `${e.line}:${e.column}: ${e.message}`).join('; ')}`,
        ],
      };
    raw = parsed.rules.map((r) => r.rule as AclRule);
  }
  return { rules: raw.map((r) => ({ ...r, path: expandNamespace(r.path, namespace) })) };
}
