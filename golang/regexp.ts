// Go's regexp package (RE2) for every regexp a tenant writes: ESO compiles namespaceRegexes,
// find.name.regexp, rewrite.regexp, PushSecret's match.regexp and Sprig's regex* arguments with Go's
// regexp, so admission refuses what Go could not compile and the controller matches what Go would.
// The engine is re2js, a port of Go's regexp: Go's syntax and error messages, and matching in time
// linear in the input (no backtracking), so a nested quantifier such as `(a+)+$` cannot stall the event
// loop. This module is the glue: a bounded compile (program size) and cache, and Go's own loops over
// matches (FindAll, ReplaceAll with Regexp.Expand, Split), run on UTF-8 bytes as Go runs them.
// Strings here are either text (JavaScript strings: keys, names) or Go strings (the template engine's:
// one char per byte, values.ts); the `Go…` functions take Go strings.
import { RE2JS } from 're2js';
import { decodeRune, goString } from './values.ts';

/** The longest pattern compiled, in characters: compiling 64 KiB costs about a second (README). */
export const MAX_PATTERN_LENGTH = 4096;
/** The largest compiled program accepted, in RE2 instructions (Go's own limit is far larger: README). */
export const MAX_PROGRAM_SIZE = 10_000;
/**
 * The most work one call may do, as program size × input bytes. RE2 is linear, but finding a match
 * with its NFA costs up to about 150 ns per unit here (`(?:a|b|…|j){1000}` or `(.*a){20}` over 100 KB),
 * so a call ends within about 1.5 s at worst; most patterns run at 0.1–3 ns per unit. Beyond it the
 * call fails (README, "Regexps").
 */
export const MAX_MATCH_WORK = 10_000_000;
const CACHE_SIZE = 64;
const UNANCHORED = 0;

type Re2 = ReturnType<RE2JS['re2']>;

export class GoRegexpError extends Error {
  override readonly name = 'GoRegexpError';
}

/** A compiled Go regexp. */
export class GoRegexp {
  /** Index → name ('' for an unnamed group), index 0 the whole match, as Go's SubexpNames. */
  readonly subexpNames: readonly string[];

  constructor(
    readonly source: string,
    private readonly re2: Re2,
    readonly programSize: number,
  ) {
    const names: string[] = new Array<string>(re2.numberOfCapturingGroups() + 1).fill('');
    for (const [name, i] of Object.entries(re2.namedGroups)) names[i] = name;
    this.subexpNames = names;
  }

  /** Go's MatchString on text (a JavaScript string, as UTF-8). */
  test(text: string): boolean {
    return this.matchGo(goString(text));
  }

  /** Go's MatchString on a Go string. */
  matchGo(s: string): boolean {
    return this.re2.matchUTF8(this.bytes(s));
  }

  /** Go's FindAllStringIndex (n < 0: all): [start, end] byte offsets. */
  findAllIndexGo(s: string, n: number): Array<[number, number]> {
    if (n === 0) return [];
    const found = this.re2.findAllUTF8Index(this.bytes(s), n) as Array<[number, number]> | null;
    return found ?? [];
  }

  /** Go's regexp.replaceAll loop: `repl` gives the replacement for one match (submatch offsets). */
  replaceAllGo(s: string, withGroups: boolean, repl: (match: readonly number[]) => string): string {
    const b = this.bytes(s);
    const groups = withGroups ? this.subexpNames.length : 1;
    let out = '';
    let lastMatchEnd = 0;
    let searchPos = 0;
    while (searchPos <= b.length) {
      const [found, a] = this.re2.matchWithGroup(b, searchPos, b.length, UNANCHORED, groups) as [
        boolean,
        number[] | null,
      ];
      if (!found || !a) break;
      const [start, end] = [a[0]!, a[1]!];
      out += s.slice(lastMatchEnd, start);
      if (end > lastMatchEnd || start === 0) out += repl(a);
      lastMatchEnd = end;
      // Advance past this match; always advance at least one character (Go's comment and rule).
      const width = searchPos < s.length ? decodeRune(s, searchPos)[1] : 0;
      if (searchPos + width > end) searchPos += width;
      else if (searchPos + 1 > end) searchPos++;
      else searchPos = end;
    }
    return out + s.slice(lastMatchEnd);
  }

  private bytes(s: string): Buffer {
    if (this.programSize * s.length > MAX_MATCH_WORK) {
      // Neither size is named: the input may be a secret (its length too), and so may a template's pattern.
      throw new GoRegexpError(
        `regexp: the input is too large for this expression: vaultgate bounds one call's work (the expression's program size × the input's bytes) at ${MAX_MATCH_WORK}`,
      );
    }
    return Buffer.from(s, 'latin1');
  }
}

export type GoRegexpResult = { ok: true; regexp: GoRegexp } | { ok: false; error: string };

const cache = new Map<string, GoRegexpResult>();

