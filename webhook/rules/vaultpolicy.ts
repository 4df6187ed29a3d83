// Rules "vaultpolicy.*" and the guardrail checks of a VaultPolicy, plus its mutation (defaults and
// normalisation). The raw `spec.policy` text is never rewritten; it is parsed into the same rule
// model and checked like `spec.rules`.
import { specRules } from '../../policy/spec-rules.ts';
import { summariseRuleWidening } from '../../policy/widening.ts';
import type { AdmissionContext } from '../admission/context.ts';
import type { KindHandler } from '../admission/kinds.ts';
import type { AdmissionRequest } from '../admission/types.ts';
import { VAULTGATE_GROUP, VAULTGATE_VERSION } from '../../schemas/kinds.ts';
import { DURATION_PATTERN, parseDuration } from '../../schemas/ttl.ts';
import {
  capabilityProblem,
  DEFAULT_TARGET,
  normalizeCapabilities,
  parameterConstraintProblems,
  type VaultTarget,
} from '../../policy/capabilities.ts';
import { parsePolicyText } from '../../policy/parse.ts';
import { expandNamespace, pathProblems } from '../../policy/paths.ts';
import { deny, isRecord, warn, type Finding, type KubeObject } from './finding.ts';
import { defaultVaultName, mutateOwnership, namespaceOf, vaultNameFindings } from './common.ts';
import { guardrailsFor, prepareGuardrails, preparedRuleGuardrailFindings } from './guardrails.ts';
import { schemaThenSpecFindings } from './schema.ts';

/**
 * One rule to check, wherever it came from, and how to name its fields in messages. A class rather
 * than an object with arrow-function members: the webhook runs under tsx, whose esbuild keepNames
 * wraps every named closure in an Object.defineProperty call, and this object is made per rule per review.
 */
class RuleUnderCheck {
  /**
   * @param base `spec.rules[0]` for a structured rule, undefined for raw text (every field is `spec.policy`).
   * @param where Prefix for messages about raw text: `line 3, column 6: `.
   */
  constructor(
    readonly rule: Record<string, unknown>,
    private readonly base: string | undefined,
    readonly where: string,
  ) {}

  /** Field path for a key of the rule, e.g. `spec.rules[0].path`, or `spec.policy` for raw text. */
  field(sub: string): string {
    if (this.base === undefined) return 'spec.policy';
    return sub ? `${this.base}.${sub}` : this.base;
  }

  /** The names guardrail findings use (guardrails.ts RuleFieldNames). */
  get path(): string {
    return this.field('path');
  }
  get capabilities(): string {
    return this.field('capabilities');
  }
  capability(i: number): string {
    return this.field(this.where ? '' : `capabilities[${i}]`);
  }
}

/** Rule "vaultpolicy.rules-xor-policy": exactly one of the two forms. */
export function rulesXorPolicy(spec: Record<string, unknown>): Finding[] {
  const hasRules = spec.rules !== undefined;
  const hasPolicy = spec.policy !== undefined;
  if (hasRules === hasPolicy) {
    return [
      deny(
        hasRules ? 'spec.policy' : 'spec',
        'vaultpolicy.rules-xor-policy',
        hasRules
          ? 'set either spec.rules or spec.policy, not both'
          : 'set exactly one of spec.rules (structured rules) or spec.policy (raw HCL or JSON text)',
      ),
    ];
  }
  return [];
}

/**
 * The rules to check: `spec.rules` as written, or `spec.policy` parsed for the target server (parse
 * errors are findings; a capability the target lacks is one under rule vaultpolicy.capability).
 */
