// Go values as vaultgate's template engine holds them, so that printing, comparing, `typeOf` and JSON
// come out as Go's text/template (with Sprig) gives them:
// - a Go string is a JS string of bytes: one char per byte (0–255), as Go strings are bytes. Binary data
//   (`b64dec` of a keystore) survives byte for byte; functions that work on runes decode it (utf8Text).
// - bool → boolean; Go `int` → a JS integer number; other numeric types (float64 from JSON, int64 from
//   Sprig's arithmetic, uint8 from indexing a string) → GoNum, because Go prints and compares them
//   differently (float64 1234567 prints `1.234567e+06`).
// - nil → null; maps → GoMap (string keys, Go's sorted iteration); slices → arrays, typed `[]string` /
//   `[]int` ones tagged (typeOf tells them apart); []byte → Uint8Array; time.Time → GoTime.

import type { GoFunc } from './func.ts';

export type NumKind = 'int64' | 'float64' | 'uint8' | 'int32' | 'uint64';

export class GoNum {
  constructor(
    readonly kind: NumKind,
    readonly value: number,
  ) {}
}

/** Go's map with string keys. `elem` is its value type: `string` for ESO's data (map[string]string). */
export class GoMap extends Map<string, unknown> {
  constructor(
    entries?: Iterable<readonly [string, unknown]>,
    readonly elem: 'string' | 'interface {}' = 'interface {}',
  ) {
    super(entries);
  }
  sortedKeys(): string[] {
    return [...this.keys()].sort(compareBytes);
  }
}

/** time.Time (UTC milliseconds plus nanoseconds below them) and its zone, as Sprig's date functions use. */
export class GoTime {
  constructor(
    readonly ms: number,
    readonly zone: { name: string; offsetSeconds: number } = { name: 'UTC', offsetSeconds: 0 },
    readonly nanos = 0,
  ) {}
}

/** time.Duration in nanoseconds (Sprig's duration/durationRound return strings; dateModify needs it). */
export class GoDuration {
  constructor(readonly ns: number) {}
}

export interface GoStructOptions {
  /** A pointer to the struct (*semver.Version): kind `ptr`, == compares identity. */
  pointer?: boolean;
  /** What its MarshalJSON gives, as a template value (encoding/json and toYaml use it). */
  json?: () => unknown;
  /** Its fields as one comparable text: == of two struct values and reflect.DeepEqual compare it. */
  key?: string;
}

/**
 * A value Go calls a struct with exported fields and methods (Sprig's semver.Version, certificate).
 * A method is a function of no arguments, or a GoFunc (its parameters checked as a function's are).
 */
export class GoStruct {
  constructor(
    readonly typeName: string,
    readonly fields: ReadonlyMap<string, unknown>,
    readonly methods: ReadonlyMap<string, (() => unknown) | GoFunc> = new Map(),
    readonly options: GoStructOptions = {},
  ) {}
}

const sliceTypes = new WeakMap<object, string>();

/** Tag an array with its Go element type (`string`, `int`, `[]interface {}` …); untagged = interface {}. */
export function typedSlice<T extends unknown[]>(a: T, elem: string): T {
  sliceTypes.set(a, elem);
  return a;
}
export function sliceElem(a: readonly unknown[]): string {
  return sliceTypes.get(a) ?? 'interface {}';
}
export const stringSlice = (a: string[]): string[] => typedSlice(a, 'string');

const nilSlices = new WeakSet<object>();
/** A nil slice ([]interface{}(nil)): prints `[]` but is `null` in JSON, as Go's. */
export function nilSlice(elem = 'interface {}'): unknown[] {
  const a = typedSlice([] as unknown[], elem);
  nilSlices.add(a);
  return a;
}
export const isNilSlice = (v: unknown): boolean => Array.isArray(v) && nilSlices.has(v);

export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0; // byte strings: UTF-16 code units are bytes, so this is Go's order
}

