// Vault's ACL evaluation, as vault/acl.go (NewACL, AllowOperation, CheckAllowedFromNonExactPaths) and
// vault/policy.go (parsePaths) implement it and docs/concepts/policies documents it, and as OpenBao's
// internal/vault/policy/acl.go does (the same algorithm plus the `scan` capability and plain parameter
// matching). Pure and free of npm dependencies: the access report, `vaultgate plan`, the webhook and the
// Vault simulator share it. The target flavour (policy/capabilities.ts VaultTarget) is fixed when compiling.
//
// Matching, in the server's order (checked against OpenBao 2.7.2's sys/capabilities and real LISTs):
//   1. an exact pattern equal to the request path wins outright;
//   2. LIST/SCAN only: an exact pattern equal to the path without its trailing '/';
//   3. the non-exact patterns for the path as sent: the longest plain glob (`secret/foo*`) and every
//      matching segment wildcard pattern (`secret/+/foo`, `secret/+/foo*`) compete under the five
//      documented rules;
//   4. LIST/SCAN of a path ending in '/', only when nothing matched in 3: the non-exact patterns for the
//      path without the '/'. (Old Vault tried this before 3; a longer glob such as `foo/private/*` then
//      lost to `foo/private*`.)
// The same pattern in several policies (or twice in one) is one entry: capabilities unioned, parameter
// constraints merged as NewACL merges them, and `deny` wins on that pattern. Different patterns never
// merge: only the highest-priority match applies.
import { parseDuration } from '../schemas/ttl.ts';

import {
  CAPABILITIES,
  DEFAULT_TARGET,
  targetCapabilities,
  targetName,
  type Capability,
  type VaultTarget,
} from './capabilities.ts';

export { CAPABILITIES, type Capability, type VaultTarget };

/**
 * The order `sys/capabilities` lists capabilities in (vault/acl.go CapabilitiesAndSubscribeEventTypes;
 * OpenBao's ACL.Capabilities puts `scan` after `patch`; no flavour has both `scan` and `subscribe`).
 */
const REPORT_ORDER: readonly Capability[] = [
  'sudo',
  'read',
  'list',
  'update',
  'delete',
  'create',
  'patch',
  'scan',
  'subscribe',
  'recover',
];

/** What `sys/capabilities` answers: the capabilities, `["deny"]`, or `["root"]` for a root token. */
export type EffectiveCapability = Capability | 'root';

/** One `path` block: VaultPolicy.spec.rules[] (structurally the same as policy/render.ts PolicyRule). */
export interface AclRule {
  path: string;
  capabilities: readonly string[];
  allowedParameters?: Readonly<Record<string, readonly unknown[]>>;
  deniedParameters?: Readonly<Record<string, readonly unknown[]>>;
  requiredParameters?: readonly string[];
  /** Go duration ("90s") or bare seconds, as Vault's parseutil.ParseDurationSecond reads it. */
  minWrappingTTL?: string | number;
  maxWrappingTTL?: string | number;
}

/** A named policy: the Vault policy name (or any label the caller wants reported) and its rules. */
export interface PolicyRules {
  name: string;
  rules: readonly AclRule[];
}

/** The operation a request performs. `sudo` asks whether the matched rule grants sudo. */
export type RequestCapability = Exclude<Capability, 'deny'>;

export interface AclRequest {
  path: string;
  capability: RequestCapability;
  /** Request body / query parameters, checked against allowed/denied/required parameters. */
  parameters?: Readonly<Record<string, unknown>>;
  /** Requested response-wrapping TTL (seconds or a duration); absent = not wrapped. */
  wrapTTL?: string | number;
  /** The path is root-protected (e.g. `sys/audit/*`): Vault also requires `sudo` on the matched rule. */
  requiresSudo?: boolean;
}

export type DecisionCode =
  | 'allowed'
  | 'root'
  | 'no-match'
  | 'explicit-deny'
  | 'capability-missing'
  | 'sudo-required'
  | 'wrapping-ttl'
  | 'required-parameter'
  | 'denied-parameter'
  | 'parameter-not-allowed';

export type MatchKind = 'exact' | 'glob' | 'segment';

/** A pattern that matched the path too but lost, and the documented rule that decided (0 = exact match wins). */
export interface Outranked {
  pattern: string;
  rule: 0 | 1 | 2 | 3 | 4 | 5;
  why: string;
}

