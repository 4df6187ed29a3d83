// text/template's builtin functions (text/template/funcs.go): not len index print printf println eq ne
// lt le gt ge html js urlquery call (and/or are evaluated lazily by the executor; `slice` is Sprig's,
// which replaces Go's in ESO's function map). Index errors use Go's words but never the index value:
// it could be derived from a secret.
import { formatV, sprint, sprintf, sprintln } from '../fmt.ts';
import { fail, fixed, variadic, type FuncTable } from '../func.ts';
import {
  GoMap,
  GoNum,
  GoStruct,
  GoTime,
  deepEqual,
  goType,
  isIntKind,
  isTrue,
  isUintKind,
  kindOf,
  mapRunes,
  numberValue,
  type Kind,
} from '../values.ts';

type BasicKind = 'invalid' | 'bool' | 'int' | 'uint' | 'float' | 'string';

function basicKind(v: unknown): BasicKind {
  const k: Kind = kindOf(v);
  if (k === 'bool') return 'bool';
  if (isIntKind(k)) return 'int';
  if (isUintKind(k)) return 'uint';
  if (k === 'float64') return 'float';
  if (k === 'string') return 'string';
  return 'invalid';
}

const isNilValue = (v: unknown): boolean => v === null || v === undefined;

export function goEq(a: unknown, ...bs: unknown[]): boolean {
  if (bs.length === 0) fail('missing argument for comparison');
  const k1 = basicKind(a);
  for (const b of bs) {
    const k2 = basicKind(b);
    let truth = false;
    if (k1 !== k2) {
      if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) truth = numberValue(a) === numberValue(b);
      else if (!isNilValue(a) && !isNilValue(b))
        fail(`incompatible types for comparison: ${goType(a)} and ${goType(b)}`);
    } else if (k1 === 'invalid') {
      if (isNilValue(a) || isNilValue(b)) truth = isNilValue(a) === isNilValue(b);
      else if (a instanceof GoTime && b instanceof GoTime)
        truth = a.ms === b.ms && a.nanos === b.nanos && a.zone.name === b.zone.name;
      else if (goType(a) !== goType(b)) fail(`incompatible types for comparison: ${goType(a)} and ${goType(b)}`);
      else if (!(a instanceof GoStruct)) fail(`non-comparable type ${goType(b)}`);
      else
        truth =
          a === b ||
          (!a.options.pointer &&
            a.options.key !== undefined &&
            a.options.key === (b as GoStruct).options.key &&
            deepEqual(a, b));
    } else if (k1 === 'string' || k1 === 'bool') truth = a === b;
    else truth = numberValue(a) === numberValue(b);
    if (truth) return true;
  }
  return false;
}

export function goLt(a: unknown, b: unknown): boolean {
  const k1 = basicKind(a);
  const k2 = basicKind(b);
  if (k1 === 'invalid' || k2 === 'invalid') fail('invalid type for comparison');
  if (k1 !== k2) {
    if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) return numberValue(a)! < numberValue(b)!;
    fail(`incompatible types for comparison: ${goType(a)} and ${goType(b)}`);
  }
  if (k1 === 'bool') fail('invalid type for comparison');
  if (k1 === 'string') return (a as string) < (b as string);
  return numberValue(a)! < numberValue(b)!;
}

const goLe = (a: unknown, b: unknown): boolean => goLt(a, b) || goEq(a, b);

function indexArg(i: unknown, cap: number): number {
  const k = kindOf(i);
  if (k === 'invalid') fail('cannot index slice/array with nil');
  if (!isIntKind(k) && !isUintKind(k)) fail(`cannot index slice/array with type ${goType(i)}`);
  const x = numberValue(i)!;
  if (x < 0 || x > cap) fail('index out of range');
  return x;
}