// ---- strings as bytes ----

/** A JS (UTF-16) text as a Go string (its UTF-8 bytes). */
export function goString(text: string): string {
  // Pure ASCII is its own encoding; skip the Buffer round trip.

  if (/^[\x00-\x7f]*$/.test(text)) return text;
  return Buffer.from(text, 'utf8').toString('latin1');
}
export function bytesToGoString(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
}
export function goStringBytes(s: string): Buffer {
  return Buffer.from(s, 'latin1');
}

/**
 * A Go string's text, decoded as Go decodes UTF-8: each byte of an invalid sequence becomes one U+FFFD
 * (utf8.DecodeRuneInString), which is also what Go's string functions write back for it.
 */
export function utf8Text(s: string): string {
  if (/^[\x00-\x7f]*$/.test(s)) return s;
  return goRunes(s)
    .map((r) => String.fromCodePoint(r))
    .join('');
}

/** The runes of a Go string (utf8.DecodeRuneInString, invalid bytes → U+FFFD one by one). */
export function goRunes(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length;) {
    const [r, w] = decodeRune(s, i);
    out.push(r);
    i += w;
  }
  return out;
}

/** Each rune of a Go string (r: the rune, U+FFFD for an invalid byte; c: its bytes), mapped and joined. */
export function mapRunes(s: string, fn: (r: number, c: string) => string): string {
  let out = '';
  for (let i = 0; i < s.length;) {
    const [r, w] = decodeRune(s, i);
    out += fn(r, s.slice(i, i + w));
    i += w;
  }
  return out;
}