export interface AclDecision {
  allowed: boolean;
  code: DecisionCode;
  /** The pattern as written in the policies (e.g. `secret/data/x/*`), when one matched. */
  matchedPattern?: string;
  matchKind?: MatchKind;
  /** Policies that grant the requested capability on the matched pattern (or that deny it). */
  policies: string[];
  /** Every capability the matched pattern carries after merging (['deny'] if denied). */
  capabilities: Capability[];
  /** Vault's RootPrivs: the matched pattern grants sudo. */
  rootPrivs: boolean;
  outranked: Outranked[];
  reason: string;
}

// ---------------------------------------------------------------------------------------------------
// Compiled form

interface Permissions {
  pattern: string;
  kind: MatchKind;
  caps: Set<Capability>;
  /** Per capability, the policies granting it (vault: GrantingPoliciesMap), in policy order. */
  granting: Map<Capability, string[]>;
  denying: string[];
  allowedParameters?: Map<string, unknown[]>;
  deniedParameters?: Map<string, unknown[]>;
  requiredParameters: string[];
  minWrappingTTL: number;
  maxWrappingTTL: number;
}

interface SegmentEntry {
  perms: Permissions;
  firstWC: number;
  isPrefix: boolean;
  /** The pattern without its trailing '*'. */
  wcPath: string;
  parts: string[];
}

export interface CompiledAcl {
  readonly root: boolean;
  /** The server flavour whose semantics evaluate() applies (parameter matching, accepted capabilities). */
  readonly target: VaultTarget;
  readonly exact: ReadonlyMap<string, Permissions>;
  /** Plain globs keyed by the prefix (pattern minus '*'). */
  readonly prefix: ReadonlyMap<string, Permissions>;
  readonly segment: readonly SegmentEntry[];
  /** Problems found while compiling (invalid capabilities, `+*`); the server would reject such a policy. */
  readonly problems: readonly string[];
}

/** How Vault classifies a pattern (vault/policy.go parsePaths). */
export function classifyPattern(rawPath: string): { path: string; kind: MatchKind; isPrefix: boolean } {
  const path = rawPath.startsWith('/') ? rawPath.slice(1) : rawPath;
  const segment = path === '+' || path.includes('/+') || path.startsWith('+/');
  if (segment) return { path, kind: 'segment', isPrefix: path.endsWith('*') };
  if (path.endsWith('*')) return { path, kind: 'glob', isPrefix: true };
  return { path, kind: 'exact', isPrefix: false };
}

/**
 * Why a pattern would surprise its author, as Vault reads it: `+*` is rejected; a `*` that is not last
 * and a `+` that is not a whole segment are literal characters.
 */
export function patternProblems(rawPath: string): string[] {
  const { path } = classifyPattern(rawPath);
  const out: string[] = [];
  if (path.includes('+*')) out.push(`"${rawPath}": '+*' is forbidden by Vault (invalid use of wildcards)`);
  if (path.slice(0, -1).includes('*'))
    out.push(`"${rawPath}": '*' is only a glob as the last character; elsewhere Vault matches it literally`);
  const parts = path.split('/');
  if (parts.some((p) => p.includes('+') && p !== '+' && !p.includes('+*'))) {
    out.push(`"${rawPath}": '+' is only a wildcard as a whole path segment; elsewhere Vault matches it literally`);
  }
  return out;
}

function seconds(v: string | number | undefined): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return Math.max(0, Math.floor(v));
  const t = v.trim();
  if (/^[0-9]+$/.test(t)) return Number(t);
  // parseutil.ParseDurationSecond also accepts a "d" (days) suffix.
  const days = /^([0-9]+)d$/.exec(t);
  if (days) return Number(days[1]) * 86400;
  const ms = parseDuration(t);
  return ms === undefined ? Number.NaN : Math.floor(ms / 1000);
}

function lowerKeys(
  params: Readonly<Record<string, readonly unknown[]>> | undefined,
): Map<string, unknown[]> | undefined {
  if (params === undefined) return undefined;
  const m = new Map<string, unknown[]>();
  // Vault lower-cases parameter names when parsing (strings.ToLower(key)).
  for (const [k, v] of Object.entries(params)) m.set(k.toLowerCase(), [...v]);
  return m;
}

function addGranting(perms: Permissions, policy: string, caps: Iterable<Capability>): void {
  for (const c of caps) {
    if (c === 'deny') continue;
    const list = perms.granting.get(c) ?? [];
    if (!list.includes(policy)) list.push(policy);
    perms.granting.set(c, list);
  }
}

