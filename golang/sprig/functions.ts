// Sprig v3 (ESO's fork github.com/external-secrets/sprig/v3 v3.3.0, with spf13/cast 1.7.1 and
// Masterminds/goutils 1.1.1 as ESO v0.16.2 builds it) for the functions that give the same output for
// the same input. Each mirrors the Go source, quirks included: b64dec returns the error text, `get` of
// a missing key is "", `nospace`/`initials` work byte by byte, `substr` out of range panics (an error),
// `first nil` panics. Errors never quote an argument.
import { createHash } from 'node:crypto';
import { goQuote, formatV } from '../fmt.ts';
import { type FuncTable, fixed, variadic, fail } from '../func.ts';
import { toGoJson } from '../marshal.ts';
import { replaceAllStringGo, replaceAllLiteralStringGo, quoteMeta } from '../regexp.ts';
import { parseGoTime, ZERO_TIME } from '../time.ts';
import {
  int64,
  float64,
  stringSlice,
  deepCopy,
  goType,
  kindOf,
  deepEqual,
  nilSlice,
  GoMap,
  GoTime,
  utf8Text,
  fromJsValue,
} from '../values.ts';
import { strval, castInt, castFloat, strslice } from './cast.ts';
import { buildCustomCert } from './cert.ts';
import { dateInZone, durationOf, durationRound, durationNs } from './dates.ts';
import { toMap, mergeInto, dig } from './dicts.ts';
import { adler32, base64Decode, base32Encode, base32Decode, decryptAES } from './encoding.ts';
import { isEmpty, mustList, asList, sliceList, chunk } from './lists.ts';
import { seq, untilStep, decimalOp, round } from './numbers.ts';
import { derivePassword } from './password.ts';
import { basePath, dirPath, cleanPath, extPath } from './paths.ts';
import { parse, guarded, compile, findAllStrings, findString, split } from './regex.ts';
import { semverFunc, semverCompare } from './semver.ts';
import {
  abbreviateFull,
  trunc,
  trimSpace,
  goUpper,
  goLower,
  goTitle,
  uncapitalize,
  substring,
  repeat,
  trimCutset,
  deleteWhiteSpace,
  initials,
  swapCase,
  toSnakeCase,
  toCamelCase,
  toKebabCase,
  wrapCustom,
  partsMap,
  goSplit,
  utf8Width,
} from './strings.ts';
import { urlParse, urlJoin } from './urls.ts';

const must = <T>(name: string, fn: T): T => fn;

