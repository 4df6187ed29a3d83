// Go (RE2) regular expressions as ESO's rewrite.regexp, find.name.regexp and Sprig's regex* functions
// read them, translated to JavaScript's dialect for the constructs the two spell differently, plus Go's
// Regexp.Expand template syntax ($1, ${1}, $name, ${name}, $$) for replacement targets.
// RE2 has no backreferences or lookaround; JS accepts more, which only matters for patterns Go would
// have refused (admission compiles them with JS too, so both sides agree on what is accepted).

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z', alpha: 'A-Za-z', ascii: '\\x00-\\x7F', blank: '\\t ', cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9', graph: '!-~', lower: 'a-z', print: ' -~', punct: '!-\\/:-@\\[-`{-~', space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z', word: '0-9A-Za-z_', xdigit: '0-9A-Fa-f',
};

export class GoRegexpError extends Error {
  override readonly name = 'GoRegexpError';
}

/** Translate a Go regexp to a JS RegExp (unanchored, as Go's MatchString and ReplaceAllString are). */
export function compileGoRegexp(source: string, extraFlags = ''): RegExp {
  let flags = extraFlags;
  let src = source;
  // Leading flag group `(?i)`, `(?s)`, `(?m)`, `(?is)`: JS takes these as RegExp flags.
  const lead = /^\(\?([imsU]+)\)/.exec(src);
  if (lead) {
    const f = lead[1]!;
    if (f.includes('U')) throw new GoRegexpError(`regexp "${source}": the (?U) flag is not supported`);
    for (const c of f) if (!flags.includes(c)) flags += c;
    src = src.slice(lead[0].length);
  }
  if (/\(\?[imsU-]+[:)]/.test(src)) throw new GoRegexpError(`regexp "${source}": inline flags are only supported at the start of the pattern`);
  src = src
    .replace(/\\Q([\s\S]*?)(\\E|$)/g, (_m, lit: string) => lit.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$(?![\\s\\S])')
    .replace(/\[:(\^?)([a-z]+):\]/g, (m, neg: string, name: string) => {
      const cls = POSIX_CLASSES[name];
      if (!cls) throw new GoRegexpError(`regexp "${source}": invalid character class range ${m}`);
      if (neg) throw new GoRegexpError(`regexp "${source}": negated POSIX classes are not supported`);
      return cls;
    })
    .replace(/\\p([A-Z])/g, '\\p{$1}')
    .replace(/\\P([A-Z])/g, '\\P{$1}');
  try {
    return new RegExp(src, `${flags}u`);
  } catch {
    try {
      return new RegExp(src, flags);
    } catch (e) {
      throw new GoRegexpError(`regexp "${source}" does not compile: ${(e as Error).message.replace(/^Invalid regular expression: /, '')}`);
    }
  }
}

export interface GoMatch {
  /** groups[0] is the whole match; undefined for groups that did not participate. */
  groups: (string | undefined)[];
  named: Record<string, string | undefined>;
}

/** Go's Regexp.Expand: `$1`/`${1}` by number, `$name`/`${name}` by name (longest name), `$$` a dollar. */
export function expandGoTemplate(template: string, match: GoMatch): string {
  let out = '';
  let rest = template;
  for (;;) {
    const i = rest.indexOf('$');
    if (i < 0) break;
    out += rest.slice(0, i);
    rest = rest.slice(i + 1);
    if (rest.startsWith('$')) {
      out += '$';
      rest = rest.slice(1);
      continue;
    }
    let name: string | undefined;
    const braced = /^\{([A-Za-z0-9_]+)\}/.exec(rest);
    const bare = /^[A-Za-z0-9_]+/.exec(rest);
    if (braced) {
      name = braced[1]!;
      rest = rest.slice(braced[0].length);
    } else if (bare) {
      name = bare[0];
      rest = rest.slice(bare[0].length);
    }
    if (name === undefined) {
      out += '$'; // malformed: the dollar is kept as text
      continue;
    }
    if (/^[0-9]+$/.test(name)) out += match.groups[Number(name)] ?? '';
    else out += match.named[name] ?? '';
  }
  return out + rest;
}

/** Go's ReplaceAllString(src, template). */
export function replaceAllGo(re: RegExp, src: string, template: string): string {
  const global = re.flags.includes('g') ? re : new RegExp(re.source, `${re.flags}g`);
  return src.replace(global, (...args: unknown[]) => {
    const last = args[args.length - 1];
    const hasNamed = typeof last === 'object' && last !== null;
    const groups = args.slice(0, hasNamed ? -3 : -2) as (string | undefined)[];
    return expandGoTemplate(template, { groups, named: hasNamed ? (last as Record<string, string | undefined>) : {} });
  });
}