/** NewACL's merge of the same parameter map across stanzas: an empty list (any value) wins, else values append. */
function mergeParams(
  existing: Map<string, unknown[]> | undefined,
  incoming: Map<string, unknown[]> | undefined,
): Map<string, unknown[]> | undefined {
  if (!incoming || incoming.size === 0) return existing;
  if (!existing) return new Map([...incoming].map(([k, v]) => [k, [...v]]));
  for (const [k, v] of incoming) {
    const prev = existing.get(k);
    if (v.length === 0 || (prev !== undefined && prev.length === 0)) existing.set(k, []);
    else existing.set(k, [...v, ...(prev ?? [])]);
  }
  return existing;
}

/**
 * Build the lookup structure once; evaluate() accepts either this or the policies. A capability the
 * target does not have (`subscribe` on OpenBao, `scan` on HashiCorp Vault) is a problem and grants
 * nothing: the server refuses the whole policy.
 */
export function compileAcl(policies: readonly PolicyRules[], target: VaultTarget = DEFAULT_TARGET): CompiledAcl {
  const known = new Set<string>(targetCapabilities(target));
  const exact = new Map<string, Permissions>();
  const prefix = new Map<string, Permissions>();
  const segmentByPattern = new Map<string, Permissions>();
  const problems: string[] = [];
  let root = false;

  for (const policy of policies) {
    if (policy.name === 'root') root = true;
    for (const rule of policy.rules) {
      const { path, kind } = classifyPattern(rule.path);
      if (path.includes('+*')) {
        problems.push(`policy "${policy.name}": path "${rule.path}": invalid use of wildcards ('+*' is forbidden)`);
        continue;
      }
      // parsePaths: "deny" discards every other capability of the stanza.
      let caps = new Set<Capability>();
      for (const c of rule.capabilities) {
        if (c === 'deny') {
          caps = new Set(['deny']);
          break;
        }
        if (known.has(c)) caps.add(c as Capability);
        else
          problems.push(
            `policy "${policy.name}": path "${rule.path}": invalid capability "${c}" (${targetName(target)} refuses it)`,
          );
      }
      const min = seconds(rule.minWrappingTTL);
      const max = seconds(rule.maxWrappingTTL);
      if (Number.isNaN(min) || Number.isNaN(max))
        problems.push(`policy "${policy.name}": path "${rule.path}": unreadable wrapping TTL`);

      const table = kind === 'exact' ? exact : kind === 'glob' ? prefix : segmentByPattern;
      const key = kind === 'glob' ? path.slice(0, -1) : path;
      const existing = table.get(key);
      if (!existing) {
        const perms: Permissions = {
          pattern: path,
          kind,
          caps,
          granting: new Map(),
          denying: caps.has('deny') ? [policy.name] : [],
          allowedParameters: lowerKeys(rule.allowedParameters),
          deniedParameters: lowerKeys(rule.deniedParameters),
          requiredParameters: [...(rule.requiredParameters ?? [])],
          minWrappingTTL: Number.isNaN(min) ? 0 : min,
          maxWrappingTTL: Number.isNaN(max) ? 0 : max,
        };
        addGranting(perms, policy.name, caps);
        table.set(key, perms);
        continue;
      }
      if (existing.caps.has('deny')) {
        // An explicit deny already on this pattern: nothing else is saved.
        if (caps.has('deny') && !existing.denying.includes(policy.name)) existing.denying.push(policy.name);
        continue;
      }
      if (caps.has('deny')) {
        existing.caps = new Set(['deny']);
        existing.allowedParameters = undefined;
        existing.deniedParameters = undefined;
        existing.denying.push(policy.name);
        continue;
      }
      for (const c of caps) existing.caps.add(c);
      addGranting(existing, policy.name, caps);
      // Lifetimes: the lesser of two specified values wins, "keeping token lifetimes as short as possible".
      if (max > 0 && (existing.maxWrappingTTL === 0 || max < existing.maxWrappingTTL)) existing.maxWrappingTTL = max;
      if (min > 0 && (existing.minWrappingTTL === 0 || min < existing.minWrappingTTL)) existing.minWrappingTTL = min;
      existing.allowedParameters = mergeParams(existing.allowedParameters, lowerKeys(rule.allowedParameters));
      existing.deniedParameters = mergeParams(existing.deniedParameters, lowerKeys(rule.deniedParameters));
      for (const r of rule.requiredParameters ?? [])
        if (!existing.requiredParameters.includes(r)) existing.requiredParameters.push(r);
    }
  }

  const segment: SegmentEntry[] = [];
  for (const [pattern, perms] of segmentByPattern) {
    if (pattern === '') continue;
    const isPrefix = pattern.endsWith('*');
    const wcPath = isPrefix ? pattern.slice(0, -1) : pattern;
    segment.push({ perms, firstWC: pattern.indexOf('+'), isPrefix, wcPath, parts: wcPath.split('/') });
  }
  return { root, target: { ...target }, exact, prefix, segment, problems };
}

