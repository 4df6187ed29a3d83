// Raw Vault policy text (HCL as Vault accepts it, or JSON) → the VaultPolicy rule model, with
// line:column errors.
//
// Why a small parser instead of a library: Vault reads policies with HCL *1* (hashicorp/hcl v1,
// vault/policy.go ParseACLPolicy), while the maintained npm options parse HCL2 through Go WASM
// (@cdktn/hcl2json: async, ~300 ms first-call start-up, and HCL2 differs from HCL1 on repeated
// blocks and `key { }` objects). A policy uses a tiny subset — `path "p" { key = value }` with
// strings, numbers, booleans, lists and objects — so a synchronous ~250-line HCL1-subset parser
// gives exact positions, keeps the admission core synchronous, and adds no dependency.
import type { VaultPolicyRule } from '../schemas/types.ts';
import { capabilityProblem, isCapability, OLD_STYLE_POLICIES, targetName, type VaultTarget } from './capabilities.ts';
import { DURATION_PATTERN } from '../schemas/ttl.ts';

export interface Position {
  line: number;
  column: number;
}
export interface PolicyParseError extends Position {
  message: string;
  /** The admission rule the error breaks, when more specific than a syntax error (e.g. `vaultpolicy.capability`). */
  rule?: string;
}
export interface ParsedRule extends Position {
  rule: VaultPolicyRule;
}
export type PolicyParseResult = { ok: true; rules: ParsedRule[] } | { ok: false; errors: PolicyParseError[] };

/** Keys both flavours accept inside a path stanza (hclutil.CheckHCLKeys in vault/policy.go and OpenBao's policy.go). */
const COMMON_PATH_KEYS = [
  'comment',
  'policy',
  'capabilities',
  'allowed_parameters',
  'denied_parameters',
  'required_parameters',
  'min_wrapping_ttl',
  'max_wrapping_ttl',
  'mfa_methods',
  'control_group',
];
/** Keys only one flavour accepts: OpenBao 2.7 answers `invalid key "subscribe_event_types"`. */
const FLAVOR_PATH_KEYS: Record<VaultTarget['flavor'], string[]> = {
  vault: ['subscribe_event_types'],
  openbao: ['pagination_limit', 'expiration', 'list_scan_response_keys_filter_path'],
};
const UNSUPPORTED_KEYS: Record<string, string> = {
  mfa_methods: 'is Vault Enterprise-only and not supported by vaultgate',
  control_group: 'is Vault Enterprise-only and not supported by vaultgate',
  subscribe_event_types: 'is not supported by vaultgate yet',
  pagination_limit: 'is OpenBao-only and not supported by vaultgate yet',
  expiration: 'is OpenBao-only and not supported by vaultgate yet',
  list_scan_response_keys_filter_path: 'is OpenBao-only and not supported by vaultgate yet',
};

/** The stanza keys a target accepts; without a target, those of either flavour. */
function pathKeys(target: VaultTarget | undefined): Set<string> {
  const extra = target ? FLAVOR_PATH_KEYS[target.flavor] : Object.values(FLAVOR_PATH_KEYS).flat();
  return new Set([...COMMON_PATH_KEYS, ...extra]);
}

// ---- syntax tree ------------------------------------------------------------------------------
type Scalar = { kind: 'string'; value: string } | { kind: 'number'; value: number } | { kind: 'bool'; value: boolean };
type Node = (Scalar | { kind: 'list'; items: Node[] } | { kind: 'object'; items: Item[] }) & Position;
interface Key extends Position {
  value: string;
}
interface Item extends Position {
  keys: Key[];
  value: Node;
}

class SyntaxError_ extends Error {
  constructor(
    readonly pos: Position,
    message: string,
  ) {
    super(message);
  }
}

// ---- HCL1 lexer -------------------------------------------------------------------------------
type TokenType = 'string' | 'number' | 'bool' | 'ident' | '{' | '}' | '[' | ']' | '=' | ',' | 'eof';
interface Token extends Position {
  type: TokenType;
  text: string;
  value?: string | number | boolean;
}

