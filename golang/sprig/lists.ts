// Sprig's list functions (list.go).
import { fail } from '../func.ts';
import { GoNum, kindOf, typedSlice, GoMap, GoTime, GoStruct, numberValue, sliceElem } from '../values.ts';
import { castInt } from './cast.ts';

/**
 * A list argument, or Sprig's refusal: `what` is its message up to the type ("Cannot find first on type",
 * "Cannot chunk type"). Nil: Sprig's reflect.TypeOf(nil).Kind() panics, and text/template's safeCall
 * reports the panic as the error, with no message of Sprig's before it.
 */
export function asList(v: unknown, what: string): unknown[] {
  if (v === null || v === undefined) return fail('runtime error: invalid memory address or nil pointer dereference');
  if (Array.isArray(v)) return v;
  if (v instanceof Uint8Array) return [...v].map((b) => new GoNum('uint8', b));
  return fail(`${what} ${kindOf(v)}`);
}

export const mustList =
  (name: string, fn: (l: unknown[], ...rest: unknown[]) => unknown) =>
  (list: unknown, ...rest: unknown[]): unknown =>
    fn(asList(list, `Cannot ${name}`), ...rest);

export function chunk(size: number, l: unknown[]): unknown[][] {
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

export function sliceList(l: unknown, ...idx: unknown[]): unknown {
  const list = asList(l, 'list should be type of slice or array but');
  if (list.length === 0) return null;
  const start = idx.length > 0 ? castInt(idx[0]) : 0;
  const end = idx.length < 2 ? list.length : castInt(idx[1]);
  if (start < 0 || end < start || end > list.length) fail('slice bounds out of range');
  const out = list.slice(start, end);
  return Array.isArray(l) ? typedSlice(out, sliceElem(l)) : out;
}