function goIndex(item: unknown, ...indexes: unknown[]): unknown {
  if (isNilValue(item)) fail('index of untyped nil');
  let v = item;
  for (const index of indexes) {
    if (isNilValue(v)) fail('index of nil pointer');
    if (typeof v === 'string' || Array.isArray(v) || v instanceof Uint8Array) {
      const len = v.length;
      const x = indexArg(index, len);
      if (x === len) fail('index out of range');
      v =
        typeof v === 'string'
          ? new GoNum('uint8', v.charCodeAt(x))
          : v instanceof Uint8Array
            ? new GoNum('uint8', v[x]!)
            : (v as unknown[])[x];
    } else if (v instanceof GoMap) {
      if (isNilValue(index))
        v = v.elem === 'string' ? '' : null; // prepareArg: nil becomes the key type's zero value
      else if (typeof index !== 'string') fail(`value has type ${goType(index)}; should be string`);
      else v = v.has(index) ? v.get(index) : v.elem === 'string' ? '' : null;
    } else fail(`can't index item of type ${goType(v)}`);
  }
  return v;
}

function lengthOf(v: unknown): number {
  if (typeof v === 'string' || Array.isArray(v) || v instanceof Uint8Array) return v.length;
  if (v instanceof GoMap) return v.size;
  if (isNilValue(v)) fail('len of nil pointer');
  return fail(`len of type ${goType(v)}`);
}

/** The text an escaper works on: its one string argument, else fmt.Sprint of all. */
function evalArgs(args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  // printableValue: a missing value prints as "<no value>" (a string operand for Sprint's spacing).
  return sprint(args.map((a) => (a === null || a === undefined ? '<no value>' : a)));
}

function htmlEscape(s: string): string {
  return s.replace(
    /[\0"'&<>]/g,
    (c) => ({ '\0': '\xef\xbf\xbd', '"': '&#34;', "'": '&#39;', '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!,
  );
}

function jsEscape(s: string): string {
  return mapRunes(s, (r, c) => {
    if (r < 0x80) {
      switch (c) {
        case '\\':
          return '\\\\';
        case "'":
          return "\\'";
        case '"':
          return '\\"';
        case '<':
          return '\\u003C';
        case '>':
          return '\\u003E';
        case '&':
          return '\\u0026';
        case '=':
          return '\\u003D';
      }
      return r < 0x20 || r === 0x7f ? `\\u${r.toString(16).toUpperCase().padStart(4, '0')}` : c;
    }
    // unicode.IsPrint keeps the rune; others are \uXXXX.
    return /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(String.fromCodePoint(r))
      ? c
      : `\\u${r.toString(16).toUpperCase().padStart(4, '0')}`;
  });
}

/** url.QueryEscape. */
export function queryEscape(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${s.charCodeAt(i).toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export const GO_BUILTINS: FuncTable = {
  not: fixed(['value'], (a) => !isTrue(a)),
  len: fixed(['value'], (a) => lengthOf(a)),
  index: variadic(['value'], 'value', (item, ...idx) => goIndex(item, ...idx)),
  print: variadic([], 'any', (...a) => sprint(a)),
  printf: variadic(['string'], 'any', (f, ...a) => sprintf(f, a)),
  println: variadic([], 'any', (...a) => sprintln(a)),
  eq: variadic(['value'], 'value', (a, ...b) => goEq(a, ...b)),
  ne: fixed(['value', 'value'], (a, b) => !goEq(a, b)),
  lt: fixed(['value', 'value'], (a, b) => goLt(a, b)),
  le: fixed(['value', 'value'], (a, b) => goLe(a, b)),
  gt: fixed(['value', 'value'], (a, b) => !goLe(a, b)),
  ge: fixed(['value', 'value'], (a, b) => !goLt(a, b)),
  html: variadic([], 'any', (...a) => htmlEscape(evalArgs(a))),
  js: variadic([], 'any', (...a) => jsEscape(evalArgs(a))),
  urlquery: variadic([], 'any', (...a) => queryEscape(evalArgs(a))),
  // Template data holds no function values, so call always fails, as it would in ESO.
  call: variadic(['value'], 'value', (fn) =>
    fail(isNilValue(fn) ? 'call of nil' : `non-function of type ${goType(fn)}`),
  ),
};

export { formatV };
