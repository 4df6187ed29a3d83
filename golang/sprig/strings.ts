// Sprig's snakecase/camelcase/kebabcase (github.com/huandu/xstrings v1.5.0, the version ESO v0.16.2
// builds: ToSnakeCase, ToCamelCase, ToKebabCase) and wrap/wrapWith (Masterminds/goutils v1.1.1 Wrap and
// WrapCustom), ported line by line over Go's byte strings: xstrings decodes runes with
// utf8.DecodeRuneInString (an invalid byte is U+FFFD of width 1, skipped by nextValidRune and copied
// raw into a word), goutils works on bytes. Unicode classes are Go's unicode package (IsUpper = Lu,
// IsLetter = L, IsNumber = N, IsPunct = P, IsSpace) and its simple case mappings.
// Also Sprig's other string functions (strings.go), ported over Go's byte strings.
import { fail } from '../func.ts';
import { goString, decodeRune, mapText, utf8Text, GoMap } from '../values.ts';

const RUNE_ERROR = 0xfffd;
const ch = (r: number): string => String.fromCodePoint(r);

/** unicode.IsSpace. */
export function goIsSpace(r: number): boolean {
  if (r <= 0xff) return r === 0x20 || (r >= 0x09 && r <= 0x0d) || r === 0x85 || r === 0xa0;
  return /\p{White_Space}/u.test(ch(r));
}
const isUpper = (r: number): boolean => /\p{Lu}/u.test(ch(r));
const isLetter = (r: number): boolean => /\p{L}/u.test(ch(r));
const isNumber = (r: number): boolean => /\p{N}/u.test(ch(r));
const isPunct = (r: number): boolean => /\p{P}/u.test(ch(r));

/** Greek letters with ypogegrammeni: their simple upper case is the title-case letter (UnicodeData). */
function greekIotaUpper(r: number): number | undefined {
  if ((r >= 0x1f80 && r <= 0x1f87) || (r >= 0x1f90 && r <= 0x1f97) || (r >= 0x1fa0 && r <= 0x1fa7)) return r + 8;
  if (r === 0x1fb3 || r === 0x1fc3 || r === 0x1ff3) return r + 9;
  return undefined;
}

/** unicode.ToUpper: the simple mapping (one rune), never a full one like ß → SS. */
export function goToUpper(r: number): number {
  const g = greekIotaUpper(r);
  if (g !== undefined) return g;
  const u = [...ch(r).toUpperCase()];
  return u.length === 1 ? u[0]!.codePointAt(0)! : r;
}

/** unicode.ToLower: the simple mapping (İ → i, not i + combining dot). */
export function goToLower(r: number): number {
  if (r === 0x130) return 0x69;
  const l = [...ch(r).toLowerCase()];
  return l.length === 1 ? l[0]!.codePointAt(0)! : r;
}

/** xstrings' isAlphabet: a letter, but not a CJK ideograph. */
function isAlphabet(r: number): boolean {
  if (!isLetter(r)) return false;
  if (r < 0x3400) return true;
  if (r >= 0x4e00 && r <= 0x9fcc) return false;
  if (r >= 0x3400 && r <= 0x4d85) return false;
  if (r >= 0x20000 && r <= 0x2b81d) return false;
  return true;
}

const isConnector = (r: number): boolean => r === 0x2d || r === 0x5f || goIsSpace(r);

/** utf8.EncodeRune as a Go (byte) string; U+FFFD for an invalid rune. */
const runeBytes = (r: number): string => (r < 0x80 ? String.fromCharCode(r) : goString(ch(r)));

// ---- ToCamelCase ----

export function toCamelCase(str: string): string {
  if (str.length === 0) return '';
  let out = '';
  let i = 0;
  let isFirstRuneUpper = false;
  let r0 = 0;
  let r1 = 0;
  let size = 0;
  // leading connectors are kept
  while (i < str.length) {
    [r0, size] = decodeRune(str, i);
    i += size;
    if (!isConnector(r0)) {
      isFirstRuneUpper = isUpper(r0);
      r0 = goToLower(r0);
      break;
    }
    out += runeBytes(r0);
  }
  if (i >= str.length) {
    // xstrings writes the last rune once more here (so "_" becomes "__").
    if (size !== 0) out += runeBytes(r0);
    return out;
  }
  while (i < str.length) {
    r1 = r0;
    [r0, size] = decodeRune(str, i);
    i += size;
    if (isConnector(r0) && isConnector(r1)) {
      out += runeBytes(r1);
      continue;
    }
    if (isConnector(r1)) {
      isFirstRuneUpper = isUpper(r0);
      r0 = goToUpper(r0);
    } else {
      if (isFirstRuneUpper) {
        if (isUpper(r0)) r0 = goToLower(r0);
        else isFirstRuneUpper = false;
      }
      out += runeBytes(r1);
    }
  }
  if (isFirstRuneUpper) r0 = goToLower(r0);
  out += runeBytes(r0);
  return out;
}

