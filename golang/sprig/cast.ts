// Sprig's conversions (strval, strslice; spf13/cast 1.7.1 as ESO v0.16.2 builds it).
import { formatV } from '../fmt.ts';
import { fitsInt64, parseGoInt } from '../strconv.ts';
import { stringSlice, sliceElem, numberValue } from '../values.ts';

/** Sprig's strval: strings as-is, bytes as a string, Stringers by String(), anything else as %v. */
export function strval(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('latin1');
  return formatV(v);
}

/** Sprig's strslice: a list's non-nil elements as strings, nil as no element, anything else as one. */
export function strslice(v: unknown): string[] {
  if (Array.isArray(v))
    return stringSlice(
      sliceElem(v) === 'string' ? [...(v as string[])] : v.filter((x) => x !== null && x !== undefined).map(strval),
    );
  if (v instanceof Uint8Array) return stringSlice([...v].map((b) => String(b)));
  if (v === null || v === undefined) return stringSlice([]);
  return stringSlice([strval(v)]);
}

/** cast's trimZeroDecimal: "1.00" → "1". */
function trimZeroDecimal(s: string): string {
  let foundZero = false;
  for (let i = s.length; i > 0; i--) {
    const c = s[i - 1];
    if (c === '.') {
      if (foundZero) return s.slice(0, i - 1);
    } else if (c === '0') foundZero = true;
    else return s;
  }
  return s;
}

/** strconv.ParseInt(s, 0, 64) or undefined. */
function parseIntBase0(s: string): number | undefined {
  const v = parseGoInt(s);
  return v !== undefined && fitsInt64(v) ? Number(v) : undefined;
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
    if (
      /^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|[Ii]nf(inity)?|NaN|nan)$/.test(v) ||
      /^[+-]?0[xX]/.test(v)
    ) {
      const x = /inf/i.test(t) ? (t.startsWith('-') ? -Infinity : Infinity) : /nan/i.test(t) ? NaN : Number(t);
      return Number.isNaN(x) && !/nan/i.test(t) ? 0 : x;
    }
    return 0;
  }
  return numberValue(v) ?? 0;
}