function lex(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const pos = (at = i): Position => ({ line, column: at - lineStart + 1 });
  const newline = (at: number) => {
    line++;
    lineStart = at + 1;
  };
  while (i < src.length) {
    const c = src[i] as string;
    if (c === '\n') {
      newline(i);
      i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '#' || (c === '/' && src[i + 1] === '/')) {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '*') {
      const start = pos();
      const end = src.indexOf('*/', i + 2);
      if (end < 0) throw new SyntaxError_(start, 'comment is not closed ("/*" without "*/")');
      for (let k = i; k < end; k++) if (src[k] === '\n') newline(k);
      i = end + 2;
      continue;
    }
    const start = pos();
    if ('{}[]=,'.includes(c)) {
      tokens.push({ type: c as TokenType, text: c, ...start });
      i++;
      continue;
    }
    if (c === ':') throw new SyntaxError_(start, 'unexpected ":" (HCL uses "=", or write the whole policy as JSON)');
    if (c === '"') {
      let value = '';
      i++;
      for (;;) {
        const d = src[i];
        if (d === undefined || d === '\n') throw new SyntaxError_(start, 'string is not closed (missing ")');
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\') {
          const e = src[i + 1];
          const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\' };
          if (e !== undefined && e in simple) {
            value += simple[e];
            i += 2;
            continue;
          }
          if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(src.slice(i + 2, i + 6))) {
            value += String.fromCharCode(parseInt(src.slice(i + 2, i + 6), 16));
            i += 6;
            continue;
          }
          throw new SyntaxError_(pos(), `unknown escape sequence "\\${e ?? ''}" in string`);
        }
        value += d;
        i++;
      }
      tokens.push({ type: 'string', text: value, value, ...start });
      continue;
    }
    if (c === '<' && src[i + 1] === '<') {
      const m = /^<<(-?)([A-Za-z_][A-Za-z0-9_]*)\r?\n/.exec(src.slice(i));
      if (!m) throw new SyntaxError_(start, 'heredoc needs a marker, e.g. <<EOT, followed by a newline');
      const indented = m[1] === '-';
      const marker = m[2] as string;
      i += m[0].length;
      newline(i - 1);
      const lines: string[] = [];
      for (;;) {
        if (i >= src.length) throw new SyntaxError_(start, `heredoc is not closed (missing "${marker}" line)`);
        let end = src.indexOf('\n', i);
        if (end < 0) end = src.length;
        const text = src.slice(i, end).replace(/\r$/, '');
        const done = (indented ? text.trim() : text) === marker;
        if (end < src.length) newline(end);
        i = end + 1;
        if (done) break;
        lines.push(text);
      }
      const value = lines.length ? `${lines.join('\n')}\n` : '';
      tokens.push({ type: 'string', text: value, value, ...start });
      continue;
    }
    const num = /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/.exec(src.slice(i));
    if (num) {
      tokens.push({ type: 'number', text: num[0], value: Number(num[0]), ...start });
      i += num[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_.-]*/.exec(src.slice(i));
    if (ident) {
      const word = ident[0];
      if (word === 'true' || word === 'false')
        tokens.push({ type: 'bool', text: word, value: word === 'true', ...start });
      else tokens.push({ type: 'ident', text: word, value: word, ...start });
      i += word.length;
      continue;
    }
    throw new SyntaxError_(start, `unexpected character ${JSON.stringify(c)}`);
  }
  tokens.push({ type: 'eof', text: '', ...pos() });
  return tokens;
}

// ---- HCL1 parser ------------------------------------------------------------------------------
class Parser {
  #i = 0;
  constructor(private readonly tokens: Token[]) {}