// ---- ToSnakeCase / ToKebabCase (camelCaseToLowerCase) ----

const enum W {
  invalid,
  number,
  upper,
  alphabet,
  connector,
  punct,
  other,
}

/** nextValidRune: the first rune that is not RuneError, its width counting the skipped bytes; `prev` if none. */
function nextValidRune(s: string, at: number, prev: number): [number, number] {
  let size = 0;
  let i = at;
  while (i < s.length) {
    const [r, sz] = decodeRune(s, i);
    size += sz;
    if (r !== RUNE_ERROR) return [r, size];
    i += sz;
  }
  return [prev, size];
}

/** nextWord over s[at:]: the word's type and its end (the remaining text starts there). */
function nextWord(s: string, at: number): [W, number] {
  if (at >= s.length) return [W.invalid, at];
  let offset = 0;
  let rem = at;
  let [r, size] = nextValidRune(s, rem, RUNE_ERROR);
  offset += size;
  if (r === RUNE_ERROR) return [W.invalid, at + offset];
  /** xstrings' loop: take runes while `keep` holds for the next one (r and size end on the first refused). */
  const advanceWhile = (keep: (rune: number, runeSize: number) => boolean): void => {
    while (rem < s.length) {
      [r, size] = nextValidRune(s, rem, r);
      if (!keep(r, size)) break;
      offset += size;
      rem += size;
    }
  };
  const lowerLetter = (x: number): boolean => isAlphabet(x) && !isUpper(x);
  const otherRune = (x: number, sz: number): boolean =>
    !(sz === 0 || isConnector(x) || isAlphabet(x) || isNumber(x) || isPunct(x));
  // xstrings' order of word types; every word takes its first rune.
  rem += size;
  if (!isConnector(r) && !isPunct(r) && isUpper(r)) {
    if (rem < s.length) {
      [r, size] = nextValidRune(s, rem, r);
      if (isUpper(r)) {
        let prevSize = size;
        offset += size;
        rem += size;
        advanceWhile((x, sz) => {
          if (!isUpper(x)) return false;
          prevSize = sz;
          return true;
        });
        // "HTTPStatus": "HTTP" and "Status", so the "S" stays in the remaining text.
        if (rem < s.length && isAlphabet(r)) {
          offset -= prevSize;
          rem = at + offset;
        }
      } else if (isAlphabet(r)) {
        offset += size;
        rem += size;
        advanceWhile(lowerLetter);
      }
    }
    return [W.upper, at + offset];
  }
  const [wt, keep]: [W, (x: number, sz: number) => boolean] = isConnector(r)
    ? [W.connector, isConnector]
    : isPunct(r)
      ? [W.punct, isPunct]
      : isAlphabet(r)
        ? [W.alphabet, lowerLetter]
        : isNumber(r)
          ? [W.number, isNumber]
          : [W.other, otherRune];
  advanceWhile(keep);
  return [wt, at + offset];
}

function lowerWord(wt: W, word: string, connector: string): string {
  if (wt !== W.upper && wt !== W.connector) return word;
  let out = '';
  for (let i = 0; i < word.length;) {
    const [r, size] = decodeRune(word, i);
    i += size;
    if (isConnector(r)) out += connector;
    else if (isUpper(r)) out += runeBytes(goToLower(r));
    else out += runeBytes(r);
  }
  return out;
}

function camelCaseToLowerCase(str: string, connector: string): string {
  if (str.length === 0) return '';
  const parts: string[] = [];
  const emit = (wt: W, from: number, to: number): void => {
    parts.push(lowerWord(wt, str.slice(from, to), connector));
  };
  const advance = (from: number): [W, number, number] => [...nextWord(str, from), from] as [W, number, number];
  let [wt, end, start] = advance(0);
  while (end < str.length) {
    if (wt !== W.connector) emit(wt, start, end);
    const prev = wt;
    const lastStart = start;
    const lastEnd = end;
    [wt, end, start] = advance(end);
    if (prev === W.number) {
      while (wt === W.alphabet || wt === W.number) {
        emit(wt, start, end);
        [wt, end, start] = advance(end);
      }
      if (wt !== W.invalid && wt !== W.punct && wt !== W.connector) parts.push(connector);
    } else if (prev === W.connector) {
      emit(prev, lastStart, lastEnd);
    } else if (prev === W.punct) {
      // nothing
    } else {
      if (wt !== W.number) {
        if (wt !== W.connector && wt !== W.punct) parts.push(connector);
        continue;
      }
      if (end >= str.length) continue;
      const numStart = start;
      const numEnd = end;
      [wt, end, start] = advance(end);
      // a number is part of the word before it ("Bld4Floor" → "bld4_floor") ...
      if (wt !== W.alphabet) {
        emit(W.number, numStart, numEnd);
        if (wt !== W.connector && wt !== W.punct) parts.push(connector);
        continue;
      }
      // ... unless lower-case letters follow it ("HTTP2xx" → "http_2xx")
      parts.push(connector);
      emit(W.number, numStart, numEnd);
      while (wt === W.alphabet || wt === W.number) {
        emit(wt, start, end);
        [wt, end, start] = advance(end);
      }
      if (wt !== W.invalid && wt !== W.connector && wt !== W.punct) parts.push(connector);
    }
  }
  emit(wt, start, end);
  return parts.join('');
}

