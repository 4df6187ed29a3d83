// Sprig v3 (ESO's fork github.com/external-secrets/sprig/v3 v3.3.0, with spf13/cast 1.7.1 and
// Masterminds/goutils 1.1.1 as ESO v0.16.2 builds it) for the functions that give the same output for
// the same input. Each mirrors the Go source, quirks included: b64dec returns the error text, `get` of
// a missing key is "", `nospace`/`initials` work byte by byte, `substr` out of range panics (an error),
// `first nil` panics. Errors never quote an argument.
import { createDecipheriv, createHash } from 'node:crypto';
import { GoRegexpError, parseGoRegexp, quoteMeta, replaceAllLiteralStringGo, replaceAllStringGo, splitGo, type GoRegexp, type GoRegexpResult } from '../regexp.ts';
import { toGoJson } from '../marshal.ts';
import { formatFloat, formatV, goQuote } from '../fmt.ts';
import { fail, fixed, variadic, type FuncTable } from '../func.ts';
import { semverCompare, semverFunc } from './semver.ts';
import { derivePassword } from './password.ts';
import { buildCustomCert } from './cert.ts';
import { goBase64 } from '../base64.ts';
import { toCamelCase, toKebabCase, toSnakeCase, wrapCustom } from './strings.ts';
import { parseGoDurationNs } from '../duration.ts';
import { ZERO_TIME, loadLocation, formatGoDuration, formatGoTime, parseGoTime } from '../time.ts';
import {
  GoMap, GoNum, GoStruct, GoTime, deepCopy, deepEqual, float64, fromJsValue, goString, goType, int64, kindOf,
  mapText, nilSlice, numberValue, sliceElem, stringSlice, typedSlice, utf8Text,
} from '../values.ts';

// ---- conversions (Sprig's strval, strslice; spf13/cast) ----

/** Sprig's strval: strings as-is, bytes as a string, Stringers by String(), anything else as %v. */
export function strval(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('latin1');
  return formatV(v);
}

/** Sprig's strslice: a list's non-nil elements as strings, nil as no element, anything else as one. */
function strslice(v: unknown): string[] {
  if (Array.isArray(v)) return stringSlice(sliceElem(v) === 'string' ? [...(v as string[])] : v.filter((x) => x !== null && x !== undefined).map(strval));
  if (v instanceof Uint8Array) return stringSlice([...v].map((b) => String(b)));
  if (v === null || v === undefined) return stringSlice([]);
  return stringSlice([strval(v)]);
}

/** cast's trimZeroDecimal: "1.00" → "1". */
function trimZeroDecimal(s: string): string {
  let foundZero = false;
  for (let i = s.length; i > 0; i--) {
    const c = s[i - 1];
    if (c === '.') { if (foundZero) return s.slice(0, i - 1); } else if (c === '0') foundZero = true;
    else return s;
  }
  return s;
}

/** strconv.ParseInt(s, 0, 64) or undefined. */
function parseIntBase0(s: string): number | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F](?:_?[0-9a-fA-F])*|0[oO][0-7](?:_?[0-7])*|0[bB][01](?:_?[01])*|0_?[0-7](?:_?[0-7])*|[1-9](?:_?[0-9])*|0)$/.exec(s);
  if (!m) return undefined;
  let body = m[2]!.replace(/_/g, '');
  if (/^0[0-7]/.test(body)) body = `0o${body.slice(1)}`;
  const v = BigInt(body.replace(/^0[xX]/, '0x').replace(/^0[oO]/, '0o').replace(/^0[bB]/, '0b'));
  const signed = m[1] === '-' ? -v : v;
  if (signed < -(2n ** 63n) || signed >= 2n ** 63n) return undefined;
  return Number(signed);
}

/** cast.ToInt64: numbers truncated, strings parsed (0x…, "1.0"), bools 1/0, anything else 0. */
export function castInt(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') return parseIntBase0(trimZeroDecimal(v)) ?? 0;
  const n = numberValue(v);
  if (n === undefined) return 0;
  return Number.isFinite(n) ? Math.trunc(n) : n > 0 ? 2 ** 63 : -(2 ** 63);
}

/** cast.ToFloat64. */
export function castFloat(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const t = v.replace(/_/g, '');
    if (/^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|[Ii]nf(inity)?|NaN|nan)$/.test(v) || /^[+-]?0[xX]/.test(v)) {
      const x = /inf/i.test(t) ? (t.startsWith('-') ? -Infinity : Infinity) : /nan/i.test(t) ? NaN : Number(t);
      return Number.isNaN(x) && !/nan/i.test(t) ? 0 : x;
    }
    return 0;
  }
  return numberValue(v) ?? 0;
}

// ---- strings ----

const goSpace = (c: number): boolean => c === 0x20 || (c >= 0x9 && c <= 0xd) || c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;

/** strings.TrimSpace. */
function trimSpace(s: string): string {
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
function trimCutset(s: string, cutset: string): string {
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
function goTitle(s: string): string {
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
      out += isSep(prev) ? c.toUpperCase().length === 1 || [...c.toUpperCase()].length === 1 ? c.toUpperCase() : c : c;
      prev = c;
    }
    return out;
  });
}

function goUpper(s: string): string {
  return mapText(s, (t) => [...t].map((c) => { const u = c.toUpperCase(); return [...u].length === 1 ? u : c; }).join(''));
}
function goLower(s: string): string {
  return mapText(s, (t) => [...t].map((c) => { const u = c.toLowerCase(); return [...u].length === 1 ? u : c; }).join(''));
}

/** goutils' byte-wise loops write each byte back as a rune (so bytes ≥ 0x80 become two bytes). */
const byteAsRune = (b: number): string => (b < 0x80 ? String.fromCharCode(b) : goString(String.fromCharCode(b)));
const byteIsSpace = (b: number): boolean => (b >= 0x9 && b <= 0xd) || b === 0x20 || b === 0x85 || b === 0xa0;

