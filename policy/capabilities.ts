// Vault's ACL capabilities and the parameter-constraint rules Vault applies to a path stanza
// (vault/policy.go: parsePaths). Pure; shared by the webhook rules, the controller and the CLI.

/** Vault's capabilities in its canonical order: the bit order of vault/policy.go (DenyCapabilityInt, CreateCapabilityInt, …). */
export const CAPABILITIES = ['deny', 'create', 'read', 'update', 'delete', 'list', 'sudo', 'patch', 'subscribe', 'recover'] as const;
export type Capability = (typeof CAPABILITIES)[number];

const ORDER = new Map<string, number>(CAPABILITIES.map((c, i) => [c, i]));

export function isCapability(value: string): value is Capability {
  return ORDER.has(value);
}

/** Capabilities whose requests carry parameters: Vault checks parameter constraints only on these. */
export const PARAMETER_CAPABILITIES: ReadonlySet<Capability> = new Set(['create', 'update', 'patch']);

/**
 * Lower-case, trim, de-duplicate and sort into Vault's order. Unknown names are kept (after the known
 * ones, in their original order) so the validator can name them instead of silently dropping them.
 */
export function normalizeCapabilities(caps: readonly string[]): string[] {
  const seen = new Set<string>();
  const known: string[] = [];
  const unknown: string[] = [];
  for (const raw of caps) {
    const c = raw.trim().toLowerCase();
    if (seen.has(c)) continue;
    seen.add(c);
    (isCapability(c) ? known : unknown).push(c);
  }
  known.sort((a, b) => (ORDER.get(a) ?? 0) - (ORDER.get(b) ?? 0));
  return [...known, ...unknown];
}

/** What Vault makes of a capability list: with "deny" present every other capability is dropped. */
export function effectiveCapabilities(caps: readonly string[]): Capability[] {
  const normal = normalizeCapabilities(caps).filter(isCapability);
  return normal.includes('deny') ? ['deny'] : normal;
}

/** Old-style `policy = "read"` values, mapped as vault/policy.go does (OldReadPathPolicy, …). */
export const OLD_STYLE_POLICIES: Record<string, Capability[]> = {
  deny: ['deny'],
  read: ['read', 'list'],
  write: ['create', 'read', 'update', 'delete', 'list'],
  sudo: ['create', 'read', 'update', 'delete', 'list', 'sudo'],
};

export interface ConstraintProblem {
  /** Field below the rule, e.g. `allowedParameters["ttl"][0]`. */
  field: string;
  message: string;
  severity: 'deny' | 'warn';
  rule: string;
}

type ParameterMap = Record<string, unknown[] | undefined> | undefined;

/**
 * Parameter-constraint checks as Vault applies them. Vault decodes allowed/denied values as
 * `[]interface{}` and compares them with reflect.DeepEqual or, for strings, a prefix/suffix `*` glob;
 * a nested list or map can never match a request parameter, so it is refused here.
 */
export function parameterConstraintProblems(rule: {
  path: string;
  capabilities: readonly string[];
  allowedParameters?: ParameterMap;
  deniedParameters?: ParameterMap;
  requiredParameters?: readonly string[];
}): ConstraintProblem[] {
  const out: ConstraintProblem[] = [];
  const maps: Array<['allowedParameters' | 'deniedParameters', ParameterMap]> = [
    ['allowedParameters', rule.allowedParameters],
    ['deniedParameters', rule.deniedParameters],
  ];
  let hasConstraints = (rule.requiredParameters?.length ?? 0) > 0;
  for (const [name, map] of maps) {
    for (const [param, values] of Object.entries(map ?? {})) {
      hasConstraints = true;
      const at = `${name}[${JSON.stringify(param)}]`;
      if (param.trim() === '') out.push({ field: at, message: 'a parameter name must not be empty', severity: 'deny', rule: 'vaultpolicy.parameter-constraint' });
      if (!Array.isArray(values)) {
        out.push({ field: at, message: 'must be a list of values (an empty list means any value)', severity: 'deny', rule: 'vaultpolicy.parameter-constraint' });
        continue;
      }
      values.forEach((v, i) => {
        if (!['string', 'number', 'boolean'].includes(typeof v)) {
          out.push({ field: `${at}[${i}]`, message: `${JSON.stringify(v)} can never match a request parameter: values must be strings, numbers or booleans`, severity: 'deny', rule: 'vaultpolicy.parameter-constraint' });
        } else if (typeof v === 'string' && v.length > 1 && v.slice(1, -1).includes('*')) {
          out.push({ field: `${at}[${i}]`, message: `"${v}": Vault treats "*" as a glob only at the start or end of a value; inside it is a literal "*"`, severity: 'warn', rule: 'vaultpolicy.parameter-constraint' });
        }
      });
    }
  }
  const required = rule.requiredParameters ?? [];
  required.forEach((p, i) => {
    if (p.trim() === '') out.push({ field: `requiredParameters[${i}]`, message: 'a parameter name must not be empty', severity: 'deny', rule: 'vaultpolicy.parameter-constraint' });
    if (required.indexOf(p) !== i) out.push({ field: `requiredParameters[${i}]`, message: `"${p}" is listed twice`, severity: 'warn', rule: 'vaultpolicy.parameter-constraint' });
    const denied = rule.deniedParameters?.[p];
    if (Array.isArray(denied) && denied.length === 0) {
      out.push({ field: `requiredParameters[${i}]`, message: `"${p}" is required but also denied with any value, so no request can succeed`, severity: 'deny', rule: 'vaultpolicy.parameter-constraint' });
    }
  });
  if (hasConstraints) {
    const caps = effectiveCapabilities(rule.capabilities);
    if (!caps.some((c) => PARAMETER_CAPABILITIES.has(c))) {
      out.push({ field: 'capabilities', message: 'parameter constraints only apply to create, update and patch, none of which this rule grants: they have no effect', severity: 'warn', rule: 'vaultpolicy.parameter-constraint' });
    }
    // Vault docs (Parameter constraints): "not supported for policies used with the version 2 kv secrets engine".
    if (/(^|\/)data\//.test(rule.path)) {
      out.push({ field: 'path', message: 'parameter constraints are not supported on KV version 2 data paths (Vault ignores them for kv-v2 writes)', severity: 'warn', rule: 'vaultpolicy.parameter-constraint' });
    }
  }
  return out;
}
