// Vault ACL path patterns: syntax as Vault enforces it (vault/policy.go parsePaths and the docs'
// "glob only as the last character"), `{{namespace}}` templates, and set relations between patterns
// (containment for allowed paths, overlap for forbidden ones) decided exactly on small automata.
import { vaultPathProblems } from '../vault/paths.ts';

/** A template placeholder vaultgate expands; spaces inside the braces are tolerated as in Vault's templating. */
const NAMESPACE_TEMPLATE = /\{\{\s*namespace\s*\}\}/g;

export interface PathProblem {
  message: string;
  /** Stable sub-rule, e.g. `glob-not-last`; the caller prefixes its own rule id. */
  code: string;
}

/** Non-empty segments of letters, digits, `_`, `.`, `-`, optionally ending in `*` or `/*`. */
const PLAIN_PATH = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*(\/\*|\*)?$/;
/** A whole `.` or `..` segment (a plain path may still have one). */
const DOT_SEGMENT = /(^|\/)\.\.?(\/|\*?$)/;

/**
 * What is wrong with a policy path pattern, as Vault reads it. Vault itself silently strips a leading
 * slash and treats a `*` anywhere but the end as a literal star; both are almost always mistakes, so
 * both are refused with the fix in the message.
 */
export function pathProblems(path: string, opts: { allowNamespaceTemplate?: boolean } = {}): PathProblem[] {
  // Nearly every path in practice is plain segments with an optional trailing glob; none of the checks
  // can fire on those (test/policy/paths.fast-path.test.ts proves the equivalence), so skip them.
  return PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path) ? [] : pathProblemsFull(path, opts);
}

/** The complete syntax check, without pathProblems' fast path (exported for the equivalence test). */
export function pathProblemsFull(path: string, opts: { allowNamespaceTemplate?: boolean } = {}): PathProblem[] {
  const out: PathProblem[] = [];
  if (path.length === 0) return [{ message: 'must not be empty', code: 'empty' }];
  let p = path;
  if (opts.allowNamespaceTemplate) p = p.replace(NAMESPACE_TEMPLATE, 'ns');
  if (/\{\{|\}\}/.test(p)) {
    out.push({ message: `"${path}": templates other than {{namespace}} are not supported`, code: 'template' });
  }
  if (p.startsWith('/'))
    out.push({
      message: `"${path}" must not start with "/" (Vault paths are relative to /v1/; write "${path.replace(/^\/+/, '')}")`,
      code: 'leading-slash',
    });
  if (/[\s\x00-\x1f\x7f]/.test(p))
    out.push({ message: `"${path}" must not contain whitespace or control characters`, code: 'whitespace' });
  if (p.includes('+*'))
    out.push({
      message: `"${path}": "+*" is forbidden by Vault (use "+/*" for "one segment, then anything")`,
      code: 'plus-star',
    });
  const star = p.indexOf('*');
  if (star >= 0 && star !== p.length - 1)
    out.push({ message: `"${path}": the glob "*" is only allowed as the last character`, code: 'glob-not-last' });
  const segments = p.replace(/\*$/, '').split('/');
  segments.forEach((seg, i) => {
    if (seg.includes('+') && seg !== '+')
      out.push({
        message: `"${path}": "+" must be a whole path segment (segment ${i + 1} is "${seg}"), e.g. "secret/data/+/config"`,
        code: 'plus-partial',
      });
  });
  if (/\/\//.test(p.replace(/^\/+/, '')))
    out.push({ message: `"${path}" contains an empty path segment ("//")`, code: 'empty-segment' });
  // Dot segments and URL characters (vault/paths.ts, the rule every tenant path shares): Vault
  // would grant the pattern as written while the path it names is another one.
  for (const problem of vaultPathProblems(p, { allowTrailingGlob: true })) {
    if (problem.code !== 'empty-segment')
      out.push({ message: problem.message.replace(JSON.stringify(p), `"${path}"`), code: problem.code });
  }
  return out;
}

export function hasNamespaceTemplate(text: string): boolean {
  return text.search(NAMESPACE_TEMPLATE) >= 0; // search ignores the g flag's lastIndex
}

/** Replace every `{{namespace}}` with the namespace. */
export function expandNamespace(template: string, namespace: string): string {
  return template.replace(NAMESPACE_TEMPLATE, namespace);
}

// ---- pattern automata -------------------------------------------------------------------------
// A pattern compiles to tokens: a literal character, PLUS (one whole segment: [^/]+) or STAR (a
// trailing glob: anything, slashes included). Vault matches a `+` segment against one request segment
// and a trailing `*` as a prefix, so these tokens describe exactly the request paths a rule covers.

type Token = { t: 'char'; c: string } | { t: 'plus' } | { t: 'star' };

function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  const segments = pattern.split('/');
  segments.forEach((seg, i) => {
    if (i > 0) tokens.push({ t: 'char', c: '/' });
    const last = i === segments.length - 1;
    if (seg === '+' || (last && seg === '+*')) {
      tokens.push({ t: 'plus' });
      if (seg === '+*') tokens.push({ t: 'star' });
      return;
    }
    for (let k = 0; k < seg.length; k++) {
      const c = seg[k] ?? '';
      if (c === '*' && last && k === seg.length - 1) tokens.push({ t: 'star' });
      else tokens.push({ t: 'char', c });
    }
  });
  return tokens;
}