export function decodeRune(s: string, i: number): [number, number] {
  const b0 = s.charCodeAt(i);
  if (b0 < 0x80) return [b0, 1];
  const cont = (k: number): number => {
    const b = s.charCodeAt(i + k);
    return b >= 0x80 && b <= 0xbf ? b & 0x3f : -1;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    const c1 = cont(1);
    if (c1 >= 0) return [((b0 & 0x1f) << 6) | c1, 2];
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    const b1 = s.charCodeAt(i + 1);
    const okFirst =
      b0 === 0xe0 ? b1 >= 0xa0 && b1 <= 0xbf : b0 === 0xed ? b1 >= 0x80 && b1 <= 0x9f : b1 >= 0x80 && b1 <= 0xbf;
    const c2 = cont(2);
    if (okFirst && c2 >= 0) return [((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | c2, 3];
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    const b1 = s.charCodeAt(i + 1);
    const okFirst =
      b0 === 0xf0 ? b1 >= 0x90 && b1 <= 0xbf : b0 === 0xf4 ? b1 >= 0x80 && b1 <= 0x8f : b1 >= 0x80 && b1 <= 0xbf;
    const c2 = cont(2);
    const c3 = cont(3);
    if (okFirst && c2 >= 0 && c3 >= 0) return [((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | (c2 << 6) | c3, 4];
  }
  return [0xfffd, 1];
}

/** Apply a text function to a Go string: decode, run, encode (what Go's rune-wise functions do). */
export function mapText(s: string, fn: (text: string) => string): string {
  return goString(fn(utf8Text(s)));
}

// ---- kinds and types ----

export function isMap(v: unknown): v is GoMap {
  return v instanceof GoMap;
}

export type Kind =
  | 'invalid'
  | 'bool'
  | 'int'
  | 'int64'
  | 'int32'
  | 'uint8'
  | 'uint64'
  | 'float64'
  | 'string'
  | 'slice'
  | 'map'
  | 'struct'
  | 'ptr';

/** reflect's view of a value: its Kind (Sprig's kindOf) and its Type's String() (Sprig's typeOf, fmt's
 *  %T, text/template's error texts). */
function reflectOf(v: unknown): readonly [Kind, string] {
  if (v === null || v === undefined) return ['invalid', '<nil>'];
  if (typeof v === 'string') return ['string', 'string'];
  if (typeof v === 'boolean') return ['bool', 'bool'];
  if (typeof v === 'number') return ['int', 'int'];
  if (v instanceof GoNum) return [v.kind, v.kind];
  if (v instanceof Uint8Array) return ['slice', '[]uint8'];
  if (Array.isArray(v)) return ['slice', `[]${sliceElem(v)}`];
  if (v instanceof GoMap) return ['map', `map[string]${v.elem}`];
  if (v instanceof GoStruct) return [v.options.pointer ? 'ptr' : 'struct', v.typeName];
  if (v instanceof GoTime) return ['struct', 'time.Time'];
  if (v instanceof GoDuration) return ['int64', 'time.Duration'];
  return ['invalid', 'interface {}'];
}

export const kindOf = (v: unknown): Kind => reflectOf(v)[0];
export const goType = (v: unknown): string => reflectOf(v)[1];

/** A numeric value as a JS number, or undefined if `v` is not a number. */
export function numberValue(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (v instanceof GoNum) return v.value;
  if (v instanceof GoDuration) return v.ns;
  return undefined;
}

export const isIntKind = (k: Kind): boolean => k === 'int' || k === 'int64' || k === 'int32';
export const isUintKind = (k: Kind): boolean => k === 'uint8' || k === 'uint64';

export const float64 = (n: number): GoNum => new GoNum('float64', n);
export const int64 = (n: number): GoNum => new GoNum('int64', Math.trunc(n));

/** Go's template truth (text/template isTrue). */
export function isTrue(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length > 0;
  if (v instanceof GoMap) return v.size > 0;
  const n = numberValue(v);
  if (n !== undefined) return n !== 0;
  return true; // structs
}

/** Deep copy of maps and slices (Sprig's deepCopy, merge's copies). */
export function deepCopy(v: unknown): unknown {
  if (Array.isArray(v)) return typedSlice(v.map(deepCopy), sliceElem(v));
  if (v instanceof GoMap)
    return new GoMap(
      [...v].map(([k, x]) => [k, deepCopy(x)] as const),
      v.elem,
    );
  if (v instanceof Uint8Array) return new Uint8Array(v);
  return v;
}

/** reflect.DeepEqual for template values. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (goType(a) !== goType(b)) return false;
  if (a instanceof GoNum && b instanceof GoNum) return a.value === b.value;
  if (Array.isArray(a) && Array.isArray(b))
    return isNilSlice(a) === isNilSlice(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) === 0;
  if (a instanceof GoMap && b instanceof GoMap)
    return a.size === b.size && [...a].every(([k, x]) => b.has(k) && deepEqual(x, b.get(k)));
  if (a instanceof GoTime && b instanceof GoTime)
    return a.ms === b.ms && a.nanos === b.nanos && a.zone.name === b.zone.name;
  if (a instanceof GoStruct && b instanceof GoStruct)
    return (
      a.options.key !== undefined &&
      a.options.key === b.options.key &&
      deepEqual(new GoMap([...a.fields]), new GoMap([...b.fields]))
    );
  return false;
}

/** Template data as ESO passes it: the secret's keys and values as Go's map[string]string. */
export function goStringMap(data: Iterable<readonly [string, string | Uint8Array]>): GoMap {
  const m = new GoMap(undefined, 'string');
  for (const [k, v] of data) m.set(goString(k), typeof v === 'string' ? goString(v) : bytesToGoString(v));
  return m;
}

/** A JSON-decoded value (JSON.parse of Go-string text) as Go's encoding/json gives it to templates. */
export function fromJsValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return goString(v);
  if (typeof v === 'number') return float64(v);
  if (typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(fromJsValue);
  if (typeof v === 'object')
    return new GoMap(
      Object.entries(v as Record<string, unknown>).map(([k, x]) => [goString(k), fromJsValue(x)] as const),
    );
  return null;
}