function deleteWhiteSpace(s: string): string {
  let out = '';
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const b = s.charCodeAt(i);
    if (!byteIsSpace(b)) { out += byteAsRune(b); count++; }
  }
  return count === s.length ? s : out;
}

function initials(s: string): string {
  let out = '';
  let gap = true;
  for (let i = 0; i < s.length; i++) {
    const b = s.charCodeAt(i);
    if (byteIsSpace(b)) gap = true;
    else if (gap) { out += byteAsRune(b); gap = false; }
  }
  return out;
}

function uncapitalize(s: string): string {
  return mapText(s, (t) => {
    let next = true;
    let out = '';
    for (const c of t) {
      if (goSpace(c.codePointAt(0)!)) { next = true; out += c; } else if (next) { const l = c.toLowerCase(); out += [...l].length === 1 ? l : c; next = false; } else out += c;
    }
    return out;
  });
}

function swapCase(s: string): string {
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

function abbreviateFull(s: string, offset: number, maxWidth: number): string {
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

function substring(start: number, end: number, s: string): string {
  if (start < 0) return goSlice(s, 0, end);
  if (end < 0 || end > s.length) return goSlice(s, start, s.length);
  return goSlice(s, start, end);
}

function trunc(c: number, s: string): string {
  if (c < 0 && s.length + c > 0) return s.slice(s.length + c);
  if (c >= 0 && s.length > c) return s.slice(0, c);
  return s;
}

function repeat(count: number, s: string): string {
  if (count < 0) fail('strings: negative Repeat count');
  if (count * s.length > 1 << 20) fail('repeat result exceeds 1 MiB');
  return s.repeat(count);
}

/** strings.Split(s, sep): an empty sep splits into UTF-8 sequences. */
function goSplit(s: string, sep: string, n = -1): string[] {
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

function utf8Width(s: string, i: number): number {
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

const partsMap = (parts: string[]): GoMap => new GoMap(parts.map((p, i) => [`_${i}`, p] as const), 'string');

function base64Decode(s: string): string {
  const r = goBase64(s);
  return typeof r === 'string' ? r : r.toString('latin1');
}

/** Sprig's decryptAES: AES-256-CBC, the key the password's bytes zero-padded to 32, the IV first. */
function decryptAES(password: string, crypt64: string): string {
  if (crypt64 === '') return '';
  const key = Buffer.alloc(32);
  Buffer.from(password, 'latin1').copy(key, 0, 0, 32);
  const crypt = goBase64(crypt64);
  if (typeof crypt === 'string') return fail(crypt.replace(/ at input byte \d+$/, ''));
  if (crypt.length < 16) fail('runtime error: slice bounds out of range');
  const body = crypt.subarray(16);
  if (body.length % 16 !== 0) fail('crypto/cipher: input not full blocks');
  const d = createDecipheriv('aes-256-cbc', key, crypt.subarray(0, 16));
  d.setAutoPadding(false);
  const out = Buffer.concat([d.update(body), d.final()]);
  // Go strips as many bytes as the last one says, unchecked: more than there are is a panic.
  const pad = out.length > 0 ? out[out.length - 1]! : fail('runtime error: index out of range [-1]');
  if (pad > out.length) fail('runtime error: slice bounds out of range');
  return out.subarray(0, out.length - pad).toString('latin1');
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
function base32Encode(s: string): string {
  const b = Buffer.from(s, 'latin1');
  let out = '';
  for (let i = 0; i < b.length; i += 5) {
    const chunk = [...b.subarray(i, i + 5)];
    const n = chunk.length;
    while (chunk.length < 5) chunk.push(0);
    let bits = 0n;
    for (const x of chunk) bits = (bits << 8n) | BigInt(x);
    let group = '';
    for (let k = 7; k >= 0; k--) group += B32[Number((bits >> BigInt(k * 5)) & 31n)];
    const keep = [0, 2, 4, 5, 7, 8][n]!;
    out += group.slice(0, keep) + '='.repeat(8 - keep);
  }
  return out;
}
function base32Decode(s: string): string {
  const clean = s.replace(/[\r\n]/g, '');
  if (clean.length % 8 !== 0 || !/^[A-Z2-7]*=*$/.test(clean)) {
    const bad = clean.search(/[^A-Z2-7=]/);
    return `illegal base32 data at input byte ${bad >= 0 ? bad : Math.floor(clean.length / 8) * 8}`;
  }
  const out: number[] = [];
  for (let i = 0; i < clean.length; i += 8) {
    const group = clean.slice(i, i + 8);
    const data = group.replace(/=+$/, '');
    if (![8, 7, 5, 4, 2].includes(data.length) || (data.length < 8 && i + 8 < clean.length)) return `illegal base32 data at input byte ${i + data.length}`;
    let bits = 0n;
    for (const c of data.padEnd(8, 'A')) bits = (bits << 5n) | BigInt(B32.indexOf(c));
    const n = { 8: 5, 7: 4, 5: 3, 4: 2, 2: 1 }[data.length as 8 | 7 | 5 | 4 | 2];
    for (let k = 0; k < n; k++) out.push(Number((bits >> BigInt((4 - k) * 8)) & 255n));
  }
  return Buffer.from(out).toString('latin1');
}

function adler32(s: string): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < s.length; i++) {
    a = (a + s.charCodeAt(i)) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

// ---- regular expressions (Go's regexp, golang/regexp.ts: RE2 in linear time), on the strings' bytes ----

/** The pattern (a Go string) compiled; the error names the rule, never the pattern (it may be secret data). */
function compile(re: string): GoRegexp {
  const r = parse(re);
  if (r.ok) return r.regexp;
  // Go's message ends with the offending part of the pattern in backquotes: left out.
  return fail(r.error.replace(/: `[\s\S]*`$/, ''));
}

function parse(re: string): GoRegexpResult {
  const text = utf8Text(re);
  // Go reads a pattern as UTF-8: one that does not round-trip is invalid.
  return goString(text) === re ? parseGoRegexp(text) : { ok: false, error: 'error parsing regexp: invalid UTF-8' };
}

/** A regexp call, its bound (input size × program size) reported as a function error. */
function guarded<T>(call: () => T): T {
  try {
    return call();
  } catch (e) {
    if (e instanceof GoRegexpError) return fail(e.message);
    throw e;
  }
}

function findAllStrings(re: string, s: string, n: number): unknown {
  const found = guarded(() => compile(re).findAllIndexGo(s, n));
  return found.length === 0 ? nilSlice('string') : stringSlice(found.map(([a, b]) => s.slice(a, b)));
}

function findString(re: string, s: string): string {
  const m = guarded(() => compile(re).findAllIndexGo(s, 1))[0];
  return m ? s.slice(m[0], m[1]) : '';
}

function split(re: string, s: string, n: number): unknown {
  const parts = guarded(() => splitGo(compile(re), s, n));
  return parts === null ? nilSlice('string') : stringSlice(parts);
}

// ---- lists ----

function asList(v: unknown, what: string): unknown[] {
  if (v === null || v === undefined) return fail(`${what}: runtime error: invalid memory address or nil pointer dereference`);
  if (Array.isArray(v)) return v;
  if (v instanceof Uint8Array) return [...v].map((b) => new GoNum('uint8', b));
  return fail(`${what} on type ${kindOf(v)}`);
}

const mustList = (name: string, fn: (l: unknown[], ...rest: unknown[]) => unknown) => (list: unknown, ...rest: unknown[]): unknown => fn(asList(list, `Cannot ${name}`), ...rest);

function chunk(size: number, l: unknown[]): unknown[][] {
  const len = l.length;
  const cs = Math.floor((len - 1) / size) + 1;
  if (!Number.isFinite(cs) || cs < 0) fail('makeslice: len out of range');
  const out: unknown[][] = [];
  for (let i = 0; i < cs; i++) {
    let clen = size;
    if (i === cs - 1) {
      clen = Math.floor(len % size);
      if (clen === 0) clen = size;
    }
    const part: unknown[] = [];
    for (let j = 0; j < clen; j++) {
      const ix = i * size + j;
      if (ix >= len) fail('index out of range');
      part.push(l[ix]);
    }
    out.push(part);
  }
  return typedSlice(out, '[]interface {}');
}

/** Sprig's `empty`. */
export function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (typeof v === 'string' || Array.isArray(v) || v instanceof Uint8Array) return v.length === 0;
  if (v instanceof GoMap) return v.size === 0;
  if (typeof v === 'boolean') return !v;
  if (v instanceof GoTime || v instanceof GoStruct) return false;
  const n = numberValue(v);
  return n === 0;
}

function sliceList(l: unknown, ...idx: unknown[]): unknown {
  const list = asList(l, 'list should be type of slice or array but');
  if (list.length === 0) return null;
  const start = idx.length > 0 ? castInt(idx[0]) : 0;
  const end = idx.length < 2 ? list.length : castInt(idx[1]);
  if (start < 0 || end < start || end > list.length) fail('slice bounds out of range');
  const out = list.slice(start, end);
  return Array.isArray(l) ? typedSlice(out, sliceElem(l)) : out;
}

// ---- dicts ----

function toMap(v: unknown): GoMap {
  return v instanceof GoMap ? v : new GoMap();
}

/** mergo.Merge / MergeWithOverwrite on map[string]interface{}. */
function mergeInto(dst: GoMap, src: GoMap, overwrite: boolean): void {
  for (const [k, sv] of src) {
    const dv = dst.get(k);
    if (dst.has(k) && dv instanceof GoMap && sv instanceof GoMap) {
      mergeInto(dv, sv, overwrite);
      continue;
    }
    if (!dst.has(k)) dst.set(k, sv);
    else if (isEmpty(dv) && !isEmpty(sv)) dst.set(k, sv);
    else if (overwrite && !isEmpty(sv)) dst.set(k, sv);
  }
}

function dig(...ps: unknown[]): unknown {
  if (ps.length < 3) fail('dig needs at least three arguments');
  const last = ps[ps.length - 1];
  if (!(last instanceof GoMap) || last.elem !== 'interface {}') return fail(`interface conversion: interface {} is ${goType(last)}, not map[string]interface {}`);
  const def = ps[ps.length - 2];
  const ks = ps.slice(0, -2).map((k) => (typeof k === 'string' ? k : fail(`interface conversion: interface {} is ${goType(k)}, not string`)));
  let d: GoMap = last;
  for (let i = 0; i < ks.length; i++) {
    if (!d.has(ks[i]!)) return def;
    const step = d.get(ks[i]!);
    if (i === ks.length - 1) return step;
    if (!(step instanceof GoMap) || step.elem !== 'interface {}') return fail(`interface conversion: interface {} is ${goType(step)}, not map[string]interface {}`);
    d = step;
  }
  return def;
}

// ---- numbers ----

function untilStep(start: number, stop: number, step: number): number[] {
  const v: number[] = [];
  const cap = 1_000_000;
  if (stop < start) {
    if (step >= 0) return typedSlice(v, 'int');
    for (let i = start; i > stop; i += step) { v.push(i); if (v.length > cap) fail('list exceeds 1000000 elements'); }
    return typedSlice(v, 'int');
  }
  if (step <= 0) return typedSlice(v, 'int');
  for (let i = start; i < stop; i += step) { v.push(i); if (v.length > cap) fail('list exceeds 1000000 elements'); }
  return typedSlice(v, 'int');
}

function seq(...params: number[]): string {
  let inc = 1;
  let list: number[];
  switch (params.length) {
    case 0: return '';
    case 1: {
      const end = params[0]!;
      if (end < 1) inc = -1;
      list = untilStep(1, end + inc, inc);
      break;
    }
    case 2: {
      const [start, end] = params as [number, number];
      const step = end < start ? -1 : 1;
      list = untilStep(start, end + step, step);
      break;
    }
    case 3: {
      const [start, step, end] = params as [number, number, number];
      if (end < start) { inc = -1; if (step > 0) return ''; }
      list = untilStep(start, end + inc, step);
      break;
    }
    default: return '';
  }
  return list.join(' ');
}

/** shopspring/decimal arithmetic as Sprig's addf…divf use it: exact on the floats' shortest decimals. */
function decimalOp(a: unknown, rest: unknown[], op: '+' | '-' | '*' | '/'): GoNum {
  const toDec = (x: number): { int: bigint; exp: number } => {
    if (!Number.isFinite(x)) return { int: 0n, exp: 0 };
    const [mant = '0', e = '0'] = x.toExponential().split('e');
    const digits = mant.replace('.', '').replace('-', '');
    const frac = (mant.split('.')[1] ?? '').length;
    const sign = x < 0 ? -1n : 1n;
    return { int: sign * BigInt(digits), exp: Number(e) - frac };
  };
  const fromDec = (d: { int: bigint; exp: number }): number => Number(`${d.int}e${d.exp}`);
  let acc = toDec(castFloat(a));
  for (const x of rest) {
    const b = toDec(castFloat(x));
    const e = Math.min(acc.exp, b.exp);
    const ai = acc.int * 10n ** BigInt(acc.exp - e);
    const bi = b.int * 10n ** BigInt(b.exp - e);
    if (op === '+') acc = { int: ai + bi, exp: e };
    else if (op === '-') acc = { int: ai - bi, exp: e };
    else if (op === '*') acc = { int: acc.int * b.int, exp: acc.exp + b.exp };
    else {
      if (b.int === 0n) fail('decimal division by 0');
      // DivRound to DivisionPrecision (16) decimal places, half away from zero.
      const shift = acc.exp - b.exp + 16;
      const num = acc.int * 10n ** BigInt(Math.max(shift, 0)) * 10n;
      const den = b.int * 10n ** BigInt(Math.max(-shift, 0));
      let q = num / den;
      const rem = q % 10n;
      q = q / 10n + (rem >= 5n ? 1n : rem <= -5n ? -1n : 0n);
      acc = { int: q, exp: -16 };
    }
  }
  return float64(fromDec(acc));
}

function round(a: unknown, p: number, ...opt: unknown[]): GoNum {
  const roundOn = opt.length > 0 ? castFloat(opt[0]) : 0.5;
  const val = castFloat(a);
  const pow = 10 ** p;
  const digit = pow * val;
  const div = digit - Math.trunc(digit);
  const r = div >= roundOn ? Math.ceil(digit) : Math.floor(digit);
  return float64(r / pow);
}

// ---- paths (path and path/filepath on Linux) ----

function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(seg);
  }
  const s = (rooted ? '/' : '') + out.join('/');
  return s === '' ? '.' : s;
}
function basePath(p: string): string {
  if (p === '') return '.';
  const t = p.replace(/\/+$/, '');
  if (t === '') return '/';
  return t.slice(t.lastIndexOf('/') + 1);
}
function dirPath(p: string): string {
  const i = p.lastIndexOf('/');
  return cleanPath(p.slice(0, i + 1));
}
function extPath(p: string): string {
  for (let i = p.length - 1; i >= 0 && p[i] !== '/'; i--) if (p[i] === '.') return p.slice(i);
  return '';
}

// ---- URLs (net/url) ----

function urlParse(v: string): GoMap {
  const text = utf8Text(v);
  const m = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(.*)$/s.exec(text)!;
  let scheme = m[1] ?? '';
  let rest = m[2]!;
  if (/[\x00-\x1f\x7f ]/.test(text) && /[\x00-\x1f\x7f]/.test(text)) fail('unable to parse url: invalid control character in URL');
  if (!m[1] && /^[^/?#]*:/.test(text) && !text.startsWith('/')) fail('unable to parse url: missing protocol scheme');
  scheme = scheme.toLowerCase();
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) { fragment = decodeURIComponentSafe(rest.slice(hash + 1)); rest = rest.slice(0, hash); }
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) { query = rest.slice(q + 1); rest = rest.slice(0, q); }
  let opaque = '';
  let host = '';
  let userinfo = '';
  let path = '';
  if (scheme && !rest.startsWith('/')) opaque = rest;
  else if (rest.startsWith('//')) {
    const after = rest.slice(2);
    const slash = after.indexOf('/');
    let authority = slash >= 0 ? after.slice(0, slash) : after;
    path = slash >= 0 ? after.slice(slash) : '';
    const at = authority.lastIndexOf('@');
    if (at >= 0) { userinfo = authority.slice(0, at); authority = authority.slice(at + 1); }
    host = authority;
  } else path = rest;
  path = decodeURIComponentSafe(path);
  const hostname = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '');
  return new GoMap([
    ['scheme', goString(scheme)], ['host', goString(host)], ['hostname', goString(hostname)], ['path', goString(path)],
    ['query', goString(query)], ['opaque', goString(opaque)], ['fragment', goString(fragment)], ['userinfo', goString(userinfo)],
  ]);
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return fail('unable to parse url: invalid URL escape');
  }
}

