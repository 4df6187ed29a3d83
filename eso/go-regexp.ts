// Go RE2 regular expressions, one translator for admission and the controller: ESO compiles
// namespaceRegexes, find.name.regexp, rewrite.regexp and Sprig's regex* arguments with Go's regexp
// package, so admission refuses what ESO could not compile and the controller matches what ESO would.
// Differences handled here:
//  - RE2 has no lookaround or backreferences: JS accepts them, so they are refused with Go's error.
//  - Go's inline flags `(?i)`, named groups `(?P<n>…)`, `\A`, `\z`, `\x{…}`, `\a` and POSIX classes
//    `[[:alpha:]]` have no (or a different) JS spelling: translated. Node 20 has no inline modifiers,
//    so flags are accepted only as a leading `(?flags)` group and become RegExp flags.
//  - `\Q…\E` is quoted as a literal; Unicode classes (`\pL`), `\C` and the ungreedy flag `U` are refused as unsupported
//    rather than matched differently.
//  - ReplaceAllString skips an empty match that abuts the previous match (JS's replace does not).
// Known remaining difference: JS `.` also stops at \r, U+2028 and U+2029 (Go's only at \n).

export type GoRegexpResult = { ok: true; regexp: RegExp } | { ok: false; error: string };

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z', alpha: 'A-Za-z', ascii: '\\x00-\\x7F', blank: '\\t ', cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9', graph: '!-~', lower: 'a-z', print: ' -~', punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ', upper: 'A-Z', word: '0-9A-Za-z_', xdigit: '0-9A-Fa-f',
};
/** Escapes Go accepts that mean the same in a non-unicode JS RegExp. */
const SAME_ESCAPES = new Set(['d', 'D', 's', 'S', 'w', 'W', 'b', 'B', 'f', 't', 'n', 'r', 'v', '0']);

function fail(detail: string): GoRegexpResult {
  return { ok: false, error: `error parsing regexp: ${detail}` };
}