  peek(): Token {
    return this.tokens[this.#i] ?? (this.tokens[this.tokens.length - 1] as Token);
  }
  next(): Token {
    const t = this.peek();
    this.#i++;
    return t;
  }
  expect(type: TokenType, what: string): Token {
    const t = this.next();
    if (t.type !== type) throw new SyntaxError_(t, `expected ${what}, found ${describe(t)}`);
    return t;
  }

  /** Items up to `}` (nested) or end of input (top level); commas between items are optional, as in HCL1. */
  objectItems(nested: boolean, open?: Position): Item[] {
    const items: Item[] = [];
    for (;;) {
      const t = this.peek();
      if (t.type === (nested ? '}' : 'eof')) return items;
      if (t.type === (nested ? 'eof' : '}'))
        throw new SyntaxError_(
          nested && open ? open : t,
          nested ? 'this "{" is never closed (missing "}")' : 'unexpected "}"',
        );
      if (t.type === ',' && items.length > 0) {
        this.next();
        continue;
      }
      items.push(this.item());
    }
  }

  item(): Item {
    const keys: Key[] = [];
    while (this.peek().type === 'ident' || this.peek().type === 'string') {
      const t = this.next();
      keys.push({ value: t.text, line: t.line, column: t.column });
    }
    const first = keys[0];
    if (!first) {
      const t = this.peek();
      throw new SyntaxError_(t, `expected a key, found ${describe(t)}`);
    }
    const t = this.peek();
    if (t.type === '=') {
      if (keys.length > 1)
        throw new SyntaxError_(
          t,
          `expected "{" after ${keys.map((k) => JSON.stringify(k.value)).join(' ')}, found "="`,
        );
      this.next();
      return { keys, value: this.value(), line: first.line, column: first.column };
    }
    if (t.type === '{') return { keys, value: this.object(), line: first.line, column: first.column };
    throw new SyntaxError_(
      t,
      `expected "=" or "{" after ${JSON.stringify(keys[keys.length - 1]?.value)}, found ${describe(t)}`,
    );
  }

  object(): Node {
    const open = this.expect('{', '"{"');
    const items = this.objectItems(true, open);
    this.expect('}', '"}"');
    return { kind: 'object', items, line: open.line, column: open.column };
  }

  value(): Node {
    const t = this.peek();
    switch (t.type) {
      case 'string':
        this.next();
        return { kind: 'string', value: t.text, line: t.line, column: t.column };
      case 'number':
        this.next();
        return { kind: 'number', value: t.value as number, line: t.line, column: t.column };
      case 'bool':
        this.next();
        return { kind: 'bool', value: t.value as boolean, line: t.line, column: t.column };
      case '{':
        return this.object();
      case '[': {
        this.next();
        const items: Node[] = [];
        while (this.peek().type !== ']') {
          if (this.peek().type === 'eof') throw new SyntaxError_(t, 'list is not closed (missing "]")');
          items.push(this.value());
          if (this.peek().type === ',') this.next();
          else if (this.peek().type !== ']') {
            const u = this.peek();
            throw new SyntaxError_(u, `expected "," or "]" in list, found ${describe(u)}`);
          }
        }
        this.next();
        return { kind: 'list', items, line: t.line, column: t.column };
      }
      case 'ident':
        throw new SyntaxError_(t, `unexpected bare word "${t.text}" (quote strings: "${t.text}")`);
      default:
        throw new SyntaxError_(t, `expected a value, found ${describe(t)}`);
    }
  }
}

function describe(t: Token): string {
  if (t.type === 'eof') return 'end of input';
  if (t.type === 'string') return `string ${JSON.stringify(t.text)}`;
  return `"${t.text}"`;
}

// ---- JSON input -------------------------------------------------------------------------------
/** JSON → the same tree; positions are those of each key's first occurrence after its parent's. */
function jsonTree(src: string): Item[] {
  let value: unknown;
  try {
    value = JSON.parse(src);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /position (\d+)/.exec(message);
    const pos = at ? positionOf(src, Number(at[1])) : { line: 1, column: 1 };
    throw new SyntaxError_(pos, `invalid JSON: ${message.replace(/ in JSON at position \d+.*$/, '')}`);
  }
  let cursor = 0;
  const locate = (key: string): Position => {
    const found = src.indexOf(JSON.stringify(key), cursor);
    if (found >= 0) cursor = found + 1;
    return positionOf(src, found >= 0 ? found : cursor);
  };
  const toNode = (v: unknown, pos: Position): Node => {
    if (typeof v === 'string') return { kind: 'string', value: v, ...pos };
    if (typeof v === 'number') return { kind: 'number', value: v, ...pos };
    if (typeof v === 'boolean') return { kind: 'bool', value: v, ...pos };
    if (Array.isArray(v)) return { kind: 'list', items: v.map((x) => toNode(x, pos)), ...pos };
    if (v && typeof v === 'object') return { kind: 'object', items: toItems(v as Record<string, unknown>), ...pos };
    throw new SyntaxError_(pos, 'null is not a valid value in a policy');
  };
  const toItems = (obj: Record<string, unknown>): Item[] =>
    Object.entries(obj).map(([k, v]) => {
      const pos = locate(k);
      return { keys: [{ value: k, ...pos }], value: toNode(v, pos), ...pos };
    });
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new SyntaxError_({ line: 1, column: 1 }, 'a JSON policy must be an object such as {"path": {...}}');
  return toItems(value as Record<string, unknown>);
}

function positionOf(src: string, offset: number): Position {
  const before = src.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

// ---- tree → rules -----------------------------------------------------------------------------
/**
 * Parse raw policy text into rules, or every error found (a syntax error stops at the first). With a
 * target, what that server's parser refuses is an error too: a capability or stanza key of the other
 * flavour (`subscribe` on OpenBao, `scan` on HashiCorp Vault). Without one, either flavour's is accepted.
 */
export function parsePolicyText(text: string, target?: VaultTarget): PolicyParseResult {
  let top: Item[];
  try {
    top = text.trimStart().startsWith('{') ? jsonTree(text) : new Parser(lex(text)).objectItems(false);
  } catch (err) {
    if (err instanceof SyntaxError_)
      return { ok: false, errors: [{ line: err.pos.line, column: err.pos.column, message: err.message }] };
    throw err;
  }
  const errors: PolicyParseError[] = [];
  const rules: ParsedRule[] = [];
  const fail: Fail = (pos, message, rule) => {
    errors.push({ line: pos.line, column: pos.column, message, ...(rule ? { rule } : {}) });
  };

  for (const item of top) {
    const [head, ...rest] = item.keys;
    if (!head) continue;
    if (head.value === 'name') continue; // Vault accepts and ignores a top-level name
    if (head.value !== 'path') {
      fail(head, `unknown top-level key "${head.value}" (a policy holds only path "..." { } blocks)`);
      continue;
    }
    for (const stanza of pathStanzas(rest, item.value, head, fail)) {
      const rule = pathRule(stanza.path, stanza.body, fail, target);
      if (rule) rules.push({ rule, line: stanza.pos.line, column: stanza.pos.column });
    }
  }
  if (errors.length) return { ok: false, errors };
  if (rules.length === 0)
    return { ok: false, errors: [{ line: 1, column: 1, message: 'the policy has no path "..." { } block' }] };
  return { ok: true, rules };
}

type Fail = (pos: Position, message: string, rule?: string) => void;

/** `path "p" { }`, `path { "p" { } }`, and JSON's `"path": {"p": {}}` or `"path": [{"p": {}}]` all name stanzas. */
function pathStanzas(
  labels: Key[],
  value: Node,
  head: Key,
  fail: Fail,
): Array<{ path: string; pos: Position; body: Node }> {
  if (labels.length === 1 && labels[0]) return [{ path: labels[0].value, pos: labels[0], body: value }];
  if (labels.length > 1) {
    fail(labels[1] ?? head, `path takes one label, e.g. path "secret/data/app/*" { ... }`);
    return [];
  }
  const objects = value.kind === 'list' ? value.items : [value];
  const out: Array<{ path: string; pos: Position; body: Node }> = [];
  for (const obj of objects) {
    if (obj.kind !== 'object') {
      fail(obj, 'path must be followed by a quoted path and a { } block');
      continue;
    }
    for (const inner of obj.items) {
      if (inner.keys.length !== 1 || !inner.keys[0]) {
        fail(inner, 'path takes one label, e.g. path "secret/data/app/*" { ... }');
        continue;
      }
      out.push({ path: inner.keys[0].value, pos: inner.keys[0], body: inner.value });
    }
  }
  return out;
}

function pathRule(path: string, body: Node, fail: Fail, target: VaultTarget | undefined): VaultPolicyRule | undefined {
  const where = `path "${path}"`;
  if (body.kind !== 'object') {
    fail(body, `${where}: expected a { } block`);
    return undefined;
  }
  const rule: VaultPolicyRule = { path, capabilities: [] };
  const caps: string[] = [];
  let oldStyle: string | undefined;
  const seen = new Set<string>();
  const before = body.items.length;
  let ok = true;
  const bad: Fail = (pos, message, rule) => {
    ok = false;
    fail(pos, `${where}: ${message}`, rule);
  };
  const keys = pathKeys(target);
  for (const item of body.items) {
    const key = item.keys[0];
    if (!key) continue;
    if (item.keys.length > 1 && !(item.value.kind === 'object')) {
      bad(item, `unexpected labels after "${key.value}"`);
      continue;
    }
    if (!keys.has(key.value)) {
      bad(key, `invalid key "${key.value}" (${target ? targetName(target) : 'Vault'} accepts ${[...keys].join(', ')})`);
      continue;
    }
    if (key.value in UNSUPPORTED_KEYS) {
      bad(key, `"${key.value}" ${UNSUPPORTED_KEYS[key.value]}`);
      continue;
    }
    if (seen.has(key.value)) {
      bad(key, `"${key.value}" is set twice`);
      continue;
    }
    seen.add(key.value);
    const value =
      item.keys.length > 1
        ? {
            kind: 'object' as const,
            items: [{ ...item, keys: item.keys.slice(1) }],
            line: item.line,
            column: item.column,
          }
        : item.value;
    switch (key.value) {
      case 'comment':
        break;
      case 'policy':
        if (value.kind !== 'string' || !(value.value in OLD_STYLE_POLICIES))
          bad(
            value,
            `invalid policy ${value.kind === 'string' ? JSON.stringify(value.value) : `(${value.kind})`}: use deny, read, write or sudo, or capabilities`,
          );
        else oldStyle = value.value;
        break;
      case 'capabilities': {
        const list = stringList(value, 'capabilities', bad);
        for (const [i, c] of (list ?? []).entries()) {
          const at = value.kind === 'list' ? (value.items[i] ?? value) : value;
          const problem = target ? capabilityProblem(c, target) : undefined;
          if (!isCapability(c)) bad(at, problem ?? `invalid capability "${c}"`, 'vaultpolicy.capability');
          else if (problem) bad(at, problem, 'vaultpolicy.capability');
          else caps.push(c);
        }
        break;
      }
      case 'required_parameters': {
        const list = stringList(value, 'required_parameters', bad);
        if (list) rule.requiredParameters = list;
        break;
      }
      case 'allowed_parameters':
      case 'denied_parameters': {
        const map = parameterMap(value, key.value, bad);
        if (map) rule[key.value === 'allowed_parameters' ? 'allowedParameters' : 'deniedParameters'] = map;
        break;
      }
      case 'min_wrapping_ttl':
      case 'max_wrapping_ttl': {
        const d = duration(value, key.value, bad);
        if (d !== undefined) rule[key.value === 'min_wrapping_ttl' ? 'minWrappingTTL' : 'maxWrappingTTL'] = d;
        break;
      }
    }
  }
  if (oldStyle) caps.push(...(OLD_STYLE_POLICIES[oldStyle] ?? []));
  if (ok && caps.length === 0)
    bad(body, before === 0 ? 'empty block: set capabilities' : 'no capabilities (set capabilities = [...])');
  if (!ok) return undefined;
  rule.capabilities = caps as VaultPolicyRule['capabilities'];
  return rule;
}

function stringList(node: Node, key: string, bad: Fail): string[] | undefined {
  if (node.kind !== 'list') {
    bad(node, `${key} must be a list of strings, e.g. ["read"]`);
    return undefined;
  }
  const out: string[] = [];
  for (const item of node.items) {
    if (item.kind !== 'string') {
      bad(item, `${key} must hold only strings`);
      return undefined;
    }
    out.push(item.value);
  }
  return out;
}

/** A value as the server's HCL decoder gives it: objects become maps (`{"good" = "one"}` → {good: "one"}), lists lists. */
function plainValue(node: Node): unknown {
  switch (node.kind) {
    case 'list':
      return node.items.map(plainValue);
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const item of node.items) {
        // `a "b" { }` nests: {a: {b: {…}}}.
        const [first, ...more] = item.keys;
        if (!first) continue;
        let value = plainValue(item.value);
        for (const k of [...more].reverse()) value = { [k.value]: value };
        out[first.value] = value;
      }
      return out;
    }
    default:
      return node.value;
  }
}