function urlJoin(d: GoMap): string {
  const get = (k: string): string => {
    if (!d.has(k)) return '';
    const v = d.get(k);
    if (typeof v !== 'string') fail(`unable to parse ${k} key, must be of type string, but ${kindOf(v)} found`);
    return v as string;
  };
  const scheme = get('scheme');
  const host = get('host');
  const path = get('path');
  const query = get('query');
  const opaque = get('opaque');
  const fragment = get('fragment');
  const userinfo = get('userinfo');
  let out = '';
  if (scheme) out += `${scheme}:`;
  if (opaque) out += opaque;
  else {
    if (scheme || host || userinfo) {
      if (host || path || userinfo) out += '//';
      if (userinfo) out += `${userinfo}@`;
      out += host;
    }
    if (path && !path.startsWith('/') && host) out += '/';
    out += path.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/g, (c) => [...Buffer.from(c, 'latin1')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
  }
  if (query) out += `?${query}`;
  if (fragment) out += `#${fragment.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)}`;
  return out;
}

// ---- dates (deterministic ones; Local is UTC) ----

function toTime(v: unknown): GoTime | undefined {
  if (v instanceof GoTime) return v;
  if (typeof v === 'number' || (v instanceof GoNum && (v.kind === 'int64' || v.kind === 'int32'))) return new GoTime(numberValue(v)! * 1000);
  return undefined;
}

function dateInZone(layout: string, date: unknown, zone: string): string {
  const t = toTime(date);
  if (!t) fail('the date is not a time value or a Unix timestamp (vaultgate does not read the clock: the output would change on every render)');
  const z = loadLocation(utf8Text(zone), t!.ms) ?? { name: 'UTC', offsetSeconds: 0 };
  return goString(formatGoTime(new GoTime(t!.ms, z, t!.nanos), utf8Text(layout)));
}

function durationOf(v: unknown): string {
  const n = typeof v === 'string' ? parseIntBase10(v) : v instanceof GoNum && v.kind === 'int64' ? v.value : 0;
  return formatGoDuration(n * 1e9);
}
const parseIntBase10 = (s: string): number => (/^[+-]?\d+$/.test(s) ? Number(s) : 0);

function durationRound(v: unknown): string {
  let d = 0;
  if (typeof v === 'string') d = durationNs(v) ?? 0;
  else if (v instanceof GoNum && v.kind === 'int64') d = v.value;
  else if (v instanceof GoTime) fail('durationRound of a time value reads the clock: not supported by vaultgate');
  const u = Math.abs(d);
  const units: Array<[number, string]> = [[3.6e12 * 24 * 365, 'y'], [3.6e12 * 24 * 30, 'mo'], [3.6e12 * 24, 'd'], [3.6e12, 'h'], [6e10, 'm'], [1e9, 's']];
  for (const [size, name] of units) if (u > size) return `${Math.floor(u / size)}${name}`;
  return '0s';
}

/** time.ParseDuration in nanoseconds, undefined on Go's error (golang/duration.ts: the one Go duration parser). */
function durationNs(s: string): number | undefined {
  const r = parseGoDurationNs(s);
  return r.ok ? Number(r.ns) : undefined;
}

// ---- the table ----

const must = <T>(name: string, fn: T): T => fn;

export const SPRIG_FUNCS: FuncTable = {
  hello: fixed([], () => 'Hello!'),
  // strings
  abbrev: fixed(['int', 'string'], (w, s) => (w < 4 ? s : abbreviateFull(s, 0, w))),
  abbrevboth: fixed(['int', 'int', 'string'], (l, r, s) => (r < 4 || (l > 0 && r < 7) ? s : abbreviateFull(s, l, r))),
  trunc: fixed(['int', 'string'], trunc),
  trim: fixed(['string'], trimSpace),
  upper: fixed(['string'], goUpper),
  lower: fixed(['string'], goLower),
  title: fixed(['string'], goTitle),
  untitle: fixed(['string'], uncapitalize),
  substr: fixed(['int', 'int', 'string'], substring),
  repeat: fixed(['int', 'string'], repeat),
  trimall: fixed(['string', 'string'], (a, b) => trimCutset(b, a)),
  trimAll: fixed(['string', 'string'], (a, b) => trimCutset(b, a)),
  trimSuffix: fixed(['string', 'string'], (a, b) => (a !== '' && b.endsWith(a) ? b.slice(0, -a.length) : b)),
  trimPrefix: fixed(['string', 'string'], (a, b) => (b.startsWith(a) ? b.slice(a.length) : b)),
  nospace: fixed(['string'], deleteWhiteSpace),
  initials: fixed(['string'], initials),
  swapcase: fixed(['string'], swapCase),
  snakecase: fixed(['string'], toSnakeCase),
  camelcase: fixed(['string'], toCamelCase),
  kebabcase: fixed(['string'], toKebabCase),
  wrap: fixed(['int', 'string'], (l, s) => wrapCustom(s, l, '', false)),
  wrapWith: fixed(['int', 'string', 'string'], (l, sep, s) => wrapCustom(s, l, sep, true)),
  contains: fixed(['string', 'string'], (sub, s) => s.includes(sub)),
  hasPrefix: fixed(['string', 'string'], (p, s) => s.startsWith(p)),
  hasSuffix: fixed(['string', 'string'], (p, s) => s.endsWith(p)),
  quote: variadic([], 'any', (...a) => a.filter((x) => x !== null && x !== undefined).map((x) => goQuote(strval(x))).join(' ')),
  squote: variadic([], 'any', (...a) => a.filter((x) => x !== null && x !== undefined).map((x) => `'${formatV(x)}'`).join(' ')),
  cat: variadic([], 'any', (...a) => a.filter((x) => x !== null && x !== undefined).map((x) => formatV(x)).join(' ')),
  indent: fixed(['int', 'string'], (n, s) => { const pad = repeat(n, ' '); return pad + s.split('\n').join(`\n${pad}`); }),
  nindent: fixed(['int', 'string'], (n, s) => { const pad = repeat(n, ' '); return `\n${pad}${s.split('\n').join(`\n${pad}`)}`; }),
  replace: fixed(['string', 'string', 'string'], (o, n, s) => goReplace(s, o, n)),
  plural: fixed(['string', 'string', 'int'], (one, many, c) => (c === 1 ? one : many)),
  sha1sum: fixed(['string'], (s) => createHash('sha1').update(Buffer.from(s, 'latin1')).digest('hex')),
  sha256sum: fixed(['string'], (s) => createHash('sha256').update(Buffer.from(s, 'latin1')).digest('hex')),
  adler32sum: fixed(['string'], (s) => String(adler32(s))),
  toString: fixed(['any'], strval),
  atoi: fixed(['string'], (s) => { const m = /^[+-]?\d+$/.exec(s); if (!m) return 0; const n = Number(s); return Math.abs(n) < 2 ** 63 ? n : 0; }),
  int64: fixed(['any'], (v) => int64(castInt(v))),
  int: fixed(['any'], (v) => castInt(v)),
  float64: fixed(['any'], (v) => float64(castFloat(v))),
  seq: variadic([], 'int', seq),
  toDecimal: fixed(['any'], (v) => { const s = formatV(v); return int64(/^[+-]?[0-7]+$/.test(s) ? parseInt(s, 8) : 0); }),
  split: fixed(['string', 'string'], (sep, s) => partsMap(goSplit(s, sep))),
  splitList: fixed(['string', 'string'], (sep, s) => stringSlice(goSplit(s, sep))),
  splitn: fixed(['string', 'int', 'string'], (sep, n, s) => partsMap(goSplit(s, sep, n))),
  toStrings: fixed(['any'], strslice),
  until: fixed(['int'], (c) => untilStep(0, c, c < 0 ? -1 : 1)),
  untilStep: fixed(['int', 'int', 'int'], untilStep),
  // arithmetic
  add1: fixed(['any'], (i) => int64(castInt(i) + 1)),
  add: variadic([], 'any', (...i) => int64(i.reduce<number>((a, b) => a + castInt(b), 0))),
  sub: fixed(['any', 'any'], (a, b) => int64(castInt(a) - castInt(b))),
  div: fixed(['any', 'any'], (a, b) => { const d = castInt(b); if (d === 0) fail('runtime error: integer divide by zero'); return int64(Math.trunc(castInt(a) / d)); }),
  mod: fixed(['any', 'any'], (a, b) => { const d = castInt(b); if (d === 0) fail('runtime error: integer divide by zero'); return int64(castInt(a) % d); }),
  mul: variadic(['any'], 'any', (a, ...v) => int64(v.reduce<number>((x, b) => x * castInt(b), castInt(a)))),
  add1f: fixed(['any'], (i) => decimalOp(i, [1], '+')),
  addf: variadic([], 'any', (...i) => decimalOp(float64(0), i, '+')),
  subf: variadic(['any'], 'any', (a, ...v) => decimalOp(a, v, '-')),
  divf: variadic(['any'], 'any', (a, ...v) => decimalOp(a, v, '/')),
  mulf: variadic(['any'], 'any', (a, ...v) => decimalOp(a, v, '*')),
  biggest: variadic(['any'], 'any', (a, ...i) => int64(i.reduce<number>((m, b) => Math.max(m, castInt(b)), castInt(a)))),
  max: variadic(['any'], 'any', (a, ...i) => int64(i.reduce<number>((m, b) => Math.max(m, castInt(b)), castInt(a)))),
  min: variadic(['any'], 'any', (a, ...i) => int64(i.reduce<number>((m, b) => Math.min(m, castInt(b)), castInt(a)))),
  maxf: variadic(['any'], 'any', (a, ...i) => float64(i.reduce<number>((m, b) => goMaxF(m, castFloat(b)), castFloat(a)))),
  minf: variadic(['any'], 'any', (a, ...i) => float64(i.reduce<number>((m, b) => goMinF(m, castFloat(b)), castFloat(a)))),
  ceil: fixed(['any'], (a) => float64(Math.ceil(castFloat(a)))),
  floor: fixed(['any'], (a) => float64(Math.floor(castFloat(a)))),
  round: variadic(['any', 'int'], 'float64', round),
  join: fixed(['string', 'any'], (sep, v) => strslice(v).join(sep)),
  sortAlpha: fixed(['any'], (l) => (Array.isArray(l) || l instanceof Uint8Array ? stringSlice([...strslice(l)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) : stringSlice([strval(l)]))),
  // defaults and JSON
  default: variadic(['any'], 'any', (d, ...given) => (given.length === 0 || isEmpty(given[0]) ? d : given[0])),
  empty: fixed(['any'], isEmpty),
  coalesce: variadic([], 'any', (...v) => v.find((x) => !isEmpty(x)) ?? null),
  all: variadic([], 'any', (...v) => v.every((x) => !isEmpty(x))),
  any: variadic([], 'any', (...v) => v.some((x) => !isEmpty(x))),
  compact: fixed(['any'], mustList('compact on type', (l) => l.filter((x) => !isEmpty(x)))),
  mustCompact: fixed(['any'], mustList('compact on type', (l) => l.filter((x) => !isEmpty(x)))),
  fromJson: fixed(['string'], (s) => parseGoJson(s) ?? null),
  mustFromJson: fixed(['string'], (s) => { const v = parseGoJson(s); if (v === undefined) fail('invalid JSON (the input is not shown: it may be secret)'); return v; }),
  toJson: fixed(['any'], (v) => { try { return toGoJson(v); } catch { return ''; } }),
  mustToJson: fixed(['any'], (v) => toGoJson(v)),
  toPrettyJson: fixed(['any'], (v) => { try { return toGoJson(v, { indent: '  ' }); } catch { return ''; } }),
  mustToPrettyJson: fixed(['any'], (v) => toGoJson(v, { indent: '  ' })),
  toRawJson: fixed(['any'], (v) => toGoJson(v, { escapeHTML: false })),
  mustToRawJson: fixed(['any'], (v) => toGoJson(v, { escapeHTML: false })),
  ternary: fixed(['any', 'any', 'bool'], (t, f, c) => (c ? t : f)),
  deepCopy: fixed(['any'], (v) => (v === null ? fail('reflect: call of reflect.Value.Type on zero Value') : deepCopy(v))),
  mustDeepCopy: fixed(['any'], (v) => (v === null ? fail('reflect: call of reflect.Value.Type on zero Value') : deepCopy(v))),
  // reflection
  typeOf: fixed(['any'], (v) => goType(v)),
  typeIs: fixed(['string', 'any'], (t, v) => t === goType(v)),
  typeIsLike: fixed(['string', 'any'], (t, v) => { const g = goType(v); return t === g || `*${t}` === g; }),
  kindOf: fixed(['any'], (v) => kindOf(v)),
  kindIs: fixed(['string', 'any'], (t, v) => t === kindOf(v)),
  deepEqual: fixed(['any', 'any'], deepEqual),
  // paths
  base: fixed(['string'], basePath),
  dir: fixed(['string'], dirPath),
  clean: fixed(['string'], cleanPath),
  ext: fixed(['string'], extPath),
  isAbs: fixed(['string'], (p) => p.startsWith('/')),
  osBase: fixed(['string'], basePath),
  osClean: fixed(['string'], cleanPath),
  osDir: fixed(['string'], dirPath),
  osExt: fixed(['string'], extPath),
  osIsAbs: fixed(['string'], (p) => p.startsWith('/')),
  // encodings
  b64enc: fixed(['string'], (s) => Buffer.from(s, 'latin1').toString('base64')),
  b64dec: fixed(['string'], base64Decode),
  b32enc: fixed(['string'], base32Encode),
  b32dec: fixed(['string'], base32Decode),
  decryptAES: fixed(['string', 'string'], decryptAES),
  derivePassword: fixed(['uint32', 'string', 'string', 'string', 'string'], derivePassword),
  buildCustomCert: fixed(['string', 'string'], (c, k) => buildCustomCert(c, k)),
  // lists
  tuple: variadic([], 'any', (...v) => v),
  list: variadic([], 'any', (...v) => v),
  append: fixed(['any', 'any'], mustList('push on type', (l, v) => [...l, v])),
  push: fixed(['any', 'any'], mustList('push on type', (l, v) => [...l, v])),
  mustAppend: fixed(['any', 'any'], mustList('push on type', (l, v) => [...l, v])),
  mustPush: fixed(['any', 'any'], mustList('push on type', (l, v) => [...l, v])),
  prepend: fixed(['any', 'any'], mustList('prepend on type', (l, v) => [v, ...l])),
  mustPrepend: fixed(['any', 'any'], mustList('prepend on type', (l, v) => [v, ...l])),
  first: fixed(['any'], mustList('find first on type', (l) => (l.length === 0 ? null : l[0]))),
  mustFirst: fixed(['any'], mustList('find first on type', (l) => (l.length === 0 ? null : l[0]))),
  rest: fixed(['any'], mustList('find rest on type', (l) => (l.length === 0 ? nilSlice() : l.slice(1)))),
  mustRest: fixed(['any'], mustList('find rest on type', (l) => (l.length === 0 ? nilSlice() : l.slice(1)))),
  last: fixed(['any'], mustList('find last on type', (l) => (l.length === 0 ? null : l[l.length - 1]))),
  mustLast: fixed(['any'], mustList('find last on type', (l) => (l.length === 0 ? null : l[l.length - 1]))),
  initial: fixed(['any'], mustList('find initial on type', (l) => (l.length === 0 ? nilSlice() : l.slice(0, -1)))),
  mustInitial: fixed(['any'], mustList('find initial on type', (l) => (l.length === 0 ? nilSlice() : l.slice(0, -1)))),
  reverse: fixed(['any'], mustList('find reverse on type', (l) => [...l].reverse())),
  mustReverse: fixed(['any'], mustList('find reverse on type', (l) => [...l].reverse())),
  uniq: fixed(['any'], mustList('find uniq on type', uniq)),
  mustUniq: fixed(['any'], mustList('find uniq on type', uniq)),
  without: variadic(['any'], 'any', (l, ...omit) => asList(l, 'Cannot find without on type').filter((x) => !omit.some((o) => deepEqual(x, o)))),
  mustWithout: variadic(['any'], 'any', (l, ...omit) => asList(l, 'Cannot find without on type').filter((x) => !omit.some((o) => deepEqual(x, o)))),
  has: fixed(['any', 'any'], (needle, hay) => (hay === null || hay === undefined ? false : asList(hay, 'Cannot find has on type').some((x) => deepEqual(needle, x)))),
  mustHas: fixed(['any', 'any'], (needle, hay) => (hay === null || hay === undefined ? false : asList(hay, 'Cannot find has on type').some((x) => deepEqual(needle, x)))),
  slice: variadic(['any'], 'any', sliceList),
  mustSlice: variadic(['any'], 'any', sliceList),
  concat: variadic([], 'any', (...lists) => { const out = lists.flatMap((l) => (Array.isArray(l) || l instanceof Uint8Array ? asList(l, '') : fail(`Cannot concat type ${kindOf(l)} as list`))); return out.length === 0 ? nilSlice() : out; }),
  chunk: fixed(['int', 'any'], (size, l) => chunk(size, asList(l, 'Cannot chunk type'))),
  mustChunk: fixed(['int', 'any'], (size, l) => chunk(size, asList(l, 'Cannot chunk type'))),
  // dicts
  dict: variadic([], 'any', (...v) => { const d = new GoMap(); for (let i = 0; i < v.length; i += 2) d.set(strval(v[i]), i + 1 < v.length ? v[i + 1] : ''); return d; }),
  get: fixed(['map', 'string'], (d, k) => { const m = toMap(d); return m.has(k) ? m.get(k) : ''; }),
  set: fixed(['map', 'string', 'any'], (d, k, v) => { if (!(d instanceof GoMap)) fail('assignment to entry in nil map'); (d as GoMap).set(k, v); return d; }),
  unset: fixed(['map', 'string'], (d, k) => { const m = toMap(d); m.delete(k); return m; }),
  hasKey: fixed(['map', 'string'], (d, k) => toMap(d).has(k)),
  pluck: variadic(['string'], 'map', (k, ...ds) => ds.map(toMap).filter((d) => d.has(k)).map((d) => d.get(k))),
  keys: variadic([], 'map', (...ds) => stringSlice(ds.flatMap((d) => toMap(d).sortedKeys()))),
  pick: variadic(['map'], 'string', (d, ...ks) => { const m = toMap(d); return new GoMap(ks.filter((k) => m.has(k)).map((k) => [k, m.get(k)] as const)); }),
  omit: variadic(['map'], 'string', (d, ...ks) => new GoMap([...toMap(d)].filter(([k]) => !ks.includes(k)))),
  merge: variadic(['map'], 'map', (dst, ...srcs) => { const d = dst instanceof GoMap ? dst : new GoMap(); for (const src of srcs) mergeInto(d, toMap(src), false); return d; }),
  mustMerge: variadic(['map'], 'map', (dst, ...srcs) => { const d = dst instanceof GoMap ? dst : new GoMap(); for (const src of srcs) mergeInto(d, toMap(src), false); return d; }),
  mergeOverwrite: variadic(['map'], 'map', (dst, ...srcs) => { const d = dst instanceof GoMap ? dst : new GoMap(); for (const src of srcs) mergeInto(d, toMap(src), true); return d; }),
  mustMergeOverwrite: variadic(['map'], 'map', (dst, ...srcs) => { const d = dst instanceof GoMap ? dst : new GoMap(); for (const src of srcs) mergeInto(d, toMap(src), true); return d; }),
  values: fixed(['map'], (d) => toMap(d).sortedKeys().map((k) => toMap(d).get(k))),
  dig: variadic([], 'any', dig),
  // flow control
  // Neither the message nor its length (a length is secret too: it narrows a guess).
  fail: fixed(['string'], () => fail('the template called fail (its message is not shown: it may contain secret data)')),
  // regular expressions
  regexMatch: fixed(['string', 'string'], (re, s) => { const r = parse(re); return r.ok && guarded(() => r.regexp.matchGo(s)); }),
  mustRegexMatch: fixed(['string', 'string'], (re, s) => guarded(() => compile(re).matchGo(s))),
  regexFindAll: fixed(['string', 'string', 'int'], findAllStrings),
  mustRegexFindAll: fixed(['string', 'string', 'int'], findAllStrings),
  regexFind: fixed(['string', 'string'], findString),
  mustRegexFind: fixed(['string', 'string'], findString),
  regexReplaceAll: fixed(['string', 'string', 'string'], (re, s, r) => guarded(() => replaceAllStringGo(compile(re), s, r))),
  mustRegexReplaceAll: fixed(['string', 'string', 'string'], (re, s, r) => guarded(() => replaceAllStringGo(compile(re), s, r))),
  regexReplaceAllLiteral: fixed(['string', 'string', 'string'], (re, s, r) => guarded(() => replaceAllLiteralStringGo(compile(re), s, r))),
  mustRegexReplaceAllLiteral: fixed(['string', 'string', 'string'], (re, s, r) => guarded(() => replaceAllLiteralStringGo(compile(re), s, r))),
  regexSplit: fixed(['string', 'string', 'int'], split),
  mustRegexSplit: fixed(['string', 'string', 'int'], split),
  regexQuoteMeta: fixed(['string'], quoteMeta),
  // semantic versions (Masterminds/semver v3.3.1)
  semver: fixed(['string'], semverFunc),
  semverCompare: fixed(['string', 'string'], semverCompare),
  // URLs
  urlParse: fixed(['string'], urlParse),
  urlJoin: fixed(['map'], (d) => urlJoin(toMap(d))),
  // dates without the clock
  date: fixed(['string', 'any'], (layout, d) => dateInZone(layout, d, 'Local')),
  dateInZone: fixed(['string', 'any', 'string'], dateInZone),
  date_in_zone: fixed(['string', 'any', 'string'], dateInZone),
  htmlDate: fixed(['any'], (d) => dateInZone('2006-01-02', d, 'Local')),
  htmlDateInZone: fixed(['any', 'string'], (d, z) => dateInZone('2006-01-02', d, z)),
  duration: fixed(['any'], durationOf),
  durationRound: fixed(['any'], durationRound),
  toDate: fixed(['string', 'string'], (layout, s) => { const t = parseGoTime(layout, s); return typeof t === 'string' ? ZERO_TIME : t; }),
  mustToDate: fixed(['string', 'string'], (layout, s) => { const t = parseGoTime(layout, s); return typeof t === 'string' ? fail(t) : t; }),
  unixEpoch: fixed(['time'], (t) => String(Math.floor((t as GoTime).ms / 1000))),
  dateModify: fixed(['string', 'time'], (f, t) => { const d = durationNs(f); const tt = t as GoTime; return d === undefined ? tt : new GoTime(tt.ms + Math.trunc(d / 1e6), tt.zone, tt.nanos); }),
  date_modify: fixed(['string', 'time'], (f, t) => { const d = durationNs(f); const tt = t as GoTime; return d === undefined ? tt : new GoTime(tt.ms + Math.trunc(d / 1e6), tt.zone, tt.nanos); }),
  mustDateModify: fixed(['string', 'time'], (f, t) => { const d = durationNs(f); if (d === undefined) fail('time: invalid duration'); const tt = t as GoTime; return new GoTime(tt.ms + Math.trunc(d! / 1e6), tt.zone, tt.nanos); }),
  must_date_modify: fixed(['string', 'time'], (f, t) => { const d = durationNs(f); if (d === undefined) fail('time: invalid duration'); const tt = t as GoTime; return new GoTime(tt.ms + Math.trunc(d! / 1e6), tt.zone, tt.nanos); }),
};
void must;

function uniq(l: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const x of l) if (!out.some((y) => deepEqual(x, y))) out.push(x);
  return out;
}

/** strings.Replace(s, old, new, -1): an empty `old` inserts `new` around every rune. */
function goReplace(s: string, o: string, n: string): string {
  if (o === '') {
    let out = n;
    for (let i = 0; i < s.length;) {
      const w = utf8Width(s, i);
      out += s.slice(i, i + w) + n;
      i += w;
    }
    return out;
  }
  return s.split(o).join(n);
}

const goMaxF = (a: number, b: number): number => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b));
const goMinF = (a: number, b: number): number => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b));

/** json.Unmarshal into interface{}: undefined when the text is not JSON. */
export function parseGoJson(s: string): unknown {
  const t = utf8Text(s);
  try {
    return fromJsValue(JSON.parse(t));
  } catch {
    return undefined;
  }
}

export { formatFloat };
