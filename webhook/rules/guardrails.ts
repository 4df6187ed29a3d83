// Rules "guardrail.*": which VaultGuardrails apply to a namespace, and what each says about a policy
// rule or a role binding. Every guardrail whose namespaceSelector matches applies on its own, in its
// own mode: enforce → deny, warn → admitted with a warning, audit → admitted, only recorded. When none
// matches, the built-in defaults apply in enforce mode, so a namespace is never unguarded.
import type { AdmissionContext, GuardrailObject } from '../admission/context.ts';
import type { GuardrailMode } from '../../schemas/types.ts';
import { isCapability } from '../../policy/capabilities.ts';
import { expandNamespace, isPureWildcard, pathsOverlap, pathWithin } from '../../policy/paths.ts';
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

/**
 * A guardrail's path templates expanded for one namespace, with each forbidden pattern's kind decided:
 * computed once per request instead of once per rule (for a 20-rule policy that was 120 regex
 * replacements per review).
 */
export interface PreparedGuardrail {
  guardrail: EffectiveGuardrail;
  /** Expanded forbidden patterns; `pureWildcard` as policy/paths.ts isPureWildcard decides it. */
  forbiddenPaths: Array<{ pattern: string; pureWildcard: boolean }>;
  allowedPaths: string[];
  /** `"a", "b"`: the allowed paths as the allowed-path message lists them. */
  allowedList: string;
}

export function prepareGuardrails(guardrails: EffectiveGuardrail[], namespace: string): PreparedGuardrail[] {
  return guardrails.map((g) => {
    const allowedPaths = g.allowedPaths.map((a) => expandNamespace(a, namespace));
    return {
      guardrail: g,
      forbiddenPaths: g.forbiddenPaths.map((f) => {
        const pattern = expandNamespace(f, namespace);
        return { pattern, pureWildcard: isPureWildcard(pattern) };
      }),
      allowedPaths,
      allowedList: allowedPaths.map((a) => `"${a}"`).join(', '),
    };
  });
}

/**
 * `effectiveCapabilities(caps).some((c) => c !== 'deny')` without building the normalised list: some
 * known capability is listed and "deny" (which overrides all of them) is not.
 */
function grantsAnything(caps: readonly string[]): boolean {
  let grants = false;
  for (const raw of caps) {
    const c = raw.trim().toLowerCase();
    if (c === 'deny') return false;
    if (isCapability(c)) grants = true;
  }
  return grants;
}

/** Field names of one policy rule, for guardrail findings. */
export interface RuleFieldNames { path: string; capabilities: string; capability: (i: number) => string }

/** Guardrail checks of one policy rule whose path is already expanded for `namespace`. */
export function policyRuleGuardrailFindings(
  rule: { path: string; capabilities: readonly string[] },
  fields: RuleFieldNames,
  namespace: string,
  guardrails: EffectiveGuardrail[],
): Finding[] {
  return preparedRuleGuardrailFindings(rule, fields, prepareGuardrails(guardrails, namespace));
}

/** policyRuleGuardrailFindings with the guardrails prepared once for the request's namespace. */
export function preparedRuleGuardrailFindings(
  rule: { path: string; capabilities: readonly string[] },
  fields: RuleFieldNames,
  guardrails: PreparedGuardrail[],
): Finding[] {
  const out: Finding[] = [];
  const caps = rule.capabilities.map((c) => c.toLowerCase());
  // A rule that only denies grants nothing: path limits are about what a namespace can reach.
  const grants = grantsAnything(caps);
  for (const prepared of guardrails) {
    const g = prepared.guardrail;
    for (let i = 0; i < caps.length; i++) {
      const c = caps[i] as string;
      if (g.forbiddenCapabilities.includes(c)) {
        out.push(finding(g, fields.capability(i), 'guardrail.forbidden-capability', phrase(g, `"${c}"`, '')));
      }
    }
    if (!grants) continue;
    for (const { pattern: f, pureWildcard } of prepared.forbiddenPaths) {
      // policy/paths.ts pathForbiddenBy, with isPureWildcard(f) decided once per request.
      if (pureWildcard ? pathWithin(f, rule.path) : pathsOverlap(rule.path, f)) {
        out.push(finding(g, fields.path, 'guardrail.forbidden-path', phrase(g, `"${rule.path}"`, ` (forbidden path "${f}")`)));
      }
    }
    if (!prepared.allowedPaths.some((a) => pathWithin(rule.path, a))) {
      out.push(finding(g, fields.path, 'guardrail.allowed-path', phrase(g, `"${rule.path}"`, `: it reaches outside the allowed paths ${prepared.allowedList}`)));
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
