// Template functions with the semantics of Go's text/template builtins, Sprig v3 (which ESO's engine
// v2 includes) and ESO's own additions (toYaml/fromYaml). Each mirrors its upstream's quirks where a
// user could notice them (e.g. Sprig's b64dec returns the error text instead of failing, toJson escapes
// <, > and & like Go's json.Marshal, `get` on a missing key is "").
import { createHash } from 'node:crypto';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { TemplateError } from './parse.ts';
import { goType, isMap, isTrue, printValue, type TemplateFunction } from './exec.ts';
import { compileGoRegexp, replaceAllGo } from '../go-regexp.ts';

/** Sprig's strval: strings as-is, bytes as text, anything else as %v. */
export function strval(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (v === null || v === undefined) return '<nil>';
  return printValue(v);
}

function toInt(v: unknown): number {
  if (typeof v === 'number') return Math.trunc(v);
  if (typeof v === 'string') {
    const n = Number(v.trim());
    return Number.isFinite(n) ? Math.trunc(n) : 0;
  }
  if (typeof v === 'boolean') return v ? 1 : 0;
  return 0;
}

/** Go's encoding/json: sorted map keys, HTML-safe escaping unless `raw`. */
export function goJson(v: unknown, raw = false, indent?: string): string {
  const sortKeys = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sortKeys);
    if (x instanceof Uint8Array) return Buffer.from(x).toString('base64');
    if (isMap(x)) return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sortKeys(x[k])]));
    return x === undefined ? null : x;
  };
  const text = JSON.stringify(sortKeys(v), null, indent) ?? 'null';
  const goText = text.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return raw ? goText : goText.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

function goQuote(s: string): string {
  // strconv.Quote: JSON-like, but non-printable runes as \x / \u escapes; close enough for printable text.
  return JSON.stringify(s).replace(/\\u007f/gi, '\\x7f');
}

function compare(a: unknown, b: unknown, op: string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  throw new TemplateError(`incompatible types for comparison (${op}): ${goType(a)} and ${goType(b)}`);
}

function basicEq(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a !== typeof b) throw new TemplateError(`incompatible types for comparison: ${goType(a)} and ${goType(b)}`);
  if (typeof a === 'object') throw new TemplateError(`non-comparable type ${goType(a)}`);
  return a === b;
}

function lengthOf(v: unknown): number {
  if (typeof v === 'string') return Buffer.byteLength(v, 'utf8');
  if (Array.isArray(v)) return v.length;
  if (v instanceof Uint8Array) return v.length;
  if (isMap(v)) return Object.keys(v).length;
  throw new TemplateError(`len of type ${goType(v)}`);
}

/** fmt.Sprintf for the verbs templates use: %s %v %d %q %x %X %f %e %t %%, with width/precision. */
export function sprintf(format: string, ...args: unknown[]): string {
  let argi = 0;
  return format.replace(/%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g, (_whole, flags: string, width: string | undefined, prec: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    if (argi >= args.length) return `%!${verb}(MISSING)`;
    const a = args[argi++];
    let s: string;
    switch (verb) {
      case 's': case 'v': s = verb === 's' ? strval(a) : printValue(a); if (prec !== undefined) s = [...s].slice(0, Number(prec)).join(''); break;
      case 'd': s = typeof a === 'number' ? String(Math.trunc(a)) : `%!d(${goType(a)}=${printValue(a)})`; break;
      case 'q': s = goQuote(strval(a)); break;
      case 'x': case 'X': {
        const h = typeof a === 'number' ? Math.trunc(a).toString(16) : Buffer.from(strval(a), 'utf8').toString('hex');
        s = verb === 'X' ? h.toUpperCase() : h;
        break;
      }
      case 'f': case 'F': s = typeof a === 'number' ? a.toFixed(prec === undefined ? 6 : Number(prec)) : `%!f(${goType(a)}=${printValue(a)})`; break;
      case 'e': s = typeof a === 'number' ? a.toExponential(prec === undefined ? 6 : Number(prec)).replace(/e([+-])(\d)$/, 'e$10$2') : `%!e(${goType(a)})`; break;
      case 't': s = typeof a === 'boolean' ? String(a) : `%!t(${goType(a)}=${printValue(a)})`; break;
      default: return `%!${verb}(${goType(a)}=${printValue(a)})`;
    }
    if (width !== undefined && s.length < Number(width)) {
      const pad = (flags.includes('0') && !flags.includes('-') && /[dxXfe]/.test(verb) ? '0' : ' ').repeat(Number(width) - s.length);
      s = flags.includes('-') ? s + pad : pad + s;
    }
    return s;
  });
}