export const toSnakeCase = (s: string): string => camelCaseToLowerCase(s, '_');
export const toKebabCase = (s: string): string => camelCaseToLowerCase(s, '-');

// ---- goutils.WrapCustom ----

const MAX_RESULT = 1 << 20;

/** goutils.WrapCustom(str, wrapLength, newLineStr, wrapLongWords), byte-wise as goutils does it. */
export function wrapCustom(str: string, wrapLength: number, newLineStr: string, wrapLongWords: boolean): string {
  if (str === '') return '';
  const nl = newLineStr === '' ? '\n' : newLineStr;
  const width = wrapLength < 1 ? 1 : wrapLength;
  const len = str.length;
  let offset = 0;
  const out: string[] = [];
  let size = 0;
  const put = (s: string): void => {
    size += s.length;
    if (size > MAX_RESULT) fail(`wrap result exceeds ${MAX_RESULT} bytes (a Secret holds at most 1 MiB)`);
    out.push(s);
  };
  while (len - offset > width) {
    if (str[offset] === ' ') {
      offset++;
      continue;
    }
    const end = width + offset + 1;
    const spaceToWrapAt = str.slice(offset, end).lastIndexOf(' ') + offset;
    if (spaceToWrapAt >= offset) {
      put(str.slice(offset, spaceToWrapAt));
      put(nl);
      offset = spaceToWrapAt + 1;
    } else if (wrapLongWords) {
      put(str.slice(offset, width + offset));
      put(nl);
      offset += width;
    } else {
      const e = width + offset;
      const index = str.indexOf(' ', e);
      if (index === -1) {
        put(str.slice(offset));
        offset = len;
      } else {
        put(str.slice(offset, index));
        put(nl);
        offset = index + 1;
      }
    }
  }
  put(str.slice(offset));
  return out.join('');
}

// ---- strings ----

const goSpace = (c: number): boolean =>
  c === 0x20 ||
  (c >= 0x9 && c <= 0xd) ||
  c === 0x85 ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000;

/** strings.TrimSpace. */
export function trimSpace(s: string): string {
  return mapText(s, (t) => {
    const cps = [...t];
    let a = 0;
    let b = cps.length;
    while (a < b && goSpace(cps[a]!.codePointAt(0)!)) a++;
    while (b > a && goSpace(cps[b - 1]!.codePointAt(0)!)) b--;
    return cps.slice(a, b).join('');
  });
}

/** strings.Trim(s, cutset): runes of cutset removed from both ends. */
export function trimCutset(s: string, cutset: string): string {
  const cut = new Set([...utf8Text(cutset)]);
  return mapText(s, (t) => {
    const cps = [...t];
    let a = 0;
    let b = cps.length;
    while (a < b && cut.has(cps[a]!)) a++;
    while (b > a && cut.has(cps[b - 1]!)) b--;
    return cps.slice(a, b).join('');
  });
}

/** strings.Title: the first letter of each word (after a separator) upper-cased as title case. */
export function goTitle(s: string): string {
  return mapText(s, (t) => {
    let prev = ' ';
    let out = '';
    for (const c of t) {
      const isSep = (ch: string): boolean => {
        const cp = ch.codePointAt(0)!;
        if (cp <= 0x7f) return !/[A-Za-z0-9_]/.test(ch);
        if (/[\p{L}\p{N}]/u.test(ch)) return false;
        return goSpace(cp);
      };
      out += isSep(prev)
        ? c.toUpperCase().length === 1 || [...c.toUpperCase()].length === 1
          ? c.toUpperCase()
          : c
        : c;
      prev = c;
    }
    return out;
  });
}

/** Go's strings.ToUpper/ToLower map rune by rune: a rune whose case mapping is several runes stays as it is. */
function mapCase(s: string, toCase: (c: string) => string): string {
  return mapText(s, (t) =>
    [...t]
      .map((c) => {
        const u = toCase(c);
        return [...u].length === 1 ? u : c;
      })
      .join(''),
  );
}
export function goUpper(s: string): string {
  return mapCase(s, (c) => c.toUpperCase());
}
export function goLower(s: string): string {
  return mapCase(s, (c) => c.toLowerCase());
}

