// Rules "guardrail.*": which VaultGuardrails apply to a namespace, and what each says about a policy
// rule or a role binding. Every guardrail whose namespaceSelector matches applies on its own, in its
// own mode: enforce → deny, warn → admitted with a warning, audit → admitted, only recorded. When none
// matches, the built-in defaults apply in enforce mode, so a namespace is never unguarded.
import type { AdmissionContext, GuardrailObject } from '../admission/context.ts';
import type { GuardrailMode } from '../../schemas/types.ts';
import { effectiveCapabilities } from '../../policy/capabilities.ts';
import { expandNamespace, pathForbiddenBy, pathWithin } from '../../policy/paths.ts';
import { parseDuration } from '../../schemas/duration.ts';
import { isRecord, type Finding } from './finding.ts';
import { selectorMatches } from './label-selector.ts';

export const BUILT_IN_GUARDRAIL_NAME = 'built-in defaults';
export const DEFAULT_ALLOWED_PATHS = ['secret/data/{{namespace}}/*', 'secret/metadata/{{namespace}}/*'];
export const DEFAULT_FORBIDDEN_CAPABILITIES = ['sudo'];
export const DEFAULT_FORBIDDEN_PATHS = ['sys/*', 'auth/*', '*'];

/** A guardrail with every default applied: what the checks read. */
export interface EffectiveGuardrail {
  name: string;
  mode: GuardrailMode;
  allowedPaths: string[];
  forbiddenCapabilities: string[];
  forbiddenPaths: string[];
  maxTokenTTL?: string;
  requireAudience: boolean;
}

export function builtInGuardrail(): EffectiveGuardrail {
  return {
    name: BUILT_IN_GUARDRAIL_NAME, mode: 'enforce', allowedPaths: DEFAULT_ALLOWED_PATHS,
    forbiddenCapabilities: DEFAULT_FORBIDDEN_CAPABILITIES, forbiddenPaths: DEFAULT_FORBIDDEN_PATHS, requireAudience: false,
  };
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
}

export function effectiveGuardrail(g: GuardrailObject): EffectiveGuardrail {
  const spec = g.spec ?? {};
  const mode = spec.mode === 'warn' || spec.mode === 'audit' ? spec.mode : 'enforce';
  return {
    name: g.metadata.name,
    mode,
    allowedPaths: strings(spec.allowedPaths) ?? DEFAULT_ALLOWED_PATHS,
    forbiddenCapabilities: (strings(spec.forbiddenCapabilities) ?? DEFAULT_FORBIDDEN_CAPABILITIES).map((c) => c.toLowerCase()),
    forbiddenPaths: strings(spec.forbiddenPaths) ?? DEFAULT_FORBIDDEN_PATHS,
    ...(typeof spec.maxTokenTTL === 'string' ? { maxTokenTTL: spec.maxTokenTTL } : {}),
    requireAudience: spec.requireAudience === true,
  };
}

/**
 * The guardrails for a namespace. Unknown namespaces get only the label the apiserver puts on every
 * namespace (kubernetes.io/metadata.name), so label-selecting guardrails miss them and the strict
 * built-in defaults apply unless a select-all guardrail exists.
 */
export function guardrailsFor(namespace: string, ctx: AdmissionContext): EffectiveGuardrail[] {
  const labels = { ...(ctx.namespaceLabels(namespace) ?? {}), 'kubernetes.io/metadata.name': namespace };
  const matching = ctx.guardrails.filter((g) => {
    const selector = g.spec?.namespaceSelector;
    return selectorMatches(isRecord(selector) ? (selector) : undefined, labels);
  });
  return matching.length ? matching.map(effectiveGuardrail) : [builtInGuardrail()];
}

function phrase(g: EffectiveGuardrail, subject: string, what: string): string {
  const by = g.name === BUILT_IN_GUARDRAIL_NAME ? 'the built-in guardrail defaults' : `guardrail "${g.name}"`;
  return g.mode === 'enforce' ? `${subject} is forbidden by ${by}${what}` : `${subject} violates ${by}${what} (mode ${g.mode}: admitted)`;
}

function finding(g: EffectiveGuardrail, field: string, rule: string, message: string): Finding {
  return {
    field, rule, message,
    severity: g.mode === 'enforce' ? 'deny' : 'warn',
    ...(g.mode === 'audit' ? { auditOnly: true } : {}),
  };
}

/** Guardrail checks of one policy rule whose path is already expanded for `namespace`. */
export function policyRuleGuardrailFindings(
  rule: { path: string; capabilities: readonly string[] },
  fields: { path: string; capabilities: string; capability: (i: number) => string },
  namespace: string,
  guardrails: EffectiveGuardrail[],
): Finding[] {
  const out: Finding[] = [];
  const caps = rule.capabilities.map((c) => c.toLowerCase());
  // A rule that only denies grants nothing: path limits are about what a namespace can reach.
  const grants = effectiveCapabilities(caps).some((c) => c !== 'deny');
  for (const g of guardrails) {
    caps.forEach((c, i) => {
      if (g.forbiddenCapabilities.includes(c)) {
        out.push(finding(g, fields.capability(i), 'guardrail.forbidden-capability', phrase(g, `"${c}"`, '')));
      }
    });
    if (!grants) continue;
    for (const forbidden of g.forbiddenPaths) {
      const f = expandNamespace(forbidden, namespace);
      if (pathForbiddenBy(rule.path, f)) {
        out.push(finding(g, fields.path, 'guardrail.forbidden-path', phrase(g, `"${rule.path}"`, ` (forbidden path "${f}")`)));
      }
    }
    const allowed = g.allowedPaths.map((a) => expandNamespace(a, namespace));
    if (!allowed.some((a) => pathWithin(rule.path, a))) {
      out.push(finding(g, fields.path, 'guardrail.allowed-path', phrase(g, `"${rule.path}"`, `: it reaches outside the allowed paths ${allowed.map((a) => `"${a}"`).join(', ')}`)));
    }
  }
  return out;
}

/** Guardrail checks of a role binding's TTLs and audience (defaults already applied by the caller). */
export function bindingGuardrailFindings(
  spec: { tokenTTL?: string; tokenMaxTTL?: string; audience?: string },
  guardrails: EffectiveGuardrail[],
): Finding[] {
  const out: Finding[] = [];
  for (const g of guardrails) {
    const max = g.maxTokenTTL === undefined ? undefined : parseDuration(g.maxTokenTTL);
    if (max !== undefined) {
      for (const key of ['tokenTTL', 'tokenMaxTTL'] as const) {
        const value = spec[key];
        const ms = value === undefined ? undefined : parseDuration(value);
        if (ms !== undefined && ms > max) {
          out.push(finding(g, `spec.${key}`, 'guardrail.max-token-ttl', phrase(g, `${key} "${value}"`, `: it exceeds maxTokenTTL "${g.maxTokenTTL}"`)));
        }
      }
    }
    if (g.requireAudience && !spec.audience) {
      out.push(finding(g, 'spec.audience', 'guardrail.require-audience', phrase(g, 'a role binding without audience', ' (requireAudience)')));
    }
  }
  return out;
}