function rulesOf(spec: Record<string, unknown>, target: VaultTarget): { rules: RuleUnderCheck[]; findings: Finding[] } {
  if (Array.isArray(spec.rules)) {
    return {
      rules: spec.rules.filter(isRecord).map((rule, i) => new RuleUnderCheck(rule, `spec.rules[${i}]`, '')),
      findings: [],
    };
  }
  if (typeof spec.policy === 'string') {
    const parsed = parsePolicyText(spec.policy, target);
    if (!parsed.ok) {
      return {
        rules: [],
        findings: parsed.errors.map((e) =>
          deny('spec.policy', e.rule ?? 'vaultpolicy.policy-parse', `line ${e.line}, column ${e.column}: ${e.message}`),
        ),
      };
    }
    return {
      rules: parsed.rules.map(
        (p) =>
          new RuleUnderCheck(
            p.rule as unknown as Record<string, unknown>,
            undefined,
            `line ${p.line}, column ${p.column}: path "${p.rule.path}": `,
          ),
      ),
      findings: [],
    };
  }
  return { rules: [], findings: [] };
}

/** Rule "vaultpolicy.capability": each capability is one the target server accepts (OpenBao: scan, no subscribe/recover). */
function capabilityFindings(r: RuleUnderCheck, target: VaultTarget, out: Finding[]): void {
  const caps = Array.isArray(r.rule.capabilities) ? r.rule.capabilities : [];
  let sawDeny = false;
  for (let i = 0; i < caps.length; i++) {
    const c: unknown = caps[i];
    if (typeof c !== 'string') continue;
    const lower = c.trim().toLowerCase();
    if (lower === 'deny') sawDeny = true;
    else {
      const problem = capabilityProblem(c, target);
      if (problem) out.push(deny(r.field(`capabilities[${i}]`), 'vaultpolicy.capability', `${r.where}${problem}`));
    }
  }
  // The normalised list only feeds the two warnings below; neither can fire for a structured rule
  // without "deny", the common case, so skip normalising it.
  if (!sawDeny && !r.where) return;
  const names = caps.filter((c): c is string => typeof c === 'string');
  const normal = normalizeCapabilities(names);
  if (normal.length < names.length && r.where) {
    out.push(
      warn(r.field('capabilities'), 'vaultpolicy.capability', `${r.where}capabilities are listed more than once`),
    );
  }
  if (normal.includes('deny') && normal.length > 1) {
    out.push(
      warn(
        r.field('capabilities'),
        'vaultpolicy.deny-not-alone',
        `${r.where}"deny" overrides every other capability, so ${normal
          .filter((c) => c !== 'deny')
          .map((c) => `"${c}"`)
          .join(', ')} ha${normal.length > 2 ? 've' : 's'} no effect`,
      ),
    );
  }
}

function wrappingTtlFindings(r: RuleUnderCheck): Finding[] {
  const min = typeof r.rule.minWrappingTTL === 'string' ? r.rule.minWrappingTTL : undefined;
  const max = typeof r.rule.maxWrappingTTL === 'string' ? r.rule.maxWrappingTTL : undefined;
  const minMs = min !== undefined && DURATION_PATTERN.test(min) ? parseDuration(min) : undefined;
  const maxMs = max !== undefined && DURATION_PATTERN.test(max) ? parseDuration(max) : undefined;
  if (minMs !== undefined && maxMs !== undefined && maxMs !== 0 && maxMs < minMs) {
    return [
      deny(
        r.field('maxWrappingTTL'),
        'vaultpolicy.wrapping-ttl',
        `${r.where}maxWrappingTTL "${max}" is less than minWrappingTTL "${min}" (Vault refuses the policy)`,
      ),
    ];
  }
  return [];
}

/** On UPDATE: say in a warning what the change grants that the stored policy did not (reviewers see it in kubectl). */
function wideningFindings(obj: KubeObject, old: KubeObject | undefined, namespace: string | undefined): Finding[] {
  if (!old || !namespace || !isRecord(old.spec) || !isRecord(obj.spec)) return [];
  const before = specRules(old.spec, namespace);
  const after = specRules(obj.spec, namespace);
  if (before.errors || after.errors) return [];
  const summary = summariseRuleWidening(before.rules, after.rules);
  return summary
    ? [{ field: 'spec', rule: 'vaultpolicy.widens-access', message: `this update ${summary}`, severity: 'warn' }]
    : [];
}

export function validateVaultPolicy(
  obj: KubeObject,
  old: KubeObject | undefined,
  ctx: AdmissionContext,
  req: AdmissionRequest,
): Finding[] {
  return schemaThenSpecFindings(obj, (spec) => specFindings(spec, obj, old, ctx, req));
}

