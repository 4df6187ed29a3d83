// Effective access: which ServiceAccount can do what on which Vault path, through the kubernetes-auth
// roles vaultgate writes, evaluated with Vault's own ACL rules (policy/acl.ts). Pure.
//
// A token comes from one login with one role, so access is computed per role and then unioned per
// ServiceAccount: a deny in one role's policies does not hide another role's grant, exactly as in Vault.
// Vault's `default` policy (attached to every token unless disabled) is not modelled: it is not ours.
import {
  compileAcl,
  effectiveCapabilities,
  evaluate,
  type AclDecision,
  type Capability,
  type CompiledAcl,
  type EffectiveCapability,
  type RequestCapability,
  type VaultTarget,
} from '../../policy/acl.ts';
import { isPureWildcard } from '../../policy/paths.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import { guardrailsFor, policyRuleGuardrailFindings } from '../../webhook/rules/guardrails.ts';
import { rolePolicies, type DesiredRole, type DesiredState } from './model.ts';

export const ACCESS_SCHEMA_VERSION = 'vaultgate.io/access-report/v1';

export type Severity = 'high' | 'medium' | 'low' | 'info';

export interface AccessFinding {
  /** Stable id: guardrail.allowed-path, guardrail.forbidden-path, guardrail.forbidden-capability, access.sudo,
   *  access.broad-glob, binding.missing-policy, policy.unparsable, policy.unbound, vault.orphan-policy,
   *  vault.orphan-role, vault.drift-policy, vault.drift-role, vault.missing-policy, vault.missing-role. */
  id: string;
  severity: Severity;
  /** The object concerned: `VaultPolicy payments/db-read`, `VaultRoleBinding payments/app`, `Vault policy vaultgate.x.y`. */
  object: string;
  path?: string;
  message: string;
}

export interface RoleAccess {
  role: DesiredRole;
  acl: CompiledAcl;
  /** `namespace/name` of each VaultPolicy found. */
  policies: string[];
  missing: string[];
}

export interface Subject {
  /** `namespace/serviceaccount`. */
  id: string;
  namespace: string;
  serviceAccount: string;
  roles: RoleAccess[];
}

export interface AccessModel {
  state: DesiredState;
  subjects: Subject[];
  /** Every distinct rule path across all policies (granting or denying), sorted. */
  patterns: string[];
}

/** `target`: the server whose semantics apply (default OpenBao 2.7; `scan` exists there, `subscribe`/`recover` do not). */
export function buildAccessModel(state: DesiredState, target?: VaultTarget): AccessModel {
  const subjects = new Map<string, Subject>();
  for (const role of state.roles) {
    const { found, missing } = rolePolicies(state, role);
    const access: RoleAccess = { role, acl: compileAcl(found, target), policies: found.map((p) => p.name), missing };
    for (const sa of role.serviceAccounts) {
      const id = `${role.namespace}/${sa}`;
      const s = subjects.get(id) ?? { id, namespace: role.namespace, serviceAccount: sa, roles: [] };
      s.roles.push(access);
      subjects.set(id, s);
    }
  }
  const patterns = [...new Set(state.policies.flatMap((p) => p.rules.map((r) => r.path)))].sort();
  return { state, subjects: [...subjects.values()].sort((a, b) => a.id.localeCompare(b.id)), patterns };
}

// ---- queries ----------------------------------------------------------------------------------

export interface WhoCanEntry {
  subject: string;
  role: string;
  binding: string;
  matchedPattern?: string;
  policies: string[];
  reason: string;
}

/** Who can perform `capability` on `path`: every (ServiceAccount, role) whose token Vault would allow. */
export function whoCan(
  model: AccessModel,
  path: string,
  capability: RequestCapability,
): { allowed: WhoCanEntry[]; denied: WhoCanEntry[] } {
  const allowed: WhoCanEntry[] = [];
  const denied: WhoCanEntry[] = [];
  for (const s of model.subjects) {
    for (const r of s.roles) {
      const d: AclDecision = evaluate(r.acl, { path, capability });
      const entry: WhoCanEntry = {
        subject: s.id,
        role: r.role.vaultName,
        binding: `${r.role.namespace}/${r.role.name}`,
        ...(d.matchedPattern ? { matchedPattern: d.matchedPattern } : {}),
        policies: d.policies,
        reason: d.reason,
      };
      (d.allowed ? allowed : denied).push(entry);
    }
  }
  return { allowed, denied };
}

export interface Grant {
  pattern: string;
  /** As sys/capabilities answers for a typical path the pattern matches (`root` only for a root token). */
  capabilities: EffectiveCapability[];
  role: string;
  /** `namespace/name` of the VaultPolicies with a rule on exactly this pattern. */
  policies: string[];
}

