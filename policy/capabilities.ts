// Vault's ACL capabilities and the parameter-constraint rules Vault applies to a path stanza
// (vault/policy.go: parsePaths), per target flavour: HashiCorp Vault or OpenBao. Pure; shared by the
// webhook rules, the controller and the CLI. The single home of the capability sets.

/**
 * Every capability either flavour knows, in canonical order: the bit order of vault/policy.go
 * (DenyCapabilityInt, CreateCapabilityInt, …, PatchCapabilityInt), then OpenBao's ScanCapabilityInt,
 * then Vault's SubscribeCapabilityInt and RecoverCapabilityInt. No flavour has all of them: see
 * FLAVOR_CAPABILITIES for what a target accepts.
 */
export const CAPABILITIES = [
  'deny',
  'create',
  'read',
  'update',
  'delete',
  'list',
  'sudo',
  'patch',
  'scan',
  'subscribe',
  'recover',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** The servers vaultgate can target. */
export const VAULT_FLAVORS = ['openbao', 'vault'] as const;
export type VaultFlavor = (typeof VAULT_FLAVORS)[number];

/** The Vault server vaultgate writes to: its flavour and its major.minor version ("2.7"). */
export interface VaultTarget {
  flavor: VaultFlavor;
  version: string;
}

/** OpenBao 2.7 unless configured otherwise (`--vault-flavor`, `--vault-version`, chart `vault.flavor` / `vault.version`). */
export const DEFAULT_TARGET: Readonly<VaultTarget> = Object.freeze({ flavor: 'openbao', version: '2.7' });

/**
 * The capabilities each flavour's policy parser accepts. OpenBao (internal/vault/policy/policy.go,
 * parsePaths) has `scan` (recursive listing, OpenBao ≥ 2.2) and answers `400 invalid capability
 * "subscribe"` for Vault's `subscribe` and `recover`; HashiCorp Vault has those two and no `scan`.
 */
export const FLAVOR_CAPABILITIES: Readonly<Record<VaultFlavor, readonly Capability[]>> = {
  openbao: ['deny', 'create', 'read', 'update', 'delete', 'list', 'sudo', 'patch', 'scan'],
  vault: ['deny', 'create', 'read', 'update', 'delete', 'list', 'sudo', 'patch', 'subscribe', 'recover'],
};

/** The first OpenBao version with `scan` (openbao/openbao#763, released in v2.2.0). */
const SCAN_SINCE: readonly [number, number] = [2, 2];

const ORDER = new Map<string, number>(CAPABILITIES.map((c, i) => [c, i]));

/** Whether `value` is a capability of any flavour (the canonical list). */
export function isCapability(value: string): value is Capability {
  return ORDER.has(value);
}

/** "OpenBao 2.7" / "HashiCorp Vault 1.19": the target as messages name it. */
export function targetName(target: VaultTarget): string {
  return `${target.flavor === 'openbao' ? 'OpenBao' : 'HashiCorp Vault'} ${target.version}`;
}

function majorMinor(version: string): [number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** The capabilities the target accepts, in canonical order. */
export function targetCapabilities(target: VaultTarget = DEFAULT_TARGET): Capability[] {
  const caps = [...FLAVOR_CAPABILITIES[target.flavor]];
  const v = majorMinor(target.version);
  if (target.flavor === 'openbao' && v && (v[0] < SCAN_SINCE[0] || (v[0] === SCAN_SINCE[0] && v[1] < SCAN_SINCE[1]))) {
    return caps.filter((c) => c !== 'scan');
  }
  return caps;
}

/** Whether the target's policy parser accepts this (lower-case) capability. */
export function targetHasCapability(value: string, target: VaultTarget = DEFAULT_TARGET): value is Capability {
  return isCapability(value) && targetCapabilities(target).includes(value);
}

/**
 * Why the target refuses a capability name, or undefined when it accepts it. Names the flavour that
 * has it, so `subscribe` on OpenBao reads "a HashiCorp Vault capability; OpenBao 2.7 refuses it".
 */
export function capabilityProblem(value: string, target: VaultTarget = DEFAULT_TARGET): string | undefined {
  const c = value.trim().toLowerCase();
  if (targetHasCapability(c, target)) return undefined;
  const name = targetName(target);
  const accepted = `${name} accepts ${targetCapabilities(target).join(', ')}`;
  if (!isCapability(c)) return `"${value}" is not a Vault capability (${accepted})`;
  const what = FLAVOR_CAPABILITIES[target.flavor].includes(c)
    ? `a capability of OpenBao ${SCAN_SINCE.join('.')} and later`
    : target.flavor === 'openbao'
      ? 'a HashiCorp Vault capability'
      : 'an OpenBao capability';
  return `"${value}" is ${what}: ${name} refuses it (invalid capability "${c}"); ${accepted}`;
}

/** `--vault-flavor` / `--vault-version` (or chart values) → a target; throws naming the flag and the rule. */
export function parseVaultTarget(
  flavor: string | undefined,
  version: string | undefined,
  names = { flavor: '--vault-flavor', version: '--vault-version' },
): VaultTarget {
  const f = (flavor ?? DEFAULT_TARGET.flavor).trim().toLowerCase();
  if (!(VAULT_FLAVORS as readonly string[]).includes(f)) {
    throw new Error(
      `${names.flavor} must be one of ${VAULT_FLAVORS.join(', ')} (openbao = OpenBao, vault = HashiCorp Vault), got "${flavor ?? ''}"`,
    );
  }
  const fl = f as VaultFlavor;
  if (version === undefined) {
    if (fl !== DEFAULT_TARGET.flavor)
      throw new Error(
        `${names.version} is required with ${names.flavor}=${fl} (the server's major.minor version, e.g. 1.19)`,
      );
    return { ...DEFAULT_TARGET };
  }
  const v = version.trim().replace(/^v/, '');
  if (!/^\d+\.\d+(\.\d+)?$/.test(v))
    throw new Error(`${names.version} must be a version such as 2.7 or 2.7.2, got "${version}"`);
  return { flavor: fl, version: v };
}

/**
 * Whether a server's reported version (`sys/seal-status` `version`, e.g. "2.7.2" or "1.19.0+ent")
 * matches the configured target: the same major.minor. Says why not, or undefined when it matches.
 */
export function versionMismatch(target: VaultTarget, reported: string): string | undefined {
  const want = majorMinor(target.version);
  const got = majorMinor(reported);
  if (!want || !got)
    return `the server reports version "${reported}", which is not a version vaultgate can compare with ${targetName(target)}`;
  if (want[0] === got[0] && want[1] === got[1]) return undefined;
  return `the server reports version ${reported}, but vaultgate is set up for ${targetName(target)} (--vault-flavor/--vault-version, chart vault.flavor/vault.version): admission may accept or refuse what this server does not`;
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
export function ruleCapabilities(caps: readonly string[]): Capability[] {
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

/** Whether a constraint value holds a number anywhere (itself, or inside a list or object value). */
function holdsNumber(v: unknown): boolean {
  if (typeof v === 'number') return true;
  if (Array.isArray(v)) return v.some(holdsNumber);
  if (v !== null && typeof v === 'object') return Object.values(v).some(holdsNumber);
  return false;
}

/**
 * Parameter-constraint checks as Vault applies them. Vault and OpenBao decode allowed/denied values as
 * `[]interface{}` and compare them with reflect.DeepEqual or, for strings, a prefix/suffix `*` glob.
 * Object and list values are accepted (`"map" = [{"good" = "one"}]` matches a request whose `map` is
 * exactly that object). A number never matches: the server decodes a JSON request's numbers as
 * json.Number, which DeepEqual never equates with the policy's number (OpenBao 2.7.2 answers 403 to
 * `{"n": 1}` under `allowed_parameters = { "n" = [1] }`), so numbers are warned about.
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
      if (param.trim() === '')
        out.push({
          field: at,
          message: 'a parameter name must not be empty',
          severity: 'deny',
          rule: 'vaultpolicy.parameter-constraint',
        });
      if (!Array.isArray(values)) {
        out.push({
          field: at,
          message: 'must be a list of values (an empty list means any value)',
          severity: 'deny',
          rule: 'vaultpolicy.parameter-constraint',
        });
        continue;
      }
      values.forEach((v, i) => {
        if (v === null || v === undefined || !['string', 'number', 'boolean', 'object'].includes(typeof v)) {
          out.push({
            field: `${at}[${i}]`,
            message: `${JSON.stringify(v) ?? String(v)} is not a value Vault can hold: values are strings, booleans, lists or objects`,
            severity: 'deny',
            rule: 'vaultpolicy.parameter-constraint',
          });
        } else if (holdsNumber(v)) {
          out.push({
            field: `${at}[${i}]`,
            message: `${JSON.stringify(v)} never matches a request: Vault and OpenBao read a request's numbers as json.Number, which never equals a number in a policy (allow the value as a string, and send it as one)`,
            severity: 'warn',
            rule: 'vaultpolicy.parameter-constraint',
          });
        } else if (typeof v === 'string' && v.length > 1 && v.slice(1, -1).includes('*')) {
          out.push({
            field: `${at}[${i}]`,
            message: `"${v}": Vault treats "*" as a glob only at the start or end of a value; inside it is a literal "*"`,
            severity: 'warn',
            rule: 'vaultpolicy.parameter-constraint',
          });
        }
      });
    }
  }
  const required = rule.requiredParameters ?? [];
  required.forEach((p, i) => {
    if (p.trim() === '')
      out.push({
        field: `requiredParameters[${i}]`,
        message: 'a parameter name must not be empty',
        severity: 'deny',
        rule: 'vaultpolicy.parameter-constraint',
      });
    if (required.indexOf(p) !== i)
      out.push({
        field: `requiredParameters[${i}]`,
        message: `"${p}" is listed twice`,
        severity: 'warn',
        rule: 'vaultpolicy.parameter-constraint',
      });
    const denied = rule.deniedParameters?.[p];
    if (Array.isArray(denied) && denied.length === 0) {
      out.push({
        field: `requiredParameters[${i}]`,
        message: `"${p}" is required but also denied with any value, so no request can succeed`,
        severity: 'deny',
        rule: 'vaultpolicy.parameter-constraint',
      });
    }
  });
  if (hasConstraints) {
    const caps = ruleCapabilities(rule.capabilities);
    if (!caps.some((c) => PARAMETER_CAPABILITIES.has(c))) {
      out.push({
        field: 'capabilities',
        message:
          'parameter constraints only apply to create, update and patch, none of which this rule grants: they have no effect',
        severity: 'warn',
        rule: 'vaultpolicy.parameter-constraint',
      });
    }
    // Vault docs (Parameter constraints): "not supported for policies used with the version 2 kv secrets engine".
    if (/(^|\/)data\//.test(rule.path)) {
      out.push({
        field: 'path',
        message:
          'parameter constraints are not supported on KV version 2 data paths (Vault ignores them for kv-v2 writes)',
        severity: 'warn',
        rule: 'vaultpolicy.parameter-constraint',
      });
    }
  }
  return out;
}