const base64Std = /^[A-Za-z0-9+/]*={0,2}$/;

function b64decode(s: string): string {
  const clean = s.replace(/[\r\n]/g, '');
  if (clean.length % 4 !== 0 || !base64Std.test(clean)) return `illegal base64 data at input byte ${Math.max(0, clean.search(/[^A-Za-z0-9+/=]/))}`;
  return Buffer.from(clean, 'base64').toString('utf8');
}

function sprigTitle(s: string): string {
  return s.replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_m, pre: string, ch: string) => pre + ch.toUpperCase());
}

/** Every function vaultgate's engine implements, by name. */
export const ALL_FUNCTIONS: ReadonlyMap<string, TemplateFunction> = new Map<string, TemplateFunction>([
  // Go text/template builtins
  ['not', (a) => !isTrue(a)],
  ['len', (a) => lengthOf(a)],
  ['index', (coll, ...keys) => {
    let v = coll;
    for (const k of keys) {
      if (Array.isArray(v) || typeof v === 'string') {
        const i = toInt(k);
        if (typeof k !== 'number' || i < 0 || i >= v.length) throw new TemplateError(`index out of range: ${printValue(k)}`);
        v = Array.isArray(v) ? v[i] : Buffer.from(v)[i];
      } else if (isMap(v)) v = Object.prototype.hasOwnProperty.call(v, strval(k)) ? v[strval(k)] : null;
      else if (v === null || v === undefined) throw new TemplateError('index of untyped nil');
      else throw new TemplateError(`can't index item of type ${goType(v)}`);
    }
    return v;
  }],
  ['slice', (coll, ...idx) => {
    const [i = 0, j] = idx.map(toInt);
    if (typeof coll === 'string') return Buffer.from(coll).subarray(i, j ?? undefined).toString('utf8');
    if (Array.isArray(coll)) return (coll as unknown[]).slice(i, j ?? undefined);
    throw new TemplateError(`can't slice item of type ${goType(coll)}`);
  }],
  ['print', (...a) => a.map((x, k) => (k > 0 && typeof x !== 'string' && typeof a[k - 1] !== 'string' ? ' ' : '') + strval(x)).join('')],
  ['println', (...a) => `${a.map(strval).join(' ')}\n`],
  ['printf', (f, ...a) => sprintf(strval(f), ...a)],
  ['eq', (a, ...bs) => { if (bs.length === 0) throw new TemplateError('missing argument for comparison'); return bs.some((b) => basicEq(a, b)); }],
  ['ne', (a, b) => !basicEq(a, b)],
  ['lt', (a, b) => compare(a, b, 'lt') < 0],
  ['le', (a, b) => compare(a, b, 'le') <= 0],
  ['gt', (a, b) => compare(a, b, 'gt') > 0],
  ['ge', (a, b) => compare(a, b, 'ge') >= 0],
  // Sprig: strings
  ['upper', (s) => strval(s).toUpperCase()],
  ['lower', (s) => strval(s).toLowerCase()],
  ['title', (s) => sprigTitle(strval(s))],
  ['trim', (s) => strval(s).trim()],
  ['trimAll', (cut, s) => { const c = [...strval(cut)]; let t = strval(s); while (t && c.includes(t[0]!)) t = t.slice(1); while (t && c.includes(t[t.length - 1]!)) t = t.slice(0, -1); return t; }],
  ['trimPrefix', (p, s) => { const t = strval(s); const q = strval(p); return t.startsWith(q) ? t.slice(q.length) : t; }],
  ['trimSuffix', (p, s) => { const t = strval(s); const q = strval(p); return q && t.endsWith(q) ? t.slice(0, -q.length) : t; }],
  ['replace', (o, n, s) => strval(s).split(strval(o)).join(strval(n))],
  ['contains', (sub, s) => strval(s).includes(strval(sub))],
  ['hasPrefix', (p, s) => strval(s).startsWith(strval(p))],
  ['hasSuffix', (p, s) => strval(s).endsWith(strval(p))],
  ['repeat', (n, s) => { const c = toInt(n); if (c < 0) throw new TemplateError('negative repeat count'); if (c * strval(s).length > 1 << 20) throw new TemplateError('repeat result too large'); return strval(s).repeat(c); }],
  ['substr', (start, end, s) => { const t = strval(s); let a = toInt(start); let b = toInt(end); if (a < 0) a = 0; if (b < 0 || b > t.length) b = t.length; return a > b ? '' : t.slice(a, b); }],
  ['trunc', (n, s) => { const t = strval(s); const c = toInt(n); return c >= 0 ? t.slice(0, c) : t.slice(Math.max(0, t.length + c)); }],
  ['nospace', (s) => strval(s).replace(/\s/g, '')],
  ['quote', (...a) => a.filter((x) => x !== null && x !== undefined).map((x) => goQuote(strval(x))).join(' ')],
  ['squote', (...a) => a.filter((x) => x !== null && x !== undefined).map((x) => `'${strval(x)}'`).join(' ')],
  ['indent', (n, s) => { const pad = ' '.repeat(Math.max(0, toInt(n))); return pad + strval(s).replace(/\n/g, `\n${pad}`); }],
  ['nindent', (n, s) => { const pad = ' '.repeat(Math.max(0, toInt(n))); return `\n${pad}${strval(s).replace(/\n/g, `\n${pad}`)}`; }],
  ['splitList', (sep, s) => strval(s).split(strval(sep))],
  ['join', (sep, list) => (Array.isArray(list) ? list.map(strval) : [strval(list)]).join(strval(sep))],
  ['cat', (...a) => a.filter((x) => x !== null && x !== undefined).map(strval).join(' ')],
  // Sprig: defaults and logic
  ['default', (def, ...given) => (given.length === 0 || !isTrue(given[0]) ? def : given[0])],
  ['empty', (v) => !isTrue(v)],
  ['coalesce', (...a) => a.find((x) => isTrue(x)) ?? null],
  ['ternary', (t, f, cond) => (isTrue(cond) ? t : f)],
  // Sprig + ESO: encodings
  ['b64enc', (s) => Buffer.from(strval(s), 'utf8').toString('base64')],
  ['b64dec', (s) => b64decode(strval(s))],
  ['toString', (v) => strval(v)],
  ['toJson', (v) => goJson(v)],
  ['toRawJson', (v) => goJson(v, true)],
  ['toPrettyJson', (v) => goJson(v, false, '  ')],
  ['fromJson', (s) => { try { return JSON.parse(strval(s)) as unknown; } catch { return null; } }],
  ['mustFromJson', (s) => { try { return JSON.parse(strval(s)) as unknown; } catch (e) { throw new TemplateError(`invalid JSON: ${(e as Error).message}`); } }],
  ['toYaml', (v) => stringifyYaml(v ?? null).replace(/\n$/, '')],
  ['fromYaml', (s) => { try { return parseYaml(strval(s)) as unknown; } catch (e) { throw new TemplateError(`invalid YAML: ${(e as Error).message.split('\n')[0]}`); } }],
  ['sha1sum', (s) => createHash('sha1').update(strval(s)).digest('hex')],
  ['sha256sum', (s) => createHash('sha256').update(strval(s)).digest('hex')],
  ['atoi', (s) => { const n = Number.parseInt(strval(s), 10); return Number.isNaN(n) ? 0 : n; }],
  ['int', (v) => toInt(v)],
  // Sprig: lists and dicts
  ['list', (...a) => a],
  ['dict', (...a) => { const d: Record<string, unknown> = {}; for (let i = 0; i < a.length; i += 2) d[strval(a[i])] = i + 1 < a.length ? a[i + 1] : ''; return d; }],
  ['get', (d, k) => (isMap(d) && Object.prototype.hasOwnProperty.call(d, strval(k)) ? d[strval(k)] : '')],
  ['hasKey', (d, k) => isMap(d) && Object.prototype.hasOwnProperty.call(d, strval(k))],
  ['keys', (...ds) => ds.flatMap((d) => (isMap(d) ? Object.keys(d) : []))],
  ['first', (l) => (Array.isArray(l) && l.length > 0 ? (l as unknown[])[0] : null)],
  ['last', (l) => (Array.isArray(l) && l.length > 0 ? (l as unknown[])[l.length - 1] : null)],
  // Sprig: regular expressions (Go RE2 syntax, translated)
  ['regexMatch', (re, s) => compileGoRegexp(strval(re)).test(strval(s))],
  ['regexFind', (re, s) => compileGoRegexp(strval(re)).exec(strval(s))?.[0] ?? ''],
  ['regexReplaceAll', (re, s, repl) => replaceAllGo(compileGoRegexp(strval(re)), strval(s), strval(repl))],
  ['regexReplaceAllLiteral', (re, s, repl) => strval(s).replace(compileGoRegexp(strval(re), 'g'), () => strval(repl))],
]);
