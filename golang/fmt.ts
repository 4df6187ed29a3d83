// Go's fmt for template values: Sprint, Sprintln, Sprintf (verbs v s q d x X o b c U e E f F g G t T %,
// flags `+-# 0`, width and precision, `*`), with fmt's error texts (%!d(string=x), MISSING, EXTRA) and
// strconv's float formatting (shortest %v: `1.234567e+06`, `100000`). Values are values.ts's.
import { GoDuration, GoMap, GoNum, GoStruct, GoTime } from './values.ts';
import { decodeRune, goString, goType, isNilSlice, numberValue, sliceElem, utf8Text } from './values.ts';
import { formatGoDuration } from './duration.ts';
import { formatGoTime } from './time.ts';

// ---- floats (strconv.FormatFloat) ----

interface Digits {
  neg: boolean;
  digits: string;
  dp: number;
}

function shortestDigits(x: number): Digits {
  const [mant = '0', exp = '0'] = Math.abs(x).toExponential().split('e');
  return { neg: x < 0 || Object.is(x, -0), digits: mant.replace('.', ''), dp: Number(exp) + 1 };
}

/** The exact decimal digits of a double (no leading zeros) and the position of its decimal point. */
function exactDigits(x: number): { digits: string; dp: number } {
  const a = Math.abs(x);
  if (a === 0) return { digits: '0', dp: 1 };
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, a);
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (bexp === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = bexp - 1075;
  }
  if (e >= 0) {
    const d = (mant << BigInt(e)).toString();
    return { digits: d, dp: d.length };
  }
  const d = (mant * 5n ** BigInt(-e)).toString();
  const stripped = d.replace(/^0+/, '');
  return { digits: stripped, dp: stripped.length - -e };
}

/** Round exact digits to `n` digits (n ≥ 0) half to even, as strconv does. */
function roundDigits(d: { digits: string; dp: number }, n: number): { digits: string; dp: number } {
  if (n >= d.digits.length) return d;
  if (n < 0) return { digits: '0', dp: d.dp };
  const keep = d.digits.slice(0, n);
  const next = d.digits.charCodeAt(n) - 48;
  const restNonZero = /[1-9]/.test(d.digits.slice(n + 1));
  const lastOdd = n > 0 && (keep.charCodeAt(n - 1) - 48) % 2 === 1;
  const up = next > 5 || (next === 5 && (restNonZero || lastOdd));
  if (!up) return { digits: keep || '0', dp: keep ? d.dp : d.dp };
  const inc = (BigInt(keep || '0') + 1n).toString();
  if (inc.length > n && n > 0) return { digits: inc, dp: d.dp + 1 };
  if (n === 0) return { digits: '1', dp: d.dp + 1 };
  return { digits: inc, dp: d.dp };
}

function precisionDigits(x: number, significant: number): Digits {
  const r = roundDigits(exactDigits(x), Math.max(1, significant));
  const digits = r.digits.padEnd(Math.max(1, significant), '0');
  return { neg: x < 0 || Object.is(x, -0), digits, dp: r.dp };
}

function fmtE(d: Digits, prec: number, e: 'e' | 'E'): string {
  let s = d.neg ? '-' : '';
  s += d.digits[0] ?? '0';
  if (prec > 0) s += `.${(d.digits.slice(1) + '0'.repeat(prec)).slice(0, prec)}`;
  const exp = d.digits === '0' ? 0 : d.dp - 1;
  const ax = Math.abs(exp);
  return `${s}${e}${exp < 0 ? '-' : '+'}${ax < 10 ? '0' : ''}${ax}`;
}

function fmtF(d: Digits, prec: number): string {
  let s = d.neg ? '-' : '';
  if (d.dp > 0) s += d.digits.slice(0, d.dp) + '0'.repeat(Math.max(0, d.dp - d.digits.length));
  else s += '0';
  if (prec > 0) {
    let frac = '';
    for (let i = 0; i < prec; i++) {
      const j = d.dp + i;
      frac += j < 0 || j >= d.digits.length ? '0' : d.digits[j];
    }
    s += `.${frac}`;
  }
  return s;
}