/** What a ServiceAccount can do: per role, each pattern of its policies with the capabilities that hold there. */
export function subjectGrants(model: AccessModel, subjectId: string): Grant[] | undefined {
  const s = model.subjects.find((x) => x.id === subjectId);
  if (!s) return undefined;
  const out: Grant[] = [];
  for (const r of s.roles) {
    const patterns = [
      ...new Set(r.policies.flatMap((p) => policyByKey(model, p)?.rules.map((x) => x.path) ?? [])),
    ].sort();
    for (const pattern of patterns) {
      const caps = effectiveCapabilities(r.acl, samplePath(pattern));
      out.push({
        pattern,
        capabilities: caps,
        role: r.role.vaultName,
        policies: r.policies.filter((p) => policyByKey(model, p)?.rules.some((x) => x.path === pattern)),
      });
    }
  }
  return out;
}

function policyByKey(model: AccessModel, key: string) {
  return model.state.policies.find((p) => `${p.namespace}/${p.name}` === key);
}

/**
 * A concrete path a pattern matches, used to show "what holds on this pattern": `+` segments and the
 * trailing glob become a placeholder no real policy names, so a more specific rule elsewhere does not
 * shadow it.
 */
export function samplePath(pattern: string): string {
  const PH = '\u2026';
  let p = pattern.replace(/^\/+/, '');
  if (p.endsWith('*')) p = `${p.slice(0, -1)}${PH}`;
  return p
    .split('/')
    .map((seg) => (seg === '+' ? PH : seg))
    .join('/');
}

export interface Matrix {
  subjects: string[];
  patterns: string[];
  /** cells[i][j]: capabilities subject i holds on pattern j (union over its roles; 'deny' removed). */
  cells: Capability[][][];
}

export function accessMatrix(model: AccessModel): Matrix {
  const cells = model.subjects.map((s) =>
    model.patterns.map((pattern) => {
      const caps = new Set<Capability>();
      for (const r of s.roles)
        for (const c of effectiveCapabilities(r.acl, samplePath(pattern)))
          if (c !== 'deny' && c !== 'root') caps.add(c);
      return ORDER.filter((c) => caps.has(c));
    }),
  );
  return { subjects: model.subjects.map((s) => s.id), patterns: model.patterns, cells };
}

const ORDER: Capability[] = [
  'read',
  'list',
  'scan',
  'create',
  'update',
  'patch',
  'delete',
  'recover',
  'subscribe',
  'sudo',
];

// ---- findings ---------------------------------------------------------------------------------

/** A grant reaching every namespace or the whole mount: fewer than three literal segments before a wildcard. */
export function isBroadPattern(pattern: string): boolean {
  if (isPureWildcard(pattern)) return true;
  const firstWild = pattern.search(/[+*]/);
  if (firstWild < 0) return false;
  const literal = pattern.slice(0, firstWild).split('/').filter(Boolean);
  return literal.length < 3;
}

export function accessFindings(model: AccessModel): AccessFinding[] {
  const { state } = model;
  const out: AccessFinding[] = [];
  const ctx = defaultContext({
    guardrails: state.guardrails.map((g) => ({ metadata: { ...g.metadata }, ...(g.spec ? { spec: g.spec } : {}) })),
    namespaceLabels: (ns) => state.namespaceLabels.get(ns),
    namePrefix: state.prefix,
  });
  const bound = new Set(state.roles.flatMap((r) => r.policyNames.map((p) => `${r.namespace}/${p}`)));

  for (const p of state.policies) {
    const object = `VaultPolicy ${p.namespace}/${p.name}`;
    if (p.parseErrors)
      out.push({
        id: 'policy.unparsable',
        severity: 'medium',
        object,
        message: `spec.policy cannot be parsed (${p.parseErrors.join('; ')}); it is counted as granting nothing`,
      });
    if (!bound.has(`${p.namespace}/${p.name}`))
      out.push({
        id: 'policy.unbound',
        severity: 'info',
        object,
        message: 'no VaultRoleBinding uses this policy: it grants nothing to any ServiceAccount',
      });
    const guardrails = guardrailsFor(p.namespace, ctx);
    p.rules.forEach((rule, i) => {
      const caps = rule.capabilities.map((c) => c.toLowerCase());
      const grants = !caps.includes('deny') && caps.length > 0;
      for (const f of policyRuleGuardrailFindings(
        rule,
        {
          path: `rules[${i}].path`,
          capabilities: `rules[${i}].capabilities`,
          capability: (k) => `rules[${i}].capabilities[${k}]`,
        },
        p.namespace,
        guardrails,
      )) {
        out.push({
          id: f.rule,
          severity:
            f.rule === 'guardrail.forbidden-path' || f.rule === 'guardrail.forbidden-capability' ? 'high' : 'medium',
          object,
          path: rule.path,
          message: f.message,
        });
      }
      if (grants && caps.includes('sudo'))
        out.push({
          id: 'access.sudo',
          severity: 'high',
          object,
          path: rule.path,
          message: `grants sudo on "${rule.path}": root-protected endpoints become reachable`,
        });
      if (grants && isBroadPattern(rule.path)) {
        out.push({
          id: 'access.broad-glob',
          severity: 'medium',
          object,
          path: rule.path,
          message: `"${rule.path}" is a broad pattern (fewer than three fixed segments before its first wildcard): ${caps.join(', ')} on everything under it, whichever team it belongs to`,
        });
      }
    });
  }
  for (const role of state.roles) {
    const { missing } = rolePolicies(state, role);
    for (const m of missing) {
      out.push({
        id: 'binding.missing-policy',
        severity: 'medium',
        object: `VaultRoleBinding ${role.namespace}/${role.name}`,
        message: `references VaultPolicy "${m}", which does not exist in namespace ${role.namespace}: Vault ignores the missing policy (no access from it)`,
      });
    }
  }
  return dedupe(out);
}