/** goutils' byte-wise loops write each byte back as a rune (so bytes ≥ 0x80 become two bytes). */
const byteAsRune = (b: number): string => (b < 0x80 ? String.fromCharCode(b) : goString(String.fromCharCode(b)));
const byteIsSpace = (b: number): boolean => (b >= 0x9 && b <= 0xd) || b === 0x20 || b === 0x85 || b === 0xa0;

export function deleteWhiteSpace(s: string): string {
  let out = '';
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const b = s.charCodeAt(i);
    if (!byteIsSpace(b)) {
      out += byteAsRune(b);
      count++;
    }
  }
  return count === s.length ? s : out;
}

export function initials(s: string): string {
  let out = '';
  let gap = true;
  for (let i = 0; i < s.length; i++) {
    const b = s.charCodeAt(i);
    if (byteIsSpace(b)) gap = true;
    else if (gap) {
      out += byteAsRune(b);
      gap = false;
    }
  }
  return out;
}

export function uncapitalize(s: string): string {
  return mapText(s, (t) => {
    let next = true;
    let out = '';
    for (const c of t) {
      if (goSpace(c.codePointAt(0)!)) {
        next = true;
        out += c;
      } else if (next) {
        const l = c.toLowerCase();
        out += [...l].length === 1 ? l : c;
        next = false;
      } else out += c;
    }
    return out;
  });
}

export function swapCase(s: string): string {
  return mapText(s, (t) => {
    let out = '';
    for (const c of t) {
      const up = c.toUpperCase();
      const low = c.toLowerCase();
      // goutils: upper/title → lower; lower → upper (title case after a space: the same for all but a few digraphs)
      if (c !== low && c === up) out += [...low].length === 1 ? low : c;
      else if (c !== up && c === low) out += [...up].length === 1 ? up : c;
      else out += c;
    }
    return out;
  });
}

export function abbreviateFull(s: string, offset: number, maxWidth: number): string {
  if (s === '') return '';
  if (maxWidth < 4) return '';
  if (s.length <= maxWidth) return s;
  let off = Math.min(offset, s.length);
  if (s.length - off < maxWidth - 3) off = s.length - (maxWidth - 3);
  if (off <= 4) return `${s.slice(0, maxWidth - 3)}...`;
  if (maxWidth < 7) return '';
  if (off + maxWidth - 3 < s.length) return `...${abbreviateFull(s.slice(off), 0, maxWidth - 3)}`;
  return `...${s.slice(s.length - (maxWidth - 3))}`;
}

/** Go's string slicing s[i:j], which panics out of range. */
function goSlice(s: string, i: number, j: number): string {
  if (i < 0 || j < i || j > s.length) fail('slice bounds out of range');
  return s.slice(i, j);
}

export function substring(start: number, end: number, s: string): string {
  if (start < 0) return goSlice(s, 0, end);
  if (end < 0 || end > s.length) return goSlice(s, start, s.length);
  return goSlice(s, start, end);
}

export function trunc(c: number, s: string): string {
  if (c < 0 && s.length + c > 0) return s.slice(s.length + c);
  if (c >= 0 && s.length > c) return s.slice(0, c);
  return s;
}

export function repeat(count: number, s: string): string {
  if (count < 0) fail('strings: negative Repeat count');
  if (count * s.length > 1 << 20) fail('repeat result exceeds 1 MiB');
  return s.repeat(count);
}

/** strings.Split(s, sep): an empty sep splits into UTF-8 sequences. */
export function goSplit(s: string, sep: string, n = -1): string[] {
  if (n === 0) return [];
  if (sep === '') {
    const out: string[] = [];
    let i = 0;
    while (i < s.length && (n < 0 || out.length < n - 1)) {
      const w = utf8Width(s, i);
      out.push(s.slice(i, i + w));
      i += w;
    }
    if (i < s.length) out.push(s.slice(i));
    return out;
  }
  const parts = s.split(sep);
  if (n > 0 && parts.length > n) return [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
  return parts;
}

export function utf8Width(s: string, i: number): number {
  const r = goRunesAt(s, i);
  return r;
}
function goRunesAt(s: string, i: number): number {
  const b0 = s.charCodeAt(i);
  if (b0 < 0x80) return 1;
  const t = utf8Text(s.slice(i, i + 4));
  const first = t.codePointAt(0)!;
  if (first === 0xfffd && s.slice(i, i + 3) !== '\xef\xbf\xbd') return 1;
  return Buffer.byteLength(String.fromCodePoint(first), 'utf8');
}

export const partsMap = (parts: string[]): GoMap =>
  new GoMap(
    parts.map((p, i) => [`_${i}`, p] as const),
    'string',
  );