/** strconv.FormatFloat(x, fmt, prec, 64) for fmt in e E f g G (prec -1 = shortest). */
export function formatFloat(x: number, fmt: 'e' | 'E' | 'f' | 'g' | 'G', prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const shortest = prec < 0;
  if (fmt === 'e' || fmt === 'E') {
    const d = shortest ? shortestDigits(x) : precisionDigits(x, prec + 1);
    return fmtE(d, shortest ? d.digits.length - 1 : prec, fmt);
  }
  if (fmt === 'f') {
    if (shortest) {
      const d = shortestDigits(x);
      return fmtF(d, Math.max(d.digits.length - d.dp, 0));
    }
    return fixedDecimal(x, prec);
  }
  // %g
  let p = prec;
  let d: Digits;
  if (shortest) d = shortestDigits(x);
  else {
    if (p === 0) p = 1;
    d = precisionDigits(x, p);
    d = { ...d, digits: d.digits.replace(/0+$/, '') || '0' };
  }
  if (x === 0) d = { neg: d.neg, digits: '0', dp: 1 };
  let eprec = p;
  if (eprec > d.digits.length && d.digits.length >= d.dp) eprec = d.digits.length;
  if (shortest) eprec = 6;
  const exp = d.dp - 1;
  if (exp < -4 || exp >= eprec) {
    if (shortest || p > d.digits.length) p = d.digits.length;
    return fmtE(d, p - 1, fmt === 'g' ? 'e' : 'E');
  }
  if (shortest || p > d.dp) p = d.digits.length;
  return fmtF(d, Math.max(p - d.dp, 0));
}

/** %.Nf exactly, also past 1e21 where JS's toFixed switches to exponent form. */
function fixedDecimal(x: number, prec: number): string {
  const ex = exactDigits(x);
  const r = roundDigits(ex, ex.dp + prec);
  const d: Digits = { neg: x < 0 || Object.is(x, -0), digits: r.digits, dp: r.dp };
  if (ex.dp + prec < 0) return fmtF({ neg: d.neg, digits: '0', dp: 1 }, prec);
  return fmtF(d, prec);
}

// ---- %v ----

/** fmt's %v of one value (`nested`: inside a slice or map, where nil prints `<nil>`). */
export function formatV(v: unknown, plus = false): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return String(v);
  if (v instanceof GoNum) return v.kind === 'float64' ? formatFloat(v.value, 'g', -1) : String(v.value);
  if (v instanceof Uint8Array) return `[${[...v].join(' ')}]`;
  if (Array.isArray(v)) return `[${v.map((x) => formatV(x, plus)).join(' ')}]`;
  if (v instanceof GoMap)
    return `map[${v
      .sortedKeys()
      .map((k) => `${k}:${formatV(v.get(k), plus)}`)
      .join(' ')}]`;
  if (v instanceof GoTime) return formatGoTime(v, '2006-01-02 15:04:05.999999999 -0700 MST');
  if (v instanceof GoDuration) return formatGoDuration(v.ns);
  if (v instanceof GoStruct) {
    const s = v.methods.get('String');
    if (typeof s === 'function') return String(s());
    return `{${[...v.fields].map(([k, x]) => (plus ? `${k}:` : '') + formatV(x, plus)).join(' ')}}`;
  }
  return '?';
}

/** fmt.Sprint: operands separated by a space when neither side is a string. */
export function sprint(args: readonly unknown[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatV(a);
  });
  return out;
}

export function sprintln(args: readonly unknown[]): string {
  return `${args.map((a) => formatV(a)).join(' ')}\n`;
}

// ---- quoting ----

function isPrintRune(r: number): boolean {
  // strconv.IsPrint: letters, marks, numbers, punctuation, symbols and U+0020; no other spaces.
  if (r === 0x20) return true;
  if (r < 0x20 || r === 0x7f) return false;
  if (r >= 0x80 && r < 0xa0) return false;
  if (r === 0xad) return false;
  const c = String.fromCodePoint(r);
  return /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(c);
}

/** strconv.Quote of a Go (byte) string; `ascii` = QuoteToASCII (%+q). */
export function goQuote(s: string, ascii = false, quote = '"'): string {
  let out = quote;
  for (let i = 0; i < s.length;) {
    const [r, w] = decodeRune(s, i);
    if (r === 0xfffd && w === 1 && !(s.charCodeAt(i) === 0xef && s.slice(i, i + 3) === '\xef\xbf\xbd')) {
      out += `\\x${s.charCodeAt(i).toString(16).padStart(2, '0')}`;
      i += 1;
      continue;
    }
    i += w;
    out += quoteRune(r, quote, ascii);
  }
  return out + quote;
}