/**
 * `allowed_parameters` / `denied_parameters`: parameter names to lists of values. Values may be strings,
 * numbers, booleans, lists or objects, as Vault and OpenBao accept them (`"map" = [{"good" = "one"}]`);
 * whether a value can match a request is parameterConstraintProblems' to say.
 */
function parameterMap(node: Node, key: string, bad: Fail): Record<string, (string | number | boolean)[]> | undefined {
  if (node.kind !== 'object') {
    bad(node, `${key} must be a map of parameter names to lists, e.g. { "ttl" = [] }`);
    return undefined;
  }
  const out: Record<string, unknown[]> = {};
  for (const item of node.items) {
    const name = item.keys.map((k) => k.value).join('.');
    const v = item.value;
    if (v.kind !== 'list') {
      bad(v, `${key}["${name}"] must be a list of values ([] for any value)`);
      continue;
    }
    out[name] = v.items.map(plainValue);
  }
  // The generated rule type says scalars; object and list values are carried as Vault carries them.
  return out as Record<string, (string | number | boolean)[]>;
}

/** Vault reads wrapping TTLs with parseutil.ParseDurationSecond: a number (seconds) or a duration string, "d" for days included. */
function duration(node: Node, key: string, bad: Fail): string | undefined {
  if (node.kind === 'number' && Number.isInteger(node.value) && node.value >= 0) return `${node.value}s`;
  if (node.kind === 'string') {
    if (/^[0-9]+$/.test(node.value)) return `${node.value}s`;
    const days = /^([0-9]+)d$/.exec(node.value);
    if (days) return `${Number(days[1]) * 24}h`;
    if (DURATION_PATTERN.test(node.value)) return node.value;
  }
  bad(node, `${key} must be a duration such as "30s", "5m" or "1h"`);
  return undefined;
}
