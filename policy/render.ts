// Rule model → Vault ACL policy text (HCL), the only form vaultgate ever writes to `sys/policies/acl/*`.
// Rules written as raw `spec.policy` text are parsed (policy/parse.ts) and re-rendered here rather than
// sent verbatim: Vault then stores exactly what the guardrails checked, so no difference between our
// parser and Vault's can smuggle a path past them.
//
// The text starts with an ownership header (policy/ownership.ts reads it back) so a policy vaultgate did
// not write is recognisable and never overwritten or deleted (VCO #23/#137: both failure directions).

import type { Capability } from './capabilities.ts';

/** One `path` block, as VaultPolicy.spec.rules[] (project-wide rule model). */
export interface PolicyRule {
  path: string;
  capabilities: readonly Capability[] | readonly string[];
  allowedParameters?: Record<string, readonly unknown[]>;
  deniedParameters?: Record<string, readonly unknown[]>;
  requiredParameters?: readonly string[];
  minWrappingTTL?: string;
  maxWrappingTTL?: string;
}

/** Who a rendered policy belongs to: the VaultPolicy object. */
export interface PolicyOwner {
  namespace: string;
  name: string;
  uid: string;
}

export const MANAGED_BY = 'vaultgate';

/** The header lines, in order. Values never contain newlines (Kubernetes names and uids cannot). */
export function ownershipHeader(owner: PolicyOwner): string {
  return [
    `# managed-by: ${MANAGED_BY}`,
    `# namespace: ${oneLine(owner.namespace)}`,
    `# name: ${oneLine(owner.name)}`,
    `# uid: ${oneLine(owner.uid)}`,
    '# Written by the vaultgate controller from a VaultPolicy object; edits here are reverted.',
  ].join('\n');
}

/** HCL text for the rules, header first, one `path` block per rule in the given order. */
export function renderPolicy(rules: readonly PolicyRule[], owner: PolicyOwner): string {
  const blocks = rules.map(renderRule);
  return `${ownershipHeader(owner)}\n\n${blocks.join('\n\n')}\n`;
}

function renderRule(rule: PolicyRule): string {
  const lines = [`path ${hclString(rule.path)} {`, `  capabilities = ${hclList(rule.capabilities)}`];
  if (rule.allowedParameters) lines.push(...renderParameters('allowed_parameters', rule.allowedParameters));
  if (rule.deniedParameters) lines.push(...renderParameters('denied_parameters', rule.deniedParameters));
  if (rule.requiredParameters) lines.push(`  required_parameters = ${hclList(rule.requiredParameters)}`);
  if (rule.minWrappingTTL !== undefined) lines.push(`  min_wrapping_ttl = ${hclString(rule.minWrappingTTL)}`);
  if (rule.maxWrappingTTL !== undefined) lines.push(`  max_wrapping_ttl = ${hclString(rule.maxWrappingTTL)}`);
  lines.push('}');
  return lines.join('\n');
}

function renderParameters(attr: string, params: Record<string, readonly unknown[]>): string[] {
  const keys = Object.keys(params).sort();
  if (keys.length === 0) return [`  ${attr} = {}`];
  return [`  ${attr} = {`, ...keys.map((k) => `    ${hclString(k)} = ${hclList(params[k] ?? [])}`), '  }'];
}

function hclList(values: readonly unknown[]): string {
  return `[${values.map(hclValue).join(', ')}]`;
}

/**
 * Parameter values as HCL literals that Vault's decoder reads back to the same value: strings, numbers,
 * booleans, lists and objects (`[{"good" = "one"}]`), so the policy Vault enforces is the one admitted.
 * (Written as a quoted JSON string, an object constraint would allow that string and deny the object.)
 * HCL has no null; a null (only possible in spec.rules) stays the string "null".
 */
function hclValue(v: unknown): string {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return hclString(v);
  if (Array.isArray(v)) return hclList(v);
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${hclString(k)} = ${hclValue(x)}`).join(', ')}}`;
  }
  return hclString(JSON.stringify(v) ?? 'null');
}

/**
 * A double-quoted HCL string. JSON's escaping is a subset HCL1 reads back the same (\" \\ \n \t \uXXXX).
 * `${` would start an interpolation in HCL; Vault policies never interpolate, but escape the `$` anyway
 * so the text means the same to every HCL reader.
 */
export function hclString(s: string): string {
  return JSON.stringify(s).replace(/\$\{/g, '\\u0024{');
}

function oneLine(s: string): string {
  return s.replace(/[\r\n]/g, ' ');
}