/** Translate a Go regexp, or say why Go (or vaultgate) refuses it, in Go's wording. */
export function parseGoRegexp(pattern: string): GoRegexpResult {
  let out = '';
  let flags = '';
  let i = 0;
  let inClass = false;
  let classStart = -1;
  while (i < pattern.length) {
    const c = pattern[i] ?? '';
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === undefined) return fail('trailing backslash at end of expression: ``');
      if (/[1-9]/.test(e)) return fail(`invalid escape sequence: \`\\${e}\` (RE2 has no backreferences)`);
      if (e === 'A' || e === 'z') {
        if (inClass) return fail(`invalid escape sequence: \`\\${e}\``);
        out += e === 'A' ? '(?<![\\s\\S])' : '(?![\\s\\S])';
      } else if (e === 'a') {
        out += '\\x07';
      } else if (e === 'x') {
        const braced = /^\\x\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(i));
        const plain = /^\\x[0-9A-Fa-f]{2}/.exec(pattern.slice(i));
        if (braced?.[1] !== undefined) {
          const code = parseInt(braced[1], 16);
          if (code > 0xffff) return fail('\\x{…} above U+FFFF is not supported by vaultgate');
          out += `\\u${code.toString(16).padStart(4, '0')}`;
          i += braced[0].length;
          continue;
        }
        if (!plain) return fail(`invalid escape sequence: \`${pattern.slice(i, i + 4)}\``);
        out += plain[0];
        i += plain[0].length;
        continue;
      } else if (e === 'p' || e === 'P') {
        return fail(`Unicode class \`\\${e}\` is not supported by vaultgate`);
      } else if (e === 'Q' && !inClass) {
        // \Q…\E quotes a literal run (to \E or the end), as RE2 does.
        const end = pattern.indexOf('\\E', i + 2);
        const lit = pattern.slice(i + 2, end < 0 ? pattern.length : end);
        out += lit.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
        i = end < 0 ? pattern.length : end + 2;
        continue;
      } else if (e === 'Q' || e === 'C') {
        return fail(`\`\\${e}\` is not supported by vaultgate`);
      } else if (/[A-Za-z]/.test(e) && !SAME_ESCAPES.has(e)) {
        return fail(`invalid escape sequence: \`\\${e}\``);
      } else {
        out += `\\${e}`;
      }
      i += 2;
      continue;
    }
    if (inClass) {
      if (c === '[' && pattern[i + 1] === ':') {
        const m = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(i));
        if (m) {
          const cls = POSIX[m[2] ?? ''];
          if (!cls) return fail(`invalid character class range: \`${m[0]}\``);
          if (m[1]) return fail(`negated POSIX class \`${m[0]}\` is not supported by vaultgate`);
          out += cls;
          i += m[0].length;
          continue;
        }
      }
      if (c === ']' && i > classStart) {
        inClass = false;
        out += ']';
      } else if (c === ']' || c === '[') {
        out += `\\${c}`;
      } else {
        out += c;
      }
      i++;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += '[';
      i++;
      if (pattern[i] === '^') { out += '^'; i++; }
      // Go reads a `]` right after `[` or `[^` as a literal; JS would close an empty class.
      classStart = pattern[i] === ']' ? i + 1 : i;
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i);
      const named = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
      if (named) { out += `(?<${named[1] ?? ''}>`; i += named[0].length; continue; }
      const look = /^\(\?(<=|<!|=|!)/.exec(rest);
      if (look) return fail(`invalid or unsupported Perl syntax: \`${look[0]}\``);
      if (rest.startsWith('(?:')) { out += '(?:'; i += 3; continue; }
      const flagGroup = /^\(\?([a-zA-Z-]*)([):])/.exec(rest);
      if (flagGroup) {
        const given = flagGroup[1] ?? '';
        if (!/^[imsU]+$/.test(given)) return fail(`invalid or unsupported Perl syntax: \`${flagGroup[0]}\``);
        if (given.includes('U')) return fail('the ungreedy flag `U` is not supported by vaultgate');
        if (i !== 0 || flagGroup[2] !== ')') return fail(`inline flags \`${flagGroup[0]}\` anywhere but at the start are not supported by vaultgate (only a leading (?flags) group is)`);
        flags = [...new Set(given)].join('');
        i += flagGroup[0].length;
        continue;
      }
      return fail(`invalid or unsupported Perl syntax: \`${rest.slice(0, 3)}\``);
    }
    out += c;
    i++;
  }
  if (inClass) return fail(`missing closing ]: \`${pattern.slice(Math.max(0, classStart - 1))}\``);
  try {
    return { ok: true, regexp: new RegExp(out, flags) };
  } catch (err) {
    return fail((err as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '').toLowerCase());
  }
}

export class GoRegexpError extends Error {
  override readonly name = 'GoRegexpError';
}

/** The translated RegExp (unanchored, as Go's MatchString and ReplaceAllString are), or a GoRegexpError. */
export function compileGoRegexp(source: string, extraFlags = ''): RegExp {
  const r = parseGoRegexp(source);
  if (!r.ok) throw new GoRegexpError(`regexp ${JSON.stringify(source)}: ${r.error}`);
  if (!extraFlags) return r.regexp;
  return new RegExp(r.regexp.source, [...new Set(r.regexp.flags + extraFlags)].join(''));
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

/**
 * Go's ReplaceAllString(src, template), following regexp.go's replaceAll loop: an empty match right
 * after the previous match is not replaced, and the search always advances at least one character.
 */
export function replaceAllGo(re: RegExp, src: string, template: string): string {
  const global = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  let out = '';
  let lastMatchEnd = 0;
  let searchPos = 0;
  while (searchPos <= src.length) {
    global.lastIndex = searchPos;
    const m = global.exec(src);
    if (!m) break;
    const start = m.index;
    const end = start + m[0].length;
    out += src.slice(lastMatchEnd, start);
    if (end > lastMatchEnd || start === 0) {
      out += expandGoTemplate(template, { groups: [...m], named: m.groups ?? {} });
    }
    lastMatchEnd = end;
    const width = (src.codePointAt(searchPos) ?? 0) > 0xffff ? 2 : 1;
    searchPos = searchPos + width > end ? searchPos + width : end;
  }
  return out + src.slice(lastMatchEnd);
}