function specFindings(
  spec: Record<string, unknown>,
  obj: KubeObject,
  old: KubeObject | undefined,
  ctx: AdmissionContext,
  req: AdmissionRequest,
): Finding[] {
  const namespace = namespaceOf(obj, req);
  const out: Finding[] = [...rulesXorPolicy(spec), ...vaultNameFindings(obj, req, ctx, 'vaultpolicy.vault-name')];
  const target = ctx.vaultTarget ?? DEFAULT_TARGET;
  const { rules, findings } = rulesOf(spec, target);
  out.push(...findings);
  const guardrails = prepareGuardrails(guardrailsFor(namespace, ctx), namespace);
  const firstIndexOfPath = new Map<string, string>();
  for (const r of rules) {
    const rawPath = typeof r.rule.path === 'string' ? r.rule.path : undefined;
    capabilityFindings(r, target, out);
    out.push(...wrappingTtlFindings(r));
    if (rawPath === undefined) continue;
    const problems = pathProblems(rawPath, { allowNamespaceTemplate: true });
    for (const p of problems) out.push(deny(r.field('path'), 'vaultpolicy.path-syntax', `${r.where}${p.message}`));
    const path = expandNamespace(rawPath, namespace);
    const caps = (Array.isArray(r.rule.capabilities) ? r.rule.capabilities : []).filter(
      (c): c is string => typeof c === 'string',
    );
    // Without any of the three constraint fields parameterConstraintProblems has nothing to say: skip the copy.
    const constrained =
      r.rule.allowedParameters !== undefined ||
      r.rule.deniedParameters !== undefined ||
      r.rule.requiredParameters !== undefined;
    for (const p of constrained
      ? parameterConstraintProblems({ ...(r.rule as object), path, capabilities: caps })
      : []) {
      out.push({
        field: r.where ? r.field('') : r.field(p.field),
        rule: p.rule,
        message: `${r.where}${r.where ? `${p.field}: ` : ''}${p.message}`,
        severity: p.severity,
      });
    }
    const earlier = firstIndexOfPath.get(path);
    if (earlier !== undefined) {
      out.push(
        deny(
          r.field('path'),
          'vaultpolicy.duplicate-path',
          `${r.where}"${path}" is already the path of ${earlier}; Vault would merge the two, so write one rule`,
        ),
      );
    } else {
      firstIndexOfPath.set(path, r.where ? `the rule at ${r.where.replace(/: path .*$/, '')}` : r.field(''));
    }
    if (problems.length === 0) {
      for (const f of preparedRuleGuardrailFindings({ path, capabilities: caps }, r, guardrails)) {
        out.push(r.where ? { ...f, message: `${r.where}${f.message}` } : f);
      }
    }
  }
  out.push(...wideningFindings(obj, old, namespace));
  return out;
}

/** Defaults and normalisation: vaultName, capabilities in Vault's order, `{{namespace}}` expanded in structured rules. */
export function mutateVaultPolicy(obj: KubeObject, ctx: AdmissionContext, req: AdmissionRequest): void {
  mutateOwnership(obj, req);
  defaultVaultName(obj, req, ctx);
  const spec = obj.spec;
  if (!isRecord(spec) || !Array.isArray(spec.rules)) return;
  const namespace = namespaceOf(obj, req);
  for (const rule of spec.rules) {
    if (!isRecord(rule)) continue;
    if (Array.isArray(rule.capabilities) && rule.capabilities.every((c) => typeof c === 'string')) {
      rule.capabilities = normalizeCapabilities(rule.capabilities);
    }
    if (typeof rule.path === 'string' && namespace) rule.path = expandNamespace(rule.path, namespace);
  }
}

export const vaultPolicyHandler: KindHandler = {
  group: VAULTGATE_GROUP,
  version: VAULTGATE_VERSION,
  kind: 'VaultPolicy',
  validate: validateVaultPolicy,
  mutate: mutateVaultPolicy,
};