function dedupe(fs: AccessFinding[]): AccessFinding[] {
  const seen = new Set<string>();
  return fs.filter((f) => {
    const k = `${f.id}|${f.object}|${f.path ?? ''}|${f.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export const SEVERITY_ORDER: Severity[] = ['high', 'medium', 'low', 'info'];

export function sortFindings(fs: AccessFinding[]): AccessFinding[] {
  return [...fs].sort(
    (a, b) =>
      SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity) ||
      a.object.localeCompare(b.object) ||
      a.id.localeCompare(b.id),
  );
}

// ---- the report (the stable JSON schema) -------------------------------------------------------

export interface AccessReport {
  schemaVersion: typeof ACCESS_SCHEMA_VERSION;
  generatedAt: string;
  source: string;
  prefix: string;
  subjects: Array<{
    subject: string;
    roles: Array<{ role: string; binding: string; mount: string; policies: string[]; missingPolicies: string[] }>;
    grants: Grant[];
  }>;
  matrix: Matrix;
  query?:
    | { type: 'who-can'; path: string; capability: RequestCapability; allowed: WhoCanEntry[]; denied: WhoCanEntry[] }
    | { type: 'subject'; subject: string; found: boolean; grants: Grant[] };
  findings: AccessFinding[];
  summary: { subjects: number; roles: number; policies: number; patterns: number; findings: Record<Severity, number> };
}

export interface ReportOptions {
  source: string;
  now?: Date;
  query?: { path: string; capability: RequestCapability } | { subject: string };
  /** Extra findings (e.g. from Vault: orphans and drift). */
  extraFindings?: AccessFinding[];
}

export function buildAccessReport(state: DesiredState, opts: ReportOptions): AccessReport {
  const model = buildAccessModel(state);
  const findings = sortFindings([...accessFindings(model), ...(opts.extraFindings ?? [])]);
  const counts: Record<Severity, number> = { high: 0, medium: 0, low: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  let query: AccessReport['query'];
  if (opts.query && 'path' in opts.query)
    query = {
      type: 'who-can',
      path: opts.query.path,
      capability: opts.query.capability,
      ...whoCan(model, opts.query.path, opts.query.capability),
    };
  else if (opts.query) {
    const grants = subjectGrants(model, opts.query.subject);
    query = { type: 'subject', subject: opts.query.subject, found: grants !== undefined, grants: grants ?? [] };
  }
  return {
    schemaVersion: ACCESS_SCHEMA_VERSION,
    generatedAt: (opts.now ?? new Date()).toISOString(),
    source: opts.source,
    prefix: state.prefix,
    subjects: model.subjects.map((s) => ({
      subject: s.id,
      roles: s.roles.map((r) => ({
        role: r.role.vaultName,
        binding: `${r.role.namespace}/${r.role.name}`,
        mount: r.role.mount,
        policies: r.policies,
        missingPolicies: r.missing,
      })),
      grants: subjectGrants(model, s.id) ?? [],
    })),
    matrix: accessMatrix(model),
    ...(query ? { query } : {}),
    findings,
    summary: {
      subjects: model.subjects.length,
      roles: state.roles.length,
      policies: state.policies.length,
      patterns: model.patterns.length,
      findings: counts,
    },
  };
}