function quoteRune(r: number, quote: string, ascii: boolean): string {
  const c = String.fromCodePoint(r);
  if (c === quote || c === '\\') return `\\${c}`;
  if (ascii ? r < 0x80 && isPrintRune(r) : isPrintRune(r)) return r < 0x80 ? c : goString(c);
  switch (r) {
    case 7:
      return '\\a';
    case 8:
      return '\\b';
    case 12:
      return '\\f';
    case 10:
      return '\\n';
    case 13:
      return '\\r';
    case 9:
      return '\\t';
    case 11:
      return '\\v';
  }
  if (r < 0x20 || r === 0x7f) return `\\x${r.toString(16).padStart(2, '0')}`;
  if (r < 0x10000) return `\\u${r.toString(16).padStart(4, '0')}`;
  return `\\U${r.toString(16).padStart(8, '0')}`;
}

// ---- Sprintf ----

interface Spec {
  minus: boolean;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width?: number;
  prec?: number;
}

function pad(s: string, spec: Spec, numeric = false): string {
  const w = spec.width;
  // No width, or one the text already fills (a rune is at least one byte): no need to count runes.
  if (w === undefined || s.length >= 4 * w) return s;
  const len = [...utf8Text(s)].length;
  if (len >= w) return s;
  if (spec.minus) return s + ' '.repeat(w - len);
  if (spec.zero && numeric) {
    const sign = /^[+\- ]/.test(s) ? s[0]! : '';
    return sign + '0'.repeat(w - len) + s.slice(sign.length);
  }
  return ' '.repeat(w - len) + s;
}

function badVerb(verb: string, a: unknown): string {
  if (a === null || a === undefined) return `%!${verb}(<nil>)`;
  return `%!${verb}(${goType(a)}=${formatV(a)})`;
}

function intText(n: number, base: number, spec: Spec, upper = false): string {
  let digits = Math.abs(n).toString(base);
  if (upper) digits = digits.toUpperCase();
  if (spec.prec !== undefined) digits = spec.prec === 0 && n === 0 ? '' : digits.padStart(spec.prec, '0');
  let prefix = '';
  if (spec.sharp)
    prefix = base === 16 ? (upper ? '0X' : '0x') : base === 8 && !digits.startsWith('0') ? '0' : base === 2 ? '0b' : '';
  const sign = n < 0 ? '-' : spec.plus ? '+' : spec.space ? ' ' : '';
  const zeroSpec = spec.prec !== undefined ? { ...spec, zero: false } : spec;
  if (zeroSpec.zero && !spec.minus && spec.width !== undefined) {
    const body = prefix + digits;
    const need = spec.width - sign.length - body.length;
    return sign + prefix + (need > 0 ? '0'.repeat(need) : '') + digits;
  }
  return pad(sign + prefix + digits, zeroSpec);
}

function floatText(x: number, verb: string, spec: Spec): string {
  const fmt = (verb === 'F' ? 'f' : verb === 'v' ? 'g' : verb) as 'e' | 'E' | 'f' | 'g' | 'G';
  let prec = spec.prec ?? (verb === 'v' || verb === 'g' || verb === 'G' ? -1 : 6);
  if (spec.sharp && (fmt === 'g' || fmt === 'G') && prec < 0) prec = 6;
  let s = formatFloat(x, fmt, prec);
  if (spec.sharp && (fmt === 'g' || fmt === 'G') && Number.isFinite(x)) {
    // %#g keeps trailing zeros and the point: redo with the digits kept.
    const d = precisionDigits(x, prec === 0 ? 1 : prec);
    const exp = d.dp - 1;
    s =
      exp < -4 || exp >= (prec === 0 ? 1 : prec)
        ? fmtE(d, (prec === 0 ? 1 : prec) - 1, fmt === 'g' ? 'e' : 'E')
        : fmtF(d, Math.max((prec === 0 ? 1 : prec) - d.dp, 0));
    if (!s.includes('.')) s = s.replace(/^(-?\d+)/, '$1.');
  }
  if (!s.startsWith('-') && !s.startsWith('+')) {
    if (spec.plus) s = `+${s}`;
    else if (spec.space) s = ` ${s}`;
  } else if (s === '+Inf' && !spec.plus) s = spec.space ? ' Inf' : 'Inf';
  if (!Number.isFinite(x)) return pad(s, { ...spec, zero: false });
  return pad(s, spec, true);
}

