// Rules "guardrail.*": which VaultGuardrails apply to a namespace, and what each says about a policy
// rule or a role binding.
//
// The built-in floor applies to every namespace, always, in enforce mode: no sudo, nothing under sys/*
// or auth/*, no bare "*", nothing outside the namespace's own subtree of the secret/ KV v2 mount (a "+"
// segment that could name another namespace included). Only an *enforce* guardrail can relax a named
// part of it (spec.relaxFloor: a cluster admin's explicit choice). Then every guardrail whose
// namespaceSelector matches applies on its own, in its own mode: enforce → deny, warn → admitted with a
// warning, audit → admitted, only recorded. warn and audit soften only a guardrail's own rules, never
// the floor. Namespace labels pick the guardrails (as with Pod Security Admission): whoever may label a
// namespace may choose among them.
import type { AdmissionContext, GuardrailObject } from '../admission/context.ts';
import type { GuardrailMode } from '../../schemas/types.ts';
import { isCapability } from '../../policy/capabilities.ts';
import { expandNamespace, isPureWildcard, pathsOverlap, pathWithin } from '../../policy/paths.ts';
import { parseDuration } from '../../schemas/ttl.ts';
import { isRecord, type Finding } from './finding.ts';
import { selectorMatches } from '../../kube/label-selector.ts';

export const BUILT_IN_GUARDRAIL_NAME = 'built-in defaults';
export const DEFAULT_ALLOWED_PATHS = ['secret/data/{{namespace}}/*', 'secret/metadata/{{namespace}}/*'];
export const DEFAULT_FORBIDDEN_CAPABILITIES = ['sudo'];
export const DEFAULT_FORBIDDEN_PATHS = ['sys/*', 'auth/*', '*'];

/**
 * The named parts of the built-in floor an enforce guardrail may relax (`spec.relaxFloor`):
 * - sudo: the sudo capability;
 * - sys-paths: paths under sys/;
 * - auth-paths: paths under auth/;
 * - root-wildcard: a bare "*" (or any pattern made only of wildcards);
 * - namespace-subtree: the limit to secret/data/<namespace>/* and secret/metadata/<namespace>/*
 *   (the relaxing guardrail's own allowedPaths then decide; sys-paths and auth-paths need this too).
 */
export const FLOOR_PARTS = ['sudo', 'sys-paths', 'auth-paths', 'root-wildcard', 'namespace-subtree'] as const;
export type FloorPart = (typeof FLOOR_PARTS)[number];
const FLOOR_PATH: Record<'sys-paths' | 'auth-paths' | 'root-wildcard', string> = {
  'sys-paths': 'sys/*',
  'auth-paths': 'auth/*',
  'root-wildcard': '*',
};

export function isFloorPart(v: unknown): v is FloorPart {
  return typeof v === 'string' && (FLOOR_PARTS as readonly string[]).includes(v);
}

/** A guardrail with every default applied: what the checks read. */
export interface EffectiveGuardrail {
  name: string;
  mode: GuardrailMode;
  /** Undefined: no allowed-path limit (the floor with namespace-subtree relaxed). */
  allowedPaths: string[] | undefined;
  forbiddenCapabilities: string[];
  forbiddenPaths: string[];
  maxTokenTTL?: string;
  requireAudience: boolean;
  /** Floor parts this guardrail relaxes (only honoured in enforce mode). */
  relaxFloor: FloorPart[];
  /** Cluster admin's consent to vaultgate.io/adopt (only honoured in enforce mode). */
  allowAdoption: boolean;
  /** Vault servers stores in the selected namespaces may name, besides the cluster default (enforce mode only). */
  allowedVaultServers?: string[];
  /** Stores' ServiceAccount tokens may carry the apiserver's own audiences (enforce mode only). */
  allowApiServerAudiences?: true;
  /** True for the built-in floor. */
  floor?: true;
}

