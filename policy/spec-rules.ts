// The ACL rules a VaultPolicy spec stands for, whichever form it uses (structured `rules` or raw
// `policy` text), with `{{namespace}}` expanded: the one place every consumer (admission warnings,
// audit, plan) turns a spec into rules.
import type { AclRule } from './acl.ts';
import { parsePolicyText } from './parse.ts';
import { expandNamespace } from './paths.ts';

export function specRules(spec: Record<string, unknown> | undefined, namespace: string): { rules: AclRule[]; errors?: string[] } {
  let raw: AclRule[] = [];
  if (Array.isArray(spec?.rules)) {
    raw = (spec.rules as unknown[]).filter((r): r is AclRule => typeof r === 'object' && r !== null
      && typeof (r as AclRule).path === 'string' && Array.isArray((r as AclRule).capabilities));
  } else if (typeof spec?.policy === 'string') {
    const parsed = parsePolicyText(spec.policy);
    if (!parsed.ok) return { rules: [], errors: parsed.errors.map((e) => `${e.line}:${e.column}: ${e.message}`) };
    raw = parsed.rules.map((r) => r.rule as AclRule);
  }
  return { rules: raw.map((r) => ({ ...r, path: expandNamespace(r.path, namespace) })) };
}