function hexOfBytes(s: string, spec: Spec, upper: boolean): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (i > 0 && spec.space) out += ' ';
    if (spec.sharp && (i === 0 || spec.space)) out += upper ? '0X' : '0x';
    out += s.charCodeAt(i).toString(16).padStart(2, '0');
  }
  return upper ? out.toUpperCase() : out;
}

/** One operand under one verb. */
function formatArg(verb: string, a: unknown, spec: Spec): string {
  if (verb === 'T') return pad(a === null || a === undefined ? '<nil>' : goType(a), spec);
  if (verb === 'v' && spec.sharp) return pad(goSyntax(a), spec);
  if (a === null || a === undefined) return verb === 'v' ? pad('<nil>', spec) : badVerb(verb, a);
  if (Array.isArray(a) && verb !== 'v' && verb !== 's' && verb !== 'q' && verb !== 'x' && verb !== 'X') {
    return `[${a.map((x) => formatArg(verb, x, { ...spec, width: spec.width })).join(' ')}]`;
  }
  if (typeof a === 'boolean') return verb === 't' || verb === 'v' ? pad(String(a), spec) : badVerb(verb, a);
  // fmt's handleMethods: a Stringer (time.Time, *semver.Version) under %v %s %q %x %X is its String().
  if (
    (a instanceof GoTime || (a instanceof GoStruct && typeof a.methods.get('String') === 'function')) &&
    'vsqxX'.includes(verb)
  )
    return formatArg(verb, formatV(a), spec);
  const n = numberValue(a);
  const isFloat = a instanceof GoNum && a.kind === 'float64';
  if (n !== undefined && !(a instanceof GoDuration && (verb === 'v' || verb === 's'))) {
    if (isFloat) {
      if ('eEfFgGv'.includes(verb)) return floatText(n, verb, spec);
      return badVerb(verb, a);
    }
    switch (verb) {
      case 'v':
      case 'd':
        return intText(n, 10, spec);
      case 'b':
        return intText(n, 2, spec);
      case 'o':
        return intText(n, 8, spec);
      case 'O':
        return intText(n, 8, { ...spec, sharp: false }).replace(/^([-+ ]?)/, '$10o');
      case 'x':
        return intText(n, 16, spec);
      case 'X':
        return intText(n, 16, spec, true);
      case 'c':
        return pad(goString(String.fromCodePoint(validRune(n))), spec);
      case 'q':
        return pad(goQuote(goString(String.fromCodePoint(validRune(n))), spec.plus, "'"), spec);
      case 'U': {
        const u = `U+${n.toString(16).toUpperCase().padStart(4, '0')}`;
        return pad(spec.sharp && isPrintRune(n) ? `${u} '${goString(String.fromCodePoint(n))}'` : u, spec);
      }
      default:
        return badVerb(verb, a);
    }
  }
  if (typeof a === 'string' || a instanceof Uint8Array) {
    const s = typeof a === 'string' ? a : Buffer.from(a).toString('latin1');
    if (a instanceof Uint8Array && verb === 'v') return pad(formatV(a), spec);
    switch (verb) {
      case 'v':
      case 's':
        return pad(spec.prec !== undefined ? truncRunes(s, spec.prec) : s, spec);
      case 'q': {
        const t = spec.prec !== undefined ? truncRunes(s, spec.prec) : s;
        return pad(
          spec.sharp && !t.includes('`') && [...utf8Text(t)].every((c) => c === '\t' || isPrintRune(c.codePointAt(0)!))
            ? `\`${t}\``
            : goQuote(t, spec.plus),
          spec,
        );
      }
      case 'x':
        return pad(hexOfBytes(spec.prec !== undefined ? s.slice(0, spec.prec) : s, spec, false), spec);
      case 'X':
        return pad(hexOfBytes(spec.prec !== undefined ? s.slice(0, spec.prec) : s, spec, true), spec);
      default:
        return badVerb(verb, a);
    }
  }
  if (verb === 'v' || verb === 's') return pad(formatV(a, spec.plus), spec);
  if (a instanceof GoMap)
    return `map[${a
      .sortedKeys()
      .map((k) => `${formatArg(verb, k, {} as Spec)}:${formatArg(verb, a.get(k), spec)}`)
      .join(' ')}]`;
  return badVerb(verb, a);
}

