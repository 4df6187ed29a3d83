// Go RE2 regular expressions (ESO compiles namespaceRegexes, find.name.regexp and rewrite.regexp with
// Go's regexp package) translated to JavaScript RegExp, so admission refuses what ESO could not compile
// and the controller matches what ESO would match. Differences handled here:
//  - RE2 has no lookaround or backreferences: JS accepts them, so they are refused with Go's error.
//  - Go's inline flags `(?i)`, named groups `(?P<n>…)`, `\A`, `\z`, `\x{…}`, `\a` and POSIX classes
//    `[[:alpha:]]` have no (or a different) JS spelling: translated. Node 20 has no inline modifiers,
//    so flags are accepted only as a leading `(?flags)` group and become RegExp flags.
//  - Unicode classes (`\pL`), `\Q…\E`, `\C` and the ungreedy flag `U` are refused as unsupported
//    rather than matched differently.
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

export function compileGoRegexp(pattern: string): GoRegexpResult {
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