// ---------------------------------------------------------------------------------------------------
// Matching

interface Candidate {
  perms: Permissions;
  firstWC: number;
  isPrefix: boolean;
  wildcards: number;
  wcPath: string;
}

/**
 * Vault's `less` (priority ascending). Returns [comparison, deciding rule]:
 * 1. first wildcard/glob earlier → lower; 2. ends in '*' → lower; 3. more '+' → lower;
 * 4. shorter → lower; 5. lexicographically smaller → lower.
 */
function compare(a: Candidate, b: Candidate): [number, 1 | 2 | 3 | 4 | 5] {
  if (a.firstWC !== b.firstWC) return [a.firstWC < b.firstWC ? -1 : 1, 1];
  if (a.isPrefix !== b.isPrefix) return [a.isPrefix ? -1 : 1, 2];
  if (a.wildcards !== b.wildcards) return [a.wildcards > b.wildcards ? -1 : 1, 3];
  if (a.wcPath.length !== b.wcPath.length) return [a.wcPath.length < b.wcPath.length ? -1 : 1, 4];
  if (a.wcPath !== b.wcPath) return [a.wcPath < b.wcPath ? -1 : 1, 5];
  return [0, 5];
}

const RULE_TEXT: Record<1 | 2 | 3 | 4 | 5, string> = {
  1: 'its first wildcard or glob occurs earlier',
  2: 'it ends in * and the winner does not',
  3: 'it has more + segments',
  4: 'it is shorter',
  5: 'it is lexicographically smaller',
};

/** Every non-exact candidate for the path, as CheckAllowedFromNonExactPaths gathers them. */
function nonExactCandidates(acl: CompiledAcl, path: string): Candidate[] {
  const out: Candidate[] = [];
  // Vault takes only the longest matching plain glob (radix LongestPrefix). Shorter ones are kept as
  // candidates for the explanation only: they always lose to it under rule 1, so the winner is the same.
  for (const [prefix, perms] of acl.prefix) {
    if (path.startsWith(prefix))
      out.push({ perms, firstWC: prefix.length, isPrefix: true, wildcards: 0, wcPath: prefix });
  }
  if (acl.segment.length === 0) return out;
  const pathParts = path.split('/');
  for (const s of acl.segment) {
    if (pathParts.length < s.parts.length) continue;
    if (!s.isPrefix && s.parts.length !== pathParts.length) continue;
    let wildcards = 0;
    let ok = true;
    for (let i = 0; i < s.parts.length; i++) {
      const aclPart = s.parts[i] ?? '';
      const part = pathParts[i] ?? '';
      if (aclPart === '+') wildcards++;
      else if (aclPart === part) {
        /* literal segment */
      } else if (s.isPrefix && i === s.parts.length - 1 && part.startsWith(aclPart)) {
        /* trailing glob */
      } else {
        ok = false;
        break;
      }
    }
    if (ok) out.push({ perms: s.perms, firstWC: s.firstWC, isPrefix: s.isPrefix, wildcards, wcPath: s.wcPath });
  }
  return out;
}

interface Match {
  perms: Permissions;
  outranked: Outranked[];
}

function pickNonExact(acl: CompiledAcl, path: string): Match | undefined {
  const cands = nonExactCandidates(acl, path);
  if (cands.length === 0) return undefined;
  let best = cands[0] as Candidate;
  for (const c of cands.slice(1)) if (compare(c, best)[0] > 0) best = c;
  const outranked = cands
    .filter((c) => c !== best)
    .map((c): Outranked => {
      const rule = compare(c, best)[1];
      return {
        pattern: c.perms.pattern,
        rule,
        why: `lower priority than "${best.perms.pattern}": ${RULE_TEXT[rule]} (rule ${rule})`,
      };
    });
  return { perms: best.perms, outranked };
}