/** Compile `pattern` (text) as Go's regexp.Compile does, or say why Go (or vaultgate) refuses it, in Go's words. */
export function parseGoRegexp(pattern: string): GoRegexpResult {
  // Refused before the cache too, which holds only patterns of a bounded length.
  if (pattern.length > MAX_PATTERN_LENGTH)
    return {
      ok: false,
      error: `error parsing regexp: expression too long for vaultgate (at most ${MAX_PATTERN_LENGTH} characters)`,
    };
  const hit = cache.get(pattern);
  if (hit) {
    cache.delete(pattern); // least recently used goes first
    cache.set(pattern, hit);
    return hit;
  }
  const result = compile(pattern);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(pattern, result);
  return result;
}

function compile(pattern: string): GoRegexpResult {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    const message = e instanceof Error ? e.message : '';
    // re2js's syntax errors are Go's (`error parsing regexp: <code>: \`<expr>\``), except that a few leave
    // out the expression Go names (the whole pattern); anything else is not ours to quote.
    if (!message.startsWith('error parsing regexp: '))
      return { ok: false, error: 'error parsing regexp: the expression could not be compiled' };
    return { ok: false, error: message.endsWith('`') ? message : `${message}: \`${pattern}\`` };
  }
  const size = re.programSize();
  if (size > MAX_PROGRAM_SIZE)
    return {
      ok: false,
      error: `error parsing regexp: expression too large for vaultgate (its program exceeds ${MAX_PROGRAM_SIZE} instructions)`,
    };
  return { ok: true, regexp: new GoRegexp(pattern, re.re2(), size) };
}

/** The compiled regexp, or a GoRegexpError with Go's message (naming the pattern). */
export function compileGoRegexp(source: string): GoRegexp {
  const r = parseGoRegexp(source);
  if (!r.ok)
    throw new GoRegexpError(
      `regexp ${source.length <= MAX_PATTERN_LENGTH ? JSON.stringify(source) : '(too long to quote)'}: ${r.error}`,
    );
  return r.regexp;
}

/** Go's Regexp.Expand name parsing (regexp.go `extract`): a name of letters, digits and `_`, maybe braced. */
function extract(t: string, from: number): { name: string; num: number; next: number } | undefined {
  let i = from;
  const brace = t[i] === '{';
  if (brace) i++;
  const start = i;
  while (i < t.length) {
    const [r, w] = decodeRune(t, i);
    const c = String.fromCodePoint(r);
    if (!/^[\p{L}\p{Nd}_]$/u.test(c)) break;
    i += w;
  }
  if (i === start) return undefined;
  const name = t.slice(start, i);
  if (brace) {
    if (t[i] !== '}') return undefined;
    i++;
  }
  let num = 0;
  for (const ch of name) {
    if (ch < '0' || ch > '9' || num >= 1e8) {
      num = -1;
      break;
    }
    num = num * 10 + Number(ch);
  }
  if (name[0] === '0' && name.length > 1) num = -1; // no leading zeros
  return { name, num, next: i };
}

/** Go's Regexp.Expand on Go strings: `$1`/`${1}`, `$name`/`${name}`, `$$` a dollar; malformed: `$` kept. */
export function expandGo(re: GoRegexp, template: string, src: string, match: readonly number[]): string {
  let out = '';
  let i = 0;
  for (;;) {
    const d = template.indexOf('$', i);
    if (d < 0) break;
    out += template.slice(i, d);
    i = d + 1;
    if (template[i] === '$') {
      out += '$';
      i++;
      continue;
    }
    const ref = extract(template, i);
    if (!ref) {
      out += '$';
      continue;
    }
    i = ref.next;
    const group = ref.num >= 0 ? ref.num : re.subexpNames.indexOf(ref.name, 1);
    if (group >= 0 && 2 * group + 1 < match.length && match[2 * group]! >= 0)
      out += src.slice(match[2 * group], match[2 * group + 1]);
  }
  return out + template.slice(i);
}

/** Go's ReplaceAllString on Go strings. */
export function replaceAllStringGo(re: GoRegexp, src: string, template: string): string {
  return re.replaceAllGo(src, template.includes('$'), (m) => expandGo(re, template, src, m));
}

/** Go's ReplaceAllLiteralString on Go strings. */
export function replaceAllLiteralStringGo(re: GoRegexp, src: string, repl: string): string {
  return re.replaceAllGo(src, false, () => repl);
}

/** Go's Regexp.Split on a Go string (n == 0: nil, returned as null). */
export function splitGo(re: GoRegexp, s: string, n: number): string[] | null {
  if (n === 0) return null;
  if (re.source.length > 0 && s.length === 0) return [''];
  const out: string[] = [];
  let beg = 0;
  let end = 0;
  for (const [start, stop] of re.findAllIndexGo(s, n)) {
    if (n > 0 && out.length === n - 1) break;
    end = start;
    if (stop !== 0) out.push(s.slice(beg, end));
    beg = stop;
  }
  if (end !== s.length) out.push(s.slice(beg));
  return out;
}

/** Go's regexp.QuoteMeta: a backslash before each of `\\.+*?()|[]{}^$` (bytes or text alike). */
export function quoteMeta(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, (c) => `\\${c}`);
}

/** Go's ReplaceAllString on text (keys, names): `$1`, `${name}` as Go's Regexp.Expand reads them. */
export function replaceAllGo(re: GoRegexp, src: string, template: string): string {
  return Buffer.from(replaceAllStringGo(re, goString(src), goString(template)), 'latin1').toString('utf8');
}