/** The built-in floor with the named parts relaxed (none by default). */
export function builtInGuardrail(relaxed: ReadonlySet<FloorPart> = new Set()): EffectiveGuardrail {
  return {
    name: BUILT_IN_GUARDRAIL_NAME,
    mode: 'enforce',
    floor: true,
    allowedPaths: relaxed.has('namespace-subtree') ? undefined : DEFAULT_ALLOWED_PATHS,
    forbiddenCapabilities: relaxed.has('sudo') ? [] : DEFAULT_FORBIDDEN_CAPABILITIES,
    forbiddenPaths: (Object.keys(FLOOR_PATH) as Array<keyof typeof FLOOR_PATH>)
      .filter((k) => !relaxed.has(k))
      .map((k) => FLOOR_PATH[k]),
    requireAudience: false,
    relaxFloor: [],
    allowAdoption: false,
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
    forbiddenCapabilities: (strings(spec.forbiddenCapabilities) ?? DEFAULT_FORBIDDEN_CAPABILITIES).map((c) =>
      c.toLowerCase(),
    ),
    forbiddenPaths: strings(spec.forbiddenPaths) ?? DEFAULT_FORBIDDEN_PATHS,
    ...(typeof spec.maxTokenTTL === 'string' ? { maxTokenTTL: spec.maxTokenTTL } : {}),
    requireAudience: spec.requireAudience === true,
    relaxFloor: Array.isArray(spec.relaxFloor) ? spec.relaxFloor.filter(isFloorPart) : [],
    allowAdoption: spec.allowAdoption === true,
    ...(strings(spec.allowedVaultServers) ? { allowedVaultServers: strings(spec.allowedVaultServers) } : {}),
    ...(spec.allowApiServerAudiences === true ? { allowApiServerAudiences: true as const } : {}),
  };
}

/**
 * The VaultGuardrails whose namespaceSelector matches the namespace's labels. Unknown namespaces get
 * only the label the apiserver puts on every namespace (kubernetes.io/metadata.name), so label-selecting
 * guardrails miss them.
 */
export function matchingGuardrails(namespace: string, ctx: AdmissionContext): EffectiveGuardrail[] {
  const labels = ctx.namespaceLabels(namespace);
  return ctx.guardrails.filter((g) => guardrailSelects(g, namespace, labels)).map(effectiveGuardrail);
}

/**
 * Whether the guardrail's namespaceSelector selects the namespace. The label the apiserver puts on every
 * namespace (kubernetes.io/metadata.name) is added, so a selector on it matches a namespace not yet known.
 */
export function guardrailSelects(
  g: GuardrailObject,
  namespace: string,
  labels: Record<string, string> | undefined,
): boolean {
  const selector = g.spec?.namespaceSelector;
  return selectorMatches(isRecord(selector) ? selector : undefined, {
    ...(labels ?? {}),
    'kubernetes.io/metadata.name': namespace,
  });
}

/** The floor parts a guardrail lifts: its relaxFloor, honoured only in enforce mode. */
export function honouredRelaxations(g: EffectiveGuardrail): FloorPart[] {
  return g.mode === 'enforce' ? g.relaxFloor : [];
}

/**
 * The guardrails for a namespace: the built-in floor first (enforce; minus the parts an enforce
 * guardrail selecting the namespace relaxes), then every matching guardrail in its own mode.
 */
export function guardrailsFor(namespace: string, ctx: AdmissionContext): EffectiveGuardrail[] {
  const matching = matchingGuardrails(namespace, ctx);
  const relaxed = new Set<FloorPart>();
  for (const g of matching) for (const part of honouredRelaxations(g)) relaxed.add(part);
  return [builtInGuardrail(relaxed), ...matching];
}

/**
 * The cluster admin's consent to adopting existing Vault objects in this namespace: the name of an
 * enforce guardrail selecting it with `spec.allowAdoption: true`, or undefined (no consent). The
 * tenant's `vaultgate.io/adopt` annotation alone is not enough.
 */