// NFA states: 2k = "before token k", 2k+1 = "inside PLUS token k, at least one character read".
class PatternNfa {
  readonly #tokens: Token[];
  constructor(pattern: string) {
    this.#tokens = tokenize(pattern);
  }

  get accept(): number {
    return 2 * this.#tokens.length;
  }

  closure(states: Iterable<number>): Set<number> {
    const out = new Set<number>();
    const stack = [...states];
    while (stack.length) {
      const s = stack.pop() as number;
      if (out.has(s)) continue;
      out.add(s);
      const k = s >> 1;
      const tok = this.#tokens[k];
      if (s % 2 === 1)
        stack.push(2 * (k + 1)); // a PLUS that has read a character may end
      else if (tok?.t === 'star') stack.push(2 * (k + 1)); // a STAR may match nothing
    }
    return out;
  }

  step(states: Set<number>, ch: string): Set<number> {
    const next: number[] = [];
    for (const s of states) {
      const k = s >> 1;
      const tok = this.#tokens[k];
      if (!tok) continue;
      if (tok.t === 'char' && s % 2 === 0 && tok.c === ch) next.push(2 * (k + 1));
      else if (tok.t === 'plus' && ch !== '/') next.push(2 * k + 1);
      else if (tok.t === 'star' && s % 2 === 0) next.push(s);
    }
    return this.closure(next);
  }

  start(): Set<number> {
    return this.closure([0]);
  }
  accepts(states: Set<number>): boolean {
    return states.has(this.accept);
  }
  literals(): string[] {
    return this.#tokens.flatMap((t) => (t.t === 'char' ? [t.c] : []));
  }
}

/**
 * Explore pairs of subset states of both patterns over an alphabet of every literal character, '/',
 * and one character neither pattern names (all such characters behave alike): exact and small.
 */
function explore(a: string, b: string, found: (aAccepts: boolean, bAccepts: boolean) => boolean): boolean {
  const na = new PatternNfa(a);
  const nb = new PatternNfa(b);
  const alphabet = [...new Set(['/', '\u0001', ...na.literals(), ...nb.literals()])];
  const key = (x: Set<number>, y: Set<number>) => `${[...x].sort().join(',')}|${[...y].sort().join(',')}`;
  const queue: Array<[Set<number>, Set<number>]> = [[na.start(), nb.start()]];
  const seen = new Set([key(queue[0]![0], queue[0]![1])]);
  while (queue.length) {
    const [sa, sb] = queue.shift()!;
    if (sa.size > 0 && found(na.accepts(sa), nb.accepts(sb))) return true;
    if (sa.size === 0) continue;
    for (const ch of alphabet) {
      const ta = na.step(sa, ch);
      if (ta.size === 0) continue;
      const tb = nb.step(sb, ch);
      const k = key(ta, tb);
      if (!seen.has(k)) {
        seen.add(k);
        queue.push([ta, tb]);
      }
    }
  }
  return false;
}

/** A pattern without `+` is a literal path or a literal prefix followed by `*`: compare as strings. */
function simple(pattern: string): { prefix: string; glob: boolean } | undefined {
  if (pattern.includes('+')) return undefined;
  const glob = pattern.endsWith('*');
  const prefix = glob ? pattern.slice(0, -1) : pattern;
  return prefix.includes('*') ? undefined : { prefix, glob };
}

// Guardrails ask the same (rule path, guardrail path) questions on every request: remember answers.
const MEMO_LIMIT = 10_000;
const memo = new Map<string, boolean>();
function remembered(key: string, compute: () => boolean): boolean {
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const value = compute();
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(key, value);
  return value;
}

/** Whether every request path `pattern` can match is also matched by `allowed` (both already expanded). */
export function pathWithin(pattern: string, allowed: string): boolean {
  const p = simple(pattern);
  const a = simple(allowed);
  if (p && a) return a.glob ? p.prefix.startsWith(a.prefix) : !p.glob && p.prefix === a.prefix;
  return remembered(
    `w\0${pattern}\0${allowed}`,
    () => !explore(pattern, allowed, (inPattern, inAllowed) => inPattern && !inAllowed),
  );
}

/** Whether some request path is matched by both patterns. */
export function pathsOverlap(a: string, b: string): boolean {
  const x = simple(a);
  const y = simple(b);
  if (x && y) {
    if (x.glob && y.glob) return x.prefix.startsWith(y.prefix) || y.prefix.startsWith(x.prefix);
    if (x.glob) return y.prefix.startsWith(x.prefix);
    if (y.glob) return x.prefix.startsWith(y.prefix);
    return x.prefix === y.prefix;
  }
  return remembered(`o\0${a}\0${b}`, () => explore(a, b, (inA, inB) => inA && inB));
}

/** Whether a pattern has no literal character at all (`*`, `+`, `+/*`): it constrains nothing by itself. */
export function isPureWildcard(pattern: string): boolean {
  return pattern.replace(/[+*/]/g, '') === '';
}

/**
 * Whether a forbidden pattern forbids a policy path: the path can reach a request path the forbidden
 * pattern names (`sys/*` forbids `sys/mounts`, `+/*` and `*`). Everything overlaps a pattern made only
 * of wildcards, so such a pattern (`*`) forbids only paths at least as broad as itself.
 */
export function pathForbiddenBy(path: string, forbidden: string): boolean {
  return isPureWildcard(forbidden) ? pathWithin(forbidden, path) : pathsOverlap(path, forbidden);
}