function exactMatch(acl: CompiledAcl, path: string, explainPath: string): Match | undefined {
  const perms = acl.exact.get(path);
  if (!perms) return undefined;
  const outranked = nonExactCandidates(acl, explainPath).map((c): Outranked => ({
    pattern: c.perms.pattern,
    rule: 0,
    why: `an exact match ("${perms.pattern}") always wins over wildcards and globs`,
  }));
  return { perms, outranked };
}

/**
 * The permissions the server would apply to (path, operation), following AllowOperation's lookup order:
 * exact, (LIST/SCAN) exact without the trailing '/', non-exact for the path as sent, and only then
 * (LIST/SCAN of a path ending in '/') non-exact for the path without it.
 */
function lookup(acl: CompiledAcl, rawPath: string, isList: boolean): Match | undefined {
  let path = rawPath;
  while (path.startsWith('/')) path = path.slice(1);
  const hit = exactMatch(acl, path, path);
  if (hit) return hit;
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  if (isList) {
    const listHit = exactMatch(acl, trimmed, path);
    if (listHit) return listHit;
  }
  const asSent = pickNonExact(acl, path);
  if (asSent) return asSent;
  // The fallback: `foo/+/private` matches a LIST of `foo/x/private/` (the path is a directory).
  return isList && path !== trimmed ? pickNonExact(acl, trimmed) : undefined;
}

/** Whether one pattern matches a request path on its own (no priority among patterns). */
export function patternMatches(pattern: string, path: string): boolean {
  const acl = compileAcl([{ name: '_', rules: [{ path: pattern, capabilities: ['read'] }] }]);
  let p = path;
  while (p.startsWith('/')) p = p.slice(1);
  return acl.exact.has(p) || nonExactCandidates(acl, p).length > 0;
}

// ---------------------------------------------------------------------------------------------------
// Parameter checks (AllowOperation after the capability check)

/** strutil.GlobbedStringsMatch: a leading and/or trailing '*' in the allowed value. */
export function globbedStringsMatch(item: string, val: string): boolean {
  if (item.length < 2) return val === item;
  const pre = item.startsWith('*');
  const suf = item.endsWith('*');
  if (pre && suf) return val.includes(item.slice(1, -1));
  if (pre) return val.endsWith(item.slice(1));
  if (suf) return val.startsWith(item.slice(0, -1));
  return val === item;
}

/**
 * reflect.DeepEqual between a policy value and a request value, as the server sees them: a request's
 * numbers arrive as json.Number, which never equals a policy's number (OpenBao 2.7.2: `{"n": 1}` is
 * refused under `allowed_parameters = { "n" = [1] }`), so numbers never match, nested ones included.
 * Strings inside objects and lists compare exactly (the `*` glob applies to top-level strings only).
 */
function deepEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' || typeof b === 'number') return false;
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

function valueInParameterList(v: unknown, list: readonly unknown[]): boolean {
  for (const el of list) {
    if (el === null || el === undefined || v === null || v === undefined) {
      if ((el ?? null) === (v ?? null)) return true;
    } else if (typeof el === 'string') {
      if (typeof v === 'string' && globbedStringsMatch(el, v)) return true;
    } else if (deepEqual(el, v)) {
      return true;
    }
  }
  return false;
}

/** parseutil.ParseCommaStringSlice on a string: "" → [], else split on ',' and trim. */
function commaSlice(s: string): string[] {
  return s === '' ? [] : s.split(',').map((x) => x.trim());
}

/**
 * A value is allowed when it is in the list, or (HashiCorp Vault ≥1.16 non-legacy matching) every
 * element of an array value, or of a comma-separated string, is. Note Vault's consequence: an empty
 * string always passes. OpenBao has no such splitting: the whole value must be in the list (OpenBao
 * 2.7.2 refuses `"a,b"`, `["a","b"]` and `""` under `allowed_parameters = { "v" = ["a", "b"] }`).
 */
function valueAllowed(v: unknown, list: readonly unknown[], flavor: VaultTarget['flavor']): boolean {
  return valueInList(v, list, flavor, 'every');
}