export function adoptionConsent(namespace: string, ctx: AdmissionContext): string | undefined {
  return matchingGuardrails(namespace, ctx).find((g) => g.mode === 'enforce' && g.allowAdoption)?.name;
}

function phrase(g: EffectiveGuardrail, subject: string, what: string): string {
  const by = g.floor ? 'the built-in guardrail defaults' : `guardrail "${g.name}"`;
  return g.mode === 'enforce'
    ? `${subject} is forbidden by ${by}${what}`
    : `${subject} violates ${by}${what} (mode ${g.mode}: admitted)`;
}

function finding(g: EffectiveGuardrail, field: string, rule: string, message: string): Finding {
  return {
    field,
    rule,
    message,
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
  /** Undefined: no allowed-path limit. */
  allowedPaths: string[] | undefined;
  /** `"a", "b"`: the allowed paths as the allowed-path message lists them. */
  allowedList: string;
}

export function prepareGuardrails(guardrails: EffectiveGuardrail[], namespace: string): PreparedGuardrail[] {
  return guardrails.map((g) => {
    const allowedPaths = g.allowedPaths?.map((a) => expandNamespace(a, namespace));
    return {
      guardrail: g,
      forbiddenPaths: g.forbiddenPaths.map((f) => {
        const pattern = expandNamespace(f, namespace);
        return { pattern, pureWildcard: isPureWildcard(pattern) };
      }),
      allowedPaths,
      allowedList: (allowedPaths ?? []).map((a) => `"${a}"`).join(', '),
    };
  });
}

/**
 * `ruleCapabilities(caps).some((c) => c !== 'deny')` without building the normalised list: some
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
export interface RuleFieldNames {
  path: string;
  capabilities: string;
  capability: (i: number) => string;
}

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
  // What an earlier (enforce) guardrail, the floor first, already denies is not said again by a later one.
  const denied = new Set<string>();
  for (const prepared of guardrails) {
    const g = prepared.guardrail;
    const found: Finding[] = [];
    for (let i = 0; i < caps.length; i++) {
      const c = caps[i] as string;
      if (g.forbiddenCapabilities.includes(c)) {
        found.push(finding(g, fields.capability(i), 'guardrail.forbidden-capability', phrase(g, `"${c}"`, '')));
      }
    }
    if (grants) {
      for (const { pattern: f, pureWildcard } of prepared.forbiddenPaths) {
        // policy/paths.ts pathForbiddenBy, with isPureWildcard(f) decided once per request.
        if (pureWildcard ? pathWithin(f, rule.path) : pathsOverlap(rule.path, f)) {
          found.push(
            finding(
              g,
              fields.path,
              'guardrail.forbidden-path',
              phrase(g, `"${rule.path}"`, ` (forbidden path "${f}")`),
            ),
          );
        }
      }
      if (prepared.allowedPaths && !prepared.allowedPaths.some((a) => pathWithin(rule.path, a))) {
        found.push(
          finding(
            g,
            fields.path,
            'guardrail.allowed-path',
            phrase(g, `"${rule.path}"`, `: it reaches outside the allowed paths ${prepared.allowedList}`),
          ),
        );
      }
    }
    for (const f of found) {
      if (!denied.has(`${f.field}\0${f.rule}`)) out.push(f);
    }
    for (const f of found) if (f.severity === 'deny') denied.add(`${f.field}\0${f.rule}`);
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
          out.push(
            finding(
              g,
              `spec.${key}`,
              'guardrail.max-token-ttl',
              phrase(g, `${key} "${value}"`, `: it exceeds maxTokenTTL "${g.maxTokenTTL}"`),
            ),
          );
        }
      }
    }
    if (g.requireAudience && !spec.audience) {
      out.push(
        finding(
          g,
          'spec.audience',
          'guardrail.require-audience',
          phrase(g, 'a role binding without audience', ' (requireAudience)'),
        ),
      );
    }
  }
  return out;
}