const FUNCTIONS: FuncTable = {
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
  quote: variadic([], 'any', (...a) =>
    a
      .filter((x) => x !== null && x !== undefined)
      .map((x) => goQuote(strval(x)))
      .join(' '),
  ),
  squote: variadic([], 'any', (...a) =>
    a
      .filter((x) => x !== null && x !== undefined)
      .map((x) => `'${formatV(x)}'`)
      .join(' '),
  ),
  cat: variadic([], 'any', (...a) =>
    a
      .filter((x) => x !== null && x !== undefined)
      .map((x) => formatV(x))
      .join(' '),
  ),
  indent: fixed(['int', 'string'], (n, s) => {
    const pad = repeat(n, ' ');
    return pad + s.split('\n').join(`\n${pad}`);
  }),
  nindent: fixed(['int', 'string'], (n, s) => {
    const pad = repeat(n, ' ');
    return `\n${pad}${s.split('\n').join(`\n${pad}`)}`;
  }),
  replace: fixed(['string', 'string', 'string'], (o, n, s) => goReplace(s, o, n)),
  plural: fixed(['string', 'string', 'int'], (one, many, c) => (c === 1 ? one : many)),
  sha1sum: fixed(['string'], (s) => createHash('sha1').update(Buffer.from(s, 'latin1')).digest('hex')),
  sha256sum: fixed(['string'], (s) => createHash('sha256').update(Buffer.from(s, 'latin1')).digest('hex')),
  adler32sum: fixed(['string'], (s) => String(adler32(s))),
  toString: fixed(['any'], strval),
  atoi: fixed(['string'], (s) => {
    const m = /^[+-]?\d+$/.exec(s);
    if (!m) return 0;
    const n = Number(s);
    return Math.abs(n) < 2 ** 63 ? n : 0;
  }),
  int64: fixed(['any'], (v) => int64(castInt(v))),
  int: fixed(['any'], (v) => castInt(v)),
  float64: fixed(['any'], (v) => float64(castFloat(v))),
  seq: variadic([], 'int', seq),
  toDecimal: fixed(['any'], (v) => {
    const s = formatV(v);
    return int64(/^[+-]?[0-7]+$/.test(s) ? parseInt(s, 8) : 0);
  }),
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
  div: fixed(['any', 'any'], (a, b) => {
    const d = castInt(b);
    if (d === 0) fail('runtime error: integer divide by zero');
    return int64(Math.trunc(castInt(a) / d));
  }),
  mod: fixed(['any', 'any'], (a, b) => {
    const d = castInt(b);
    if (d === 0) fail('runtime error: integer divide by zero');
    return int64(castInt(a) % d);
  }),
  mul: variadic(['any'], 'any', (a, ...v) => int64(v.reduce<number>((x, b) => x * castInt(b), castInt(a)))),
  add1f: fixed(['any'], (i) => decimalOp(i, [1], '+')),
  addf: variadic([], 'any', (...i) => decimalOp(float64(0), i, '+')),
  subf: variadic(['any'], 'any', (a, ...v) => decimalOp(a, v, '-')),
  divf: variadic(['any'], 'any', (a, ...v) => decimalOp(a, v, '/')),
  mulf: variadic(['any'], 'any', (a, ...v) => decimalOp(a, v, '*')),
  biggest: variadic(['any'], 'any', (a, ...i) =>
    int64(i.reduce<number>((m, b) => Math.max(m, castInt(b)), castInt(a))),
  ),
  max: variadic(['any'], 'any', (a, ...i) => int64(i.reduce<number>((m, b) => Math.max(m, castInt(b)), castInt(a)))),
  min: variadic(['any'], 'any', (a, ...i) => int64(i.reduce<number>((m, b) => Math.min(m, castInt(b)), castInt(a)))),
  maxf: variadic(['any'], 'any', (a, ...i) =>
    float64(i.reduce<number>((m, b) => goMaxF(m, castFloat(b)), castFloat(a))),
  ),
  minf: variadic(['any'], 'any', (a, ...i) =>
    float64(i.reduce<number>((m, b) => goMinF(m, castFloat(b)), castFloat(a))),
  ),
  ceil: fixed(['any'], (a) => float64(Math.ceil(castFloat(a)))),
  floor: fixed(['any'], (a) => float64(Math.floor(castFloat(a)))),
  round: variadic(['any', 'int'], 'float64', round),
  join: fixed(['string', 'any'], (sep, v) => strslice(v).join(sep)),
  sortAlpha: fixed(['any'], (l) =>
    Array.isArray(l) || l instanceof Uint8Array
      ? stringSlice([...strslice(l)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
      : stringSlice([strval(l)]),
  ),
  // defaults and JSON
  default: variadic(['any'], 'any', (d, ...given) => (given.length === 0 || isEmpty(given[0]) ? d : given[0])),
  empty: fixed(['any'], isEmpty),
  coalesce: variadic([], 'any', (...v) => v.find((x) => !isEmpty(x)) ?? null),
  all: variadic([], 'any', (...v) => v.every((x) => !isEmpty(x))),
  any: variadic([], 'any', (...v) => v.some((x) => !isEmpty(x))),
  compact: fixed(
    ['any'],
    mustList('compact on type', (l) => l.filter((x) => !isEmpty(x))),
  ),
  fromJson: fixed(['string'], (s) => parseGoJson(s) ?? null),
  mustFromJson: fixed(['string'], (s) => {
    const v = parseGoJson(s);
    if (v === undefined) fail('invalid JSON (the input is not shown: it may be secret)');
    return v;
  }),
  toJson: fixed(['any'], (v) => {
    try {
      return toGoJson(v);
    } catch {
      return '';
    }
  }),
  mustToJson: fixed(['any'], (v) => toGoJson(v)),
  toPrettyJson: fixed(['any'], (v) => {
    try {
      return toGoJson(v, { indent: '  ' });
    } catch {
      return '';
    }
  }),
  mustToPrettyJson: fixed(['any'], (v) => toGoJson(v, { indent: '  ' })),
  toRawJson: fixed(['any'], (v) => toGoJson(v, { escapeHTML: false })),
  ternary: fixed(['any', 'any', 'bool'], (t, f, c) => (c ? t : f)),
  deepCopy: fixed(['any'], (v) =>
    v === null ? fail('reflect: call of reflect.Value.Type on zero Value') : deepCopy(v),
  ),
  // reflection
  typeOf: fixed(['any'], (v) => goType(v)),
  typeIs: fixed(['string', 'any'], (t, v) => t === goType(v)),
  typeIsLike: fixed(['string', 'any'], (t, v) => {
    const g = goType(v);
    return t === g || `*${t}` === g;
  }),
  kindOf: fixed(['any'], (v) => kindOf(v)),
  kindIs: fixed(['string', 'any'], (t, v) => t === kindOf(v)),
  deepEqual: fixed(['any', 'any'], deepEqual),
  // paths
  base: fixed(['string'], basePath),
  dir: fixed(['string'], dirPath),
  clean: fixed(['string'], cleanPath),
  ext: fixed(['string'], extPath),
  isAbs: fixed(['string'], (p) => p.startsWith('/')),
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
  append: fixed(
    ['any', 'any'],
    mustList('push on type', (l, v) => [...l, v]),
  ),
  prepend: fixed(
    ['any', 'any'],
    mustList('prepend on type', (l, v) => [v, ...l]),
  ),
  first: fixed(
    ['any'],
    mustList('find first on type', (l) => (l.length === 0 ? null : l[0])),
  ),
  rest: fixed(
    ['any'],
    mustList('find rest on type', (l) => (l.length === 0 ? nilSlice() : l.slice(1))),
  ),
  last: fixed(
    ['any'],
    mustList('find last on type', (l) => (l.length === 0 ? null : l[l.length - 1])),
  ),
  initial: fixed(
    ['any'],
    mustList('find initial on type', (l) => (l.length === 0 ? nilSlice() : l.slice(0, -1))),
  ),
  reverse: fixed(
    ['any'],
    mustList('find reverse on type', (l) => [...l].reverse()),
  ),
  uniq: fixed(['any'], mustList('find uniq on type', uniq)),
  without: variadic(['any'], 'any', (l, ...omit) =>
    asList(l, 'Cannot find without on type').filter((x) => !omit.some((o) => deepEqual(x, o))),
  ),
  has: fixed(['any', 'any'], (needle, hay) =>
    hay === null || hay === undefined
      ? false
      : asList(hay, 'Cannot find has on type').some((x) => deepEqual(needle, x)),
  ),
  slice: variadic(['any'], 'any', sliceList),
  concat: variadic([], 'any', (...lists) => {
    const out = lists.flatMap((l) =>
      Array.isArray(l) || l instanceof Uint8Array ? asList(l, '') : fail(`Cannot concat type ${kindOf(l)} as list`),
    );
    return out.length === 0 ? nilSlice() : out;
  }),
  chunk: fixed(['int', 'any'], (size, l) => chunk(size, asList(l, 'Cannot chunk type'))),
  // dicts
  dict: variadic([], 'any', (...v) => {
    const d = new GoMap();
    for (let i = 0; i < v.length; i += 2) d.set(strval(v[i]), i + 1 < v.length ? v[i + 1] : '');
    return d;
  }),
  get: fixed(['map', 'string'], (d, k) => {
    const m = toMap(d);
    return m.has(k) ? m.get(k) : '';
  }),
  set: fixed(['map', 'string', 'any'], (d, k, v) => {
    if (!(d instanceof GoMap)) fail('assignment to entry in nil map');
    (d as GoMap).set(k, v);
    return d;
  }),
  unset: fixed(['map', 'string'], (d, k) => {
    const m = toMap(d);
    m.delete(k);
    return m;
  }),
  hasKey: fixed(['map', 'string'], (d, k) => toMap(d).has(k)),
  pluck: variadic(['string'], 'map', (k, ...ds) =>
    ds
      .map(toMap)
      .filter((d) => d.has(k))
      .map((d) => d.get(k)),
  ),
  keys: variadic([], 'map', (...ds) => stringSlice(ds.flatMap((d) => toMap(d).sortedKeys()))),
  pick: variadic(['map'], 'string', (d, ...ks) => {
    const m = toMap(d);
    return new GoMap(ks.filter((k) => m.has(k)).map((k) => [k, m.get(k)] as const));
  }),
  omit: variadic(['map'], 'string', (d, ...ks) => new GoMap([...toMap(d)].filter(([k]) => !ks.includes(k)))),
  merge: variadic(['map'], 'map', (dst, ...srcs) => {
    const d = dst instanceof GoMap ? dst : new GoMap();
    for (const src of srcs) mergeInto(d, toMap(src), false);
    return d;
  }),
  mergeOverwrite: variadic(['map'], 'map', (dst, ...srcs) => {
    const d = dst instanceof GoMap ? dst : new GoMap();
    for (const src of srcs) mergeInto(d, toMap(src), true);
    return d;
  }),
  values: fixed(['map'], (d) =>
    toMap(d)
      .sortedKeys()
      .map((k) => toMap(d).get(k)),
  ),
  dig: variadic([], 'any', dig),
  // flow control
  // Neither the message nor its length (a length is secret too: it narrows a guess).
  fail: fixed(['string'], () =>
    fail('the template called fail (its message is not shown: it may contain secret data)'),
  ),
  // regular expressions
  regexMatch: fixed(['string', 'string'], (re, s) => {
    const r = parse(re);
    return r.ok && guarded(() => r.regexp.matchGo(s));
  }),
  mustRegexMatch: fixed(['string', 'string'], (re, s) => guarded(() => compile(re).matchGo(s))),
  regexFindAll: fixed(['string', 'string', 'int'], findAllStrings),
  regexFind: fixed(['string', 'string'], findString),
  regexReplaceAll: fixed(['string', 'string', 'string'], (re, s, r) =>
    guarded(() => replaceAllStringGo(compile(re), s, r)),
  ),
  regexReplaceAllLiteral: fixed(['string', 'string', 'string'], (re, s, r) =>
    guarded(() => replaceAllLiteralStringGo(compile(re), s, r)),
  ),
  regexSplit: fixed(['string', 'string', 'int'], split),
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
  htmlDate: fixed(['any'], (d) => dateInZone('2006-01-02', d, 'Local')),
  htmlDateInZone: fixed(['any', 'string'], (d, z) => dateInZone('2006-01-02', d, z)),
  duration: fixed(['any'], durationOf),
  durationRound: fixed(['any'], durationRound),
  toDate: fixed(['string', 'string'], (layout, s) => {
    const t = parseGoTime(layout, s);
    return typeof t === 'string' ? ZERO_TIME : t;
  }),
  mustToDate: fixed(['string', 'string'], (layout, s) => {
    const t = parseGoTime(layout, s);
    return typeof t === 'string' ? fail(t) : t;
  }),
  unixEpoch: fixed(['time'], (t) => String(Math.floor((t as GoTime).ms / 1000))),
  dateModify: fixed(['string', 'time'], (f, t) => {
    const d = durationNs(f);
    const tt = t as GoTime;
    return d === undefined ? tt : new GoTime(tt.ms + Math.trunc(d / 1e6), tt.zone, tt.nanos);
  }),
  mustDateModify: fixed(['string', 'time'], (f, t) => {
    const d = durationNs(f);
    if (d === undefined) fail('time: invalid duration');
    const tt = t as GoTime;
    return new GoTime(tt.ms + Math.trunc(d! / 1e6), tt.zone, tt.nanos);
  }),
};

/**
 * Names that are the same function as another: Sprig's own second names (push for append, list for
 * tuple, date_in_zone, trimAll, the os* path functions, which are the path ones on Linux) and the must-
 * functions whose twin already fails the render with the same message (an error and a panic end it alike).
 */
const SAME_AS: Record<string, string> = {
  trimAll: 'trimall',
  mustCompact: 'compact',
  mustToRawJson: 'toRawJson',
  mustDeepCopy: 'deepCopy',
  osBase: 'base',
  osClean: 'clean',
  osDir: 'dir',
  osExt: 'ext',
  osIsAbs: 'isAbs',
  list: 'tuple',
  push: 'append',
  mustAppend: 'append',
  mustPush: 'append',
  mustPrepend: 'prepend',
  mustFirst: 'first',
  mustRest: 'rest',
  mustLast: 'last',
  mustInitial: 'initial',
  mustReverse: 'reverse',
  mustUniq: 'uniq',
  mustWithout: 'without',
  mustHas: 'has',
  mustSlice: 'slice',
  mustChunk: 'chunk',
  mustMerge: 'merge',
  mustMergeOverwrite: 'mergeOverwrite',
  mustRegexFindAll: 'regexFindAll',
  mustRegexFind: 'regexFind',
  mustRegexReplaceAll: 'regexReplaceAll',
  mustRegexReplaceAllLiteral: 'regexReplaceAllLiteral',
  mustRegexSplit: 'regexSplit',
  date_in_zone: 'dateInZone',
  date_modify: 'dateModify',
  must_date_modify: 'mustDateModify',
};

export const SPRIG_FUNCS: FuncTable = {
  ...FUNCTIONS,
  ...Object.fromEntries(Object.entries(SAME_AS).map(([name, same]) => [name, FUNCTIONS[same]!])),
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