/**
 * A value is denied when it is in the list, or (HashiCorp Vault only) any element of an array or
 * comma-separated string is: OpenBao 2.7.2 accepts `"ok,bad"` and `["ok","bad"]` under
 * `denied_parameters = { "d" = ["bad"] }`.
 */
function valueDenied(v: unknown, list: readonly unknown[], flavor: VaultTarget['flavor']): boolean {
  return valueInList(v, list, flavor, 'some');
}

/** The matching both lists share: an empty list matches anything; Vault splits arrays and comma lists, OpenBao does not. */
function valueInList(
  v: unknown,
  list: readonly unknown[],
  flavor: VaultTarget['flavor'],
  elements: 'every' | 'some',
): boolean {
  if (list.length === 0) return true;
  if (valueInParameterList(v, list)) return true;
  if (flavor === 'openbao') return false;
  const parts = Array.isArray(v) ? (v as unknown[]) : typeof v === 'string' ? commaSlice(v) : undefined;
  if (!parts) return false;
  return elements === 'every'
    ? parts.every((x) => valueInParameterList(x, list))
    : parts.some((x) => valueInParameterList(x, list));
}

type ParamVerdict = { ok: true } | { ok: false; code: DecisionCode; reason: string };

function checkParameters(
  perms: Permissions,
  params: Readonly<Record<string, unknown>>,
  flavor: VaultTarget['flavor'],
): ParamVerdict {
  // Vault looks the lower-cased required name up in the request data as sent.
  for (const r of perms.requiredParameters) {
    if (!Object.hasOwn(params, r.toLowerCase()))
      return { ok: false, code: 'required-parameter', reason: `parameter "${r}" is required by "${perms.pattern}"` };
  }
  const entries = Object.entries(params);
  if (entries.length === 0) return { ok: true };
  const denied = perms.deniedParameters;
  if (denied && denied.size > 0) {
    if (denied.has('*'))
      return {
        ok: false,
        code: 'denied-parameter',
        reason: `"${perms.pattern}" denies every parameter (denied_parameters "*")`,
      };
    for (const [name, value] of entries) {
      const list = denied.get(name.toLowerCase());
      if (list && valueDenied(value, list, flavor)) {
        return {
          ok: false,
          code: 'denied-parameter',
          reason:
            list.length === 0
              ? `parameter "${name}" is denied by "${perms.pattern}"`
              : `this value of parameter "${name}" is denied by "${perms.pattern}"`,
        };
      }
    }
  }
  const allowed = perms.allowedParameters;
  if (!allowed || allowed.size === 0) return { ok: true };
  const allowAll = allowed.has('*');
  if (allowed.size === 1 && allowAll) return { ok: true };
  for (const [name, value] of entries) {
    const list = allowed.get(name.toLowerCase());
    if (list === undefined && !allowAll)
      return {
        ok: false,
        code: 'parameter-not-allowed',
        reason: `parameter "${name}" is not in the allowed parameters of "${perms.pattern}"`,
      };
    if (list !== undefined && !valueAllowed(value, list, flavor))
      return {
        ok: false,
        code: 'parameter-not-allowed',
        reason: `this value of parameter "${name}" is not allowed by "${perms.pattern}"`,
      };
  }
  return { ok: true };
}

// ---------------------------------------------------------------------------------------------------
// Public evaluation

function orderedCaps(caps: ReadonlySet<Capability>): Capability[] {
  if (caps.has('deny')) return ['deny'];
  return REPORT_ORDER.filter((c) => caps.has(c));
}

function isCompiled(x: readonly PolicyRules[] | CompiledAcl): x is CompiledAcl {
  return !Array.isArray(x);
}

/**
 * Would the server allow this request for a token carrying these policies? Mirrors ACL.AllowOperation.
 * Given policies, compiles them for `target` (default OpenBao 2.7); a compiled ACL keeps its own target.
 */
