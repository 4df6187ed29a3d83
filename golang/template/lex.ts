// Go's text/template lexer (text/template/parse/lex.go), state for state: `{{`/`}}` delimiters, `{{-`
// and `-}}` trimming, comments, quoted/raw/char strings, numbers (hex, octal, binary, `_`, exponents,
// imaginary), fields, variables, keywords. The input is a Go (byte) string (golang/values.ts), so
// positions are byte offsets as in Go's error messages. `break`/`continue` are keywords here because
// ESO's function map defines neither.

export type ItemType =
  | 'error'
  | 'bool'
  | 'char'
  | 'charConstant'
  | 'comment'
  | 'complex'
  | 'assign'
  | 'declare'
  | 'eof'
  | 'field'
  | 'identifier'
  | 'leftDelim'
  | 'leftParen'
  | 'number'
  | 'pipe'
  | 'rawString'
  | 'rightDelim'
  | 'rightParen'
  | 'space'
  | 'string'
  | 'text'
  | 'variable'
  // keywords
  | 'block'
  | 'break'
  | 'continue'
  | 'dot'
  | 'define'
  | 'else'
  | 'end'
  | 'if'
  | 'nil'
  | 'range'
  | 'template'
  | 'with';

export interface Item {
  typ: ItemType;
  pos: number;
  val: string;
  line: number;
}

export const KEYWORDS: ReadonlySet<string> = new Set([
  'block',
  'break',
  'continue',
  'define',
  'else',
  'end',
  'if',
  'range',
  'nil',
  'template',
  'with',
]);
const KEYWORD_ITEMS = new Set<ItemType>([
  'block',
  'break',
  'continue',
  'dot',
  'define',
  'else',
  'end',
  'if',
  'nil',
  'range',
  'template',
  'with',
]);

export function isKeywordItem(t: ItemType): boolean {
  return KEYWORD_ITEMS.has(t);
}

const LEFT = '{{';
const RIGHT = '}}';
const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
/** unicode.IsLetter/IsDigit for ASCII; any non-ASCII byte counts as part of a letter (UTF-8 sequences). */
const isAlphaNumeric = (c: string | undefined): boolean =>
  c !== undefined && (c === '_' || /[A-Za-z0-9]/.test(c) || c.charCodeAt(0) >= 0x80);
const hasLeftTrimMarker = (s: string, i: number): boolean => s[i] === '-' && isSpace(s[i + 1]);
const hasRightTrimMarker = (s: string, i: number): boolean => isSpace(s[i]) && s[i + 1] === '-';