function validRune(n: number): number {
  return n < 0 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff) ? 0xfffd : n;
}

function truncRunes(s: string, n: number): string {
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) i += decodeRune(s, i)[1];
  return s.slice(0, i);
}

/** %#v, for the values templates hold. */
function goSyntax(a: unknown): string {
  if (a === null || a === undefined) return '<nil>';
  if (typeof a === 'string') return goQuote(a);
  if (typeof a === 'boolean' || typeof a === 'number') return String(a);
  if (a instanceof GoNum) return a.kind === 'float64' ? formatFloat(a.value, 'g', -1) : `0x${a.value.toString(16)}`;
  if (Array.isArray(a))
    return isNilSlice(a) ? `[]${sliceElem(a)}(nil)` : `[]${sliceElem(a)}{${a.map(goSyntax).join(', ')}}`;
  if (a instanceof GoMap)
    return `map[string]${a.elem}{${a
      .sortedKeys()
      .map((k) => `${goQuote(k)}:${goSyntax(a.get(k))}`)
      .join(', ')}}`;
  return formatV(a);
}

/** fmt.Sprintf with Go's verbs and its reports of bad verbs, missing and extra operands. */
export function sprintf(format: string, args: readonly unknown[]): string {
  let out = '';
  let argi = 0;
  let reordered = false;
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c !== '%') {
      out += c;
      i++;
      continue;
    }
    i++;
    const spec: Spec = { minus: false, plus: false, sharp: false, space: false, zero: false };
    for (; i < format.length; i++) {
      const f = format[i];
      if (f === '-') {
        spec.minus = true;
        spec.zero = false;
      } else if (f === '+') spec.plus = true;
      else if (f === '#') spec.sharp = true;
      else if (f === ' ') spec.space = true;
      else if (f === '0') spec.zero = !spec.minus;
      else break;
    }
    const argIndex = (): void => {
      const m = /^\[(\d+)\]/.exec(format.slice(i));
      if (m) {
        argi = Number(m[1]) - 1;
        i += m[0].length;
        reordered = true;
      }
    };
    argIndex();
    if (format[i] === '*') {
      i++;
      const w = args[argi++];
      if (typeof w === 'number') {
        spec.width = Math.abs(w);
        if (w < 0) {
          spec.minus = true;
          spec.zero = false;
        }
      } else out += '%!(BADWIDTH)';
    } else {
      const m = /^\d+/.exec(format.slice(i));
      if (m) {
        spec.width = Number(m[0]);
        i += m[0].length;
      }
    }
    if (format[i] === '.') {
      i++;
      argIndex();
      if (format[i] === '*') {
        i++;
        const p = args[argi++];
        if (typeof p === 'number' && p >= 0) spec.prec = p;
        else out += '%!(BADPREC)';
      } else {
        const m = /^\d+/.exec(format.slice(i));
        spec.prec = m ? Number(m[0]) : 0;
        if (m) i += m[0].length;
      }
    }
    argIndex();
    if (i >= format.length) {
      out += '%!(NOVERB)';
      break;
    }
    const [r, w] = decodeRune(format, i);
    const verb = goString(String.fromCodePoint(r));
    i += w;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argi >= args.length || argi < 0) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    const a = args[argi++];
    out += /^[vsqdxXobcUeEfFgGtT]$/.test(verb) ? formatArg(verb, a, spec) : badVerb(verb, a);
  }
  if (!reordered && argi < args.length) {
    out += `%!(EXTRA ${args
      .slice(argi)
      .map((a) => (a === null || a === undefined ? '<nil>' : `${goType(a)}=${formatV(a)}`))
      .join(', ')})`;
  }
  return out;
}