export function evaluate(
  policies: readonly PolicyRules[] | CompiledAcl,
  request: AclRequest,
  target?: VaultTarget,
): AclDecision {
  const acl = isCompiled(policies) ? policies : compileAcl(policies, target);
  const cap = request.capability;
  const base = {
    policies: [] as string[],
    capabilities: [] as Capability[],
    rootPrivs: false,
    outranked: [] as Outranked[],
  };
  if (acl.root)
    return {
      ...base,
      allowed: true,
      code: 'root',
      policies: ['root'],
      rootPrivs: true,
      reason: 'the root policy allows everything',
    };

  const match = lookup(acl, request.path, cap === 'list' || cap === 'scan');
  if (!match) {
    return {
      ...base,
      allowed: false,
      code: 'no-match',
      reason: `no policy has a pattern matching "${request.path}" (Vault denies by default)`,
    };
  }
  const { perms, outranked } = match;
  const decided = {
    matchedPattern: perms.pattern,
    matchKind: perms.kind,
    capabilities: orderedCaps(perms.caps),
    rootPrivs: perms.caps.has('sudo'),
    outranked,
  };
  const via = `"${perms.pattern}"`;
  if (perms.caps.has('deny')) {
    return {
      ...decided,
      allowed: false,
      code: 'explicit-deny',
      policies: [...perms.denying],
      reason: `${via} is denied by ${list(perms.denying)} (deny overrides every capability on that pattern)`,
    };
  }
  if (!perms.caps.has(cap)) {
    const has = orderedCaps(perms.caps);
    const grantedBy = [...new Set([...perms.granting.values()].flat())];
    return {
      ...decided,
      allowed: false,
      code: 'capability-missing',
      policies: grantedBy,
      reason: `${via} grants ${has.length ? has.join(', ') : 'no capabilities'} but not ${cap}`,
    };
  }
  const granting = [...(perms.granting.get(cap) ?? [])];
  const deny = (code: DecisionCode, reason: string): AclDecision => ({
    ...decided,
    allowed: false,
    code,
    policies: granting,
    reason,
  });
  if (request.requiresSudo && !perms.caps.has('sudo'))
    return deny('sudo-required', `the path is root-protected and ${via} does not grant sudo`);

  const wrap = request.wrapTTL === undefined ? undefined : seconds(request.wrapTTL);
  if (perms.maxWrappingTTL > 0 && (wrap === undefined || wrap > perms.maxWrappingTTL)) {
    return deny('wrapping-ttl', `${via} requires response wrapping with a TTL of at most ${perms.maxWrappingTTL}s`);
  }
  if (perms.minWrappingTTL > 0 && (wrap === undefined || wrap < perms.minWrappingTTL)) {
    return deny('wrapping-ttl', `${via} requires response wrapping with a TTL of at least ${perms.minWrappingTTL}s`);
  }
  if (perms.minWrappingTTL !== 0 && perms.maxWrappingTTL !== 0 && perms.maxWrappingTTL < perms.minWrappingTTL) {
    return deny('wrapping-ttl', `${via} has merged wrapping TTL bounds that cannot both hold`);
  }
  // Only operations that carry parameters are checked against parameter constraints.
  if (cap === 'read' || cap === 'update' || cap === 'create' || cap === 'patch' || cap === 'recover') {
    const v = checkParameters(perms, request.parameters ?? {}, acl.target.flavor);
    if (!v.ok) return deny(v.code, v.reason);
  }
  return {
    ...decided,
    allowed: true,
    code: 'allowed',
    policies: granting,
    reason: `${cap} on "${request.path}" granted by ${via} in ${list(granting)}`,
  };
}

function list(names: readonly string[]): string {
  return names.length === 0 ? 'no policy' : names.map((n) => `policy "${n}"`).join(', ');
}

/**
 * The capabilities that hold on a path (ACL.Capabilities): the matched pattern's capabilities in the
 * server's report order, looked up as a LIST (so `secret/foo/` also finds `secret/foo`), ['deny'] when
 * nothing matches, and ['root'] for the root policy (what OpenBao 2.7.2 answers for the root token, on
 * any path). `sys/capabilities` answers the same list sorted: see sysCapabilities.
 */
export function effectiveCapabilities(
  policies: readonly PolicyRules[] | CompiledAcl,
  path: string,
  target?: VaultTarget,
): EffectiveCapability[] {
  const acl = isCompiled(policies) ? policies : compileAcl(policies, target);
  if (acl.root) return ['root'];
  const match = lookup(acl, path, true);
  if (!match) return ['deny'];
  const caps = orderedCaps(match.perms.caps);
  return caps.length === 0 ? ['deny'] : caps;
}

/** What `sys/capabilities` answers: effectiveCapabilities sorted by name (Core.Capabilities sorts them). */
export function sysCapabilities(
  policies: readonly PolicyRules[] | CompiledAcl,
  path: string,
  target?: VaultTarget,
): EffectiveCapability[] {
  return effectiveCapabilities(policies, path, target).sort();
}