/** Lex a whole template into items, ending with `eof` or one `error` item. */
export function lexTemplate(input: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  let start = 0;
  let line = 1;
  let startLine = 1;
  let parenDepth = 0;
  const countLines = (a: number, b: number): number => {
    let n = 0;
    for (let i = a; i < b; i++) if (input.charCodeAt(i) === 10) n++;
    return n;
  };
  const emit = (typ: ItemType): void => {
    items.push({ typ, pos: start, val: input.slice(start, pos), line: startLine });
    line += countLines(start, pos);
    start = pos;
    startLine = line;
  };
  const ignore = (): void => {
    line += countLines(start, pos);
    start = pos;
    startLine = line;
  };
  const fail = (msg: string): Item[] => {
    items.push({ typ: 'error', pos: start, val: msg, line: startLine });
    return items;
  };
  const atRightDelim = (): { delim: boolean; trim: boolean } => {
    if (hasRightTrimMarker(input, pos) && input.startsWith(RIGHT, pos + 2)) return { delim: true, trim: true };
    if (input.startsWith(RIGHT, pos)) return { delim: true, trim: false };
    return { delim: false, trim: false };
  };
  /** Past the closing `quote` (backslash escapes skipped, as Go's lexQuote/lexChar); false at a newline or the end. */
  const scanQuoted = (quote: string): boolean => {
    for (;;) {
      const d = input[pos++];
      if (d === '\\') {
        const e = input[pos++];
        if (e !== undefined && e !== '\n') continue;
        return false;
      }
      if (d === undefined || d === '\n') return false;
      if (d === quote) return true;
    }
  };
  const atTerminator = (): boolean => {
    const c = input[pos];
    if (c === undefined || isSpace(c)) return true;
    if ('.,|:)('.includes(c)) return true;
    return input.startsWith(RIGHT, pos);
  };
  /**
   * Go's lexFieldOrVariable, after the `$` or `.`: alone, it is `alone`; else an alphanumeric name up to
   * a terminator, `named`. The problem, when the name runs into another character.
   */
  const fieldOrVariable = (alone: ItemType, named: ItemType): string | undefined => {
    if (atTerminator()) {
      emit(alone);
      return undefined;
    }
    while (isAlphaNumeric(input[pos])) pos++;
    if (!atTerminator()) return `bad character ${goRuneName(input, pos)}`;
    emit(named);
    return undefined;
  };
  const leftTrimLength = (from: number): number => {
    let i = from;
    while (isSpace(input[i])) i++;
    return i - from;
  };
  const scanNumber = (): boolean => {
    const accept = (valid: string): boolean => {
      if (pos < input.length && valid.includes(input[pos]!)) {
        pos++;
        return true;
      }
      return false;
    };
    const acceptRun = (valid: string): void => {
      while (pos < input.length && valid.includes(input[pos]!)) pos++;
    };
    accept('+-');
    let digits = '0123456789_';
    if (accept('0')) {
      if (accept('xX')) digits = '0123456789abcdefABCDEF_';
      else if (accept('oO')) digits = '01234567_';
      else if (accept('bB')) digits = '01_';
    }
    acceptRun(digits);
    if (accept('.')) acceptRun(digits);
    if (digits.length === 11 && accept('eE')) {
      accept('+-');
      acceptRun('0123456789_');
    }
    if (digits.length === 23 && accept('pP')) {
      accept('+-');
      acceptRun('0123456789_');
    }
    accept('i');
    if (isAlphaNumeric(input[pos])) {
      pos++;
      return false;
    }
    return true;
  };

  let inside = false;
  for (;;) {
    if (!inside) {
      const x = input.indexOf(LEFT, pos);
      if (x < 0) {
        pos = input.length;
        if (pos > start) emit('text');
        items.push({ typ: 'eof', pos, val: '', line });
        return items;
      }
      if (x > pos) {
        pos = x;
        let trim = 0;
        if (hasLeftTrimMarker(input, x + LEFT.length)) {
          let j = pos;
          while (j > start && isSpace(input[j - 1])) j--;
          trim = pos - j;
        }
        pos -= trim;
        if (pos > start) emit('text');
        pos += trim;
        ignore();
      }
      // lexLeftDelim
      pos += LEFT.length;
      const trimSpace = hasLeftTrimMarker(input, pos);
      const after = trimSpace ? 2 : 0;
      if (input.startsWith('/*', pos + after)) {
        pos += after;
        ignore();
        // lexComment
        pos += 2;
        const end = input.indexOf('*/', pos);
        if (end < 0) return fail('unclosed comment');
        pos = end + 2;
        const rd = atRightDelim();
        if (!rd.delim) return fail('comment ends before closing delimiter');
        if (rd.trim) pos += 2;
        pos += RIGHT.length;
        if (rd.trim) pos += leftTrimLength(pos);
        ignore();
        continue;
      }
      emit('leftDelim');
      inside = true;
      pos += after;
      ignore();
      parenDepth = 0;
      continue;
    }
    // lexInsideAction
    const rd = atRightDelim();
    if (rd.delim) {
      if (parenDepth !== 0) return fail('unclosed left paren');
      if (rd.trim) {
        pos += 2;
        ignore();
      }
      pos += RIGHT.length;
      emit('rightDelim');
      if (rd.trim) {
        pos += leftTrimLength(pos);
        ignore();
      }
      inside = false;
      continue;
    }
    if (pos >= input.length) return fail('unclosed action');
    const c = input[pos]!;
    pos++;
    if (isSpace(c)) {
      pos--;
      let n = 0;
      while (isSpace(input[pos])) {
        pos++;
        n++;
      }
      if (hasRightTrimMarker(input, pos - 1) && input.startsWith(RIGHT, pos - 1 + 2)) {
        pos--;
        if (n === 1) continue; // on the delimiter: lexRightDelim next
      }
      emit('space');
      continue;
    }
    switch (c) {
      case '=':
        emit('assign');
        continue;
      case ':':
        if (input[pos] !== '=') return fail('expected :=');
        pos++;
        emit('declare');
        continue;
      case '|':
        emit('pipe');
        continue;
      case '"':
        if (!scanQuoted('"')) return fail('unterminated quoted string');
        emit('string');
        continue;
      case '`': {
        const end = input.indexOf('`', pos);
        if (end < 0) return fail('unterminated raw quoted string');
        pos = end + 1;
        emit('rawString');
        continue;
      }
      case '$': {
        const bad = fieldOrVariable('variable', 'variable');
        if (bad) return fail(bad);
        continue;
      }
      case "'":
        if (!scanQuoted("'")) return fail('unterminated character constant');
        emit('charConstant');
        continue;
      case '(':
        parenDepth++;
        emit('leftParen');
        continue;
      case ')':
        parenDepth--;
        if (parenDepth < 0) return fail('unexpected right paren');
        emit('rightParen');
        continue;
    }
    if (c === '.' && !(pos < input.length && input[pos]! >= '0' && input[pos]! <= '9')) {
      const bad = fieldOrVariable('dot', 'field');
      if (bad) return fail(bad);
      continue;
    }
    if (c === '.' || c === '+' || c === '-' || (c >= '0' && c <= '9')) {
      pos--;
      if (!scanNumber()) return fail(`bad number syntax: "${input.slice(start, pos)}"`);
      const sign = input[pos];
      if (sign === '+' || sign === '-') {
        if (!scanNumber() || input[pos - 1] !== 'i') return fail(`bad number syntax: "${input.slice(start, pos)}"`);
        emit('complex');
        continue;
      }
      emit('number');
      continue;
    }
    if (isAlphaNumeric(c)) {
      while (isAlphaNumeric(input[pos])) pos++;
      const word = input.slice(start, pos);
      if (!atTerminator()) return fail(`bad character ${goRuneName(input, pos)}`);
      if (KEYWORDS.has(word)) emit(word as ItemType);
      else if (word === 'true' || word === 'false') emit('bool');
      else emit('identifier');
      continue;
    }
    const code = c.charCodeAt(0);
    if (code < 0x80 && code >= 0x20 && code !== 0x7f) {
      emit('char');
      continue;
    }
    return fail(`unrecognized character in action: ${goRuneName(input, pos - 1)}`);
  }
}

/** %#U of the rune at i: U+0023 '#'. */
function goRuneName(s: string, i: number): string {
  const code = s.charCodeAt(i);
  if (Number.isNaN(code)) return 'U+FFFFFFFF';
  const hex = code.toString(16).toUpperCase().padStart(4, '0');
  return code >= 0x20 && code < 0x7f ? `U+${hex} '${s[i]!}'` : `U+${hex}`;
}
