// Sprig's semver and semverCompare: github.com/Masterminds/semver/v3 v3.3.1 (the version ESO v0.16.2
// builds) ported from its source: NewVersion's regular expression, NewConstraint (rewriteRange, the
// "||" split, validConstraintRegex, findConstraintRegex, parseConstraint) and every constraint
// operator's check, dirty (x/*/missing) segments included. Segments are uint64 (BigInt here).
// The library's regular expressions are matched by hand, deterministically: Go's RE2 runs them in
// linear time, a JS backtracking RegExp would not (a constraint can come from secret data). A
// constraint longer than MAX_CONSTRAINT bytes is refused (the hand matchers are quadratic at worst).
// Errors never quote the version or the constraint (they can be secret data).
import { fail, type GoFunc } from '../func.ts';
import { GoNum, GoStruct } from '../values.ts';

export interface SemVer {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string;
  metadata: string;
  original: string;
}

const MAX_UINT64 = (1n << 64n) - 1n;
export const MAX_CONSTRAINT = 4096;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isAlnumDash = (c: string | undefined): boolean =>
  c !== undefined && (isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '-');

/** strconv.ParseUint(s, 10, 64), or undefined. */
function parseUint64(s: string): bigint | undefined {
  if (s === '' || !/^[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v > MAX_UINT64 ? undefined : v;
}

// ---- NewVersion ----

/** A prerelease identifier of the version regex: 0 | [1-9]\d* | \d*[a-zA-Z-][0-9a-zA-Z-]*. */
function preIdent(s: string): boolean {
  if (s === '0') return true;
  if (/^[1-9][0-9]*$/.test(s)) return true;
  return /^[0-9]*[a-zA-Z-][0-9a-zA-Z-]*$/.test(s);
}

/**
 * versionRegex.FindStringSubmatch(v) of ^v?(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-(pre))?(?:\+(meta))?$:
 * the five groups, or undefined. Deterministic: each optional part is taken when its leading character is there.
 */
function matchVersion(v: string): [string, string, string, string, string] | undefined {
  let i = 0;
  if (v[i] === 'v') i++;
  const num = (): string | undefined => {
    const m = /^(0|[1-9][0-9]*)/.exec(v.slice(i));
    if (!m) return undefined;
    // "0" followed by a digit cannot continue the number: the regex fails there (no other parse).
    i += m[1]!.length;
    return m[1];
  };
  const major = num();
  if (major === undefined) return undefined;
  let minor = '';
  let patch = '';
  if (v[i] === '.' && isDigit(v[i + 1])) {
    i++;
    minor = num()!;
    if (v[i] === '.' && isDigit(v[i + 1])) {
      i++;
      patch = num()!;
    }
  }
  let pre = '';
  let meta = '';
  const rest = v.slice(i);
  // -pre and +meta: the pre part cannot contain '+', the meta part is all that follows it.
  let body = rest;
  if (body.startsWith('-')) {
    const plus = body.indexOf('+');
    pre = plus < 0 ? body.slice(1) : body.slice(1, plus);
    if (pre === '' || !pre.split('.').every(preIdent)) return undefined;
    body = plus < 0 ? '' : body.slice(plus);
  }
  if (body.startsWith('+')) {
    meta = body.slice(1);
    if (meta === '' || !meta.split('.').every((p) => p !== '' && [...p].every(isAlnumDash))) return undefined;
    body = '';
  }
  if (body !== '') return undefined;
  return [major, minor, patch, pre, meta];
}

/** semver.NewVersion. */
export function newVersion(v: string): SemVer | string {
  const m = matchVersion(v);
  if (!m) return 'Invalid Semantic Version';
  const seg = (s: string): bigint | undefined => (s === '' ? 0n : parseUint64(s));
  const major = seg(m[0]);
  const minor = seg(m[1]);
  const patch = seg(m[2]);
  if (major === undefined || minor === undefined || patch === undefined)
    return 'Error parsing version segment: value out of range';
  return { major, minor, patch, pre: m[3], metadata: m[4], original: v };
}

export function versionString(v: SemVer): string {
  return `${v.major}.${v.minor}.${v.patch}${v.pre ? `-${v.pre}` : ''}${v.metadata ? `+${v.metadata}` : ''}`;
}

const cmp = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === '') return o !== '' ? -1 : 1;
  if (o === '') return 1;
  const oi = parseUint64(o);
  const si = parseUint64(s);
  if (oi === undefined && si === undefined) return s > o ? 1 : -1;
  if (oi === undefined) return -1;
  if (si === undefined) return 1;
  return si > oi ? 1 : -1;
}

function comparePrerelease(v: string, o: string): number {
  const sp = v.split('.');
  const op = o.split('.');
  const l = Math.max(sp.length, op.length);
  for (let i = 0; i < l; i++) {
    const d = comparePrePart(sp[i] ?? '', op[i] ?? '');
    if (d !== 0) return d;
  }
  return 0;
}

export function compareVersions(v: SemVer, o: SemVer): number {
  const d = cmp(v.major, o.major) || cmp(v.minor, o.minor) || cmp(v.patch, o.patch);
  if (d !== 0) return d;
  if (v.pre === '' && o.pre === '') return 0;
  if (v.pre === '') return 1;
  if (o.pre === '') return -1;
  return comparePrerelease(v.pre, o.pre);
}

const equalVersions = (v: SemVer, o: SemVer): boolean => v === o || compareVersions(v, o) === 0;

// ---- constraints ----

const isS = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r';
const isCvDigit = (c: string | undefined): boolean => isDigit(c) || c === '|' || c === 'x' || c === 'X' || c === '*';
/** The operators in the order of the library's alternation (the empty one second). */
const OPS = ['=', '', '!=', '>', '<', '>=', '=>', '<=', '=<', '~', '~>', '^'];

interface Cv {
  end: number;
  whole: string;
  major: string;
  minor: string;
  patch: string;
  pre: string;
}

/** cvRegex at i, greedy: v?([0-9|x|X|\*]+)(\.[…]+)?(\.[…]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+(…))? */
function cvAt(s: string, i: number): Cv | undefined {
  let j = i;
  if (s[j] === 'v') j++;
  const a = j;
  while (isCvDigit(s[j])) j++;
  if (j === a) return undefined;
  const major = s.slice(a, j);
  const dotted = (): string => {
    if (s[j] === '.' && isCvDigit(s[j + 1])) {
      const k0 = j;
      j++;
      while (isCvDigit(s[j])) j++;
      return s.slice(k0, j);
    }
    return '';
  };
  const minor = dotted();
  const patch = minor === '' ? '' : dotted();
  const ids = (lead: string): string => {
    if (s[j] !== lead || !isAlnumDash(s[j + 1])) return '';
    const k0 = j;
    j++;
    while (isAlnumDash(s[j])) j++;
    while (s[j] === '.' && isAlnumDash(s[j + 1])) {
      j++;
      while (isAlnumDash(s[j])) j++;
    }
    return s.slice(k0, j);
  };
  const pre = ids('-');
  ids('+');
  return { end: j, whole: s.slice(i, j), major, minor, patch, pre };
}

function skipS(s: string, i: number): number {
  while (isS(s[i])) i++;
  return i;
}

/** The operator at i that the library's regex would take there: the longest (a shorter one never fits). */
function opAt(s: string, i: number): string {
  for (const op of ['!=', '>=', '=>', '<=', '=<', '~>']) if (s.startsWith(op, i)) return op;
  for (const op of ['=', '>', '<', '~', '^']) if (s.startsWith(op, i)) return op;
  return '';
}

/** validConstraintRegex: ^(\s*(ops)\s*(cv)\s*)((?:\s+|,\s*)(ops)\s*(cv)\s*)*$ */
function validConstraint(v: string): boolean {
  let i = skipS(v, 0);
  for (;;) {
    i = skipS(v, i + opAt(v, i).length);
    const c = cvAt(v, i);
    if (!c) return false;
    const after = skipS(v, c.end);
    if (after === v.length) return true;
    if (v[after] === ',') i = skipS(v, after + 1);
    else if (after > c.end) i = after;
    else return false;
  }
}

/** findConstraintRegex.FindAllString(v, -1): (ops)\s*(cv), leftmost-first, operators in their order. */
function findConstraints(v: string): string[] {
  const out: string[] = [];
  let p = 0;
  while (p < v.length) {
    let found: number | undefined;
    for (const op of OPS) {
      if (!v.startsWith(op, p)) continue;
      const c = cvAt(v, skipS(v, p + op.length));
      if (c) {
        found = c.end;
        break;
      }
    }
    if (found === undefined) {
      p++;
      continue;
    }
    out.push(v.slice(p, found));
    p = found;
  }
  return out;
}

/** constraintRegex ^\s*(ops)\s*(cv)\s*$ on one found constraint: [op, cv] or undefined. */
function matchConstraint(s: string): [string, Cv] | undefined {
  const start = skipS(s, 0);
  for (const op of OPS) {
    if (!s.startsWith(op, start)) continue;
    const c = cvAt(s, skipS(s, start + op.length));
    if (c && skipS(s, c.end) === s.length) return [op, c];
  }
  return undefined;
}

/** rewriteRange: every "a - b" (constraintRangeRegex) becomes ">= a, <= b ". */
function rewriteRange(input: string): string {
  const matches: Array<[string, string, string]> = [];
  let p = 0;
  while (p < input.length) {
    const q = skipS(input, p);
    const c1 = cvAt(input, q);
    let m: [string, string, string] | undefined;
    if (c1) {
      const dash = skipS(input, c1.end);
      if (dash > c1.end && input[dash] === '-') {
        const q2 = skipS(input, dash + 1);
        if (q2 > dash + 1) {
          const c2 = cvAt(input, q2);
          if (c2) m = [input.slice(p, skipS(input, c2.end)), c1.whole, c2.whole];
        }
      }
    }
    if (!m) {
      p++;
      continue;
    }
    matches.push(m);
    p += m[0].length;
  }
  let o = input;
  for (const [whole, a, b] of matches) {
    const at = o.indexOf(whole);
    if (at >= 0) o = o.slice(0, at) + `>= ${a}, <= ${b} ` + o.slice(at + whole.length);
  }
  return o;
}

interface Constraint {
  con: SemVer;
  orig: string;
  op: string;
  minorDirty: boolean;
  dirty: boolean;
  patchDirty: boolean;
}

const isX = (x: string): boolean => x === 'x' || x === '*' || x === 'X';

function parseConstraint(s: string): Constraint | string {
  const m = matchConstraint(s);
  if (!m) return 'improper constraint';
  const [op, c] = m;
  let ver = c.whole;
  let minorDirty = false;
  let patchDirty = false;
  let dirty = false;
  if (isX(c.major) || c.major === '') {
    ver = `0.0.0${c.pre}`;
    dirty = true;
  } else if (isX(c.minor.replace(/^\./, '')) || c.minor === '') {
    minorDirty = true;
    dirty = true;
    ver = `${c.major}.0.0${c.pre}`;
  } else if (isX(c.patch.replace(/^\./, '')) || c.patch === '') {
    dirty = true;
    patchDirty = true;
    ver = `${c.major}${c.minor}.0${c.pre}`;
  }
  const con = newVersion(ver);
  if (typeof con === 'string') return 'constraint Parser Error';
  return { con, orig: c.whole, op, minorDirty, dirty, patchDirty };
}

/** semver.NewConstraint: the or-groups of and-ed constraints, or the error's text. */
export function newConstraint(input: string): Constraint[][] | string {
  if (input.length > MAX_CONSTRAINT)
    return `the constraint is longer than ${MAX_CONSTRAINT} bytes (vaultgate refuses it)`;
  const c = rewriteRange(input);
  const or: Constraint[][] = [];
  for (const v of c.split('||')) {
    if (!validConstraint(v)) return 'improper constraint';
    let cs = findConstraints(v);
    if (cs.length === 0) cs = [v];
    const group: Constraint[] = [];
    for (const s of cs) {
      const pc = parseConstraint(s);
      if (typeof pc === 'string') return pc;
      group.push(pc);
    }
    or.push(group);
  }
  return or;
}

function check(v: SemVer, c: Constraint): boolean {
  const vPreOnly = v.pre !== '' && c.con.pre === '';
  switch (c.op) {
    case '':
    case '=':
      if (vPreOnly) return false;
      if (c.dirty) return tilde(v, c);
      return equalVersions(v, c.con);
    case '!=':
      if (c.dirty) {
        if (vPreOnly) return false;
        if (c.con.major !== v.major) return true;
        if (c.con.minor !== v.minor && !c.minorDirty) return true;
        else if (c.minorDirty) return false;
        else if (c.con.patch !== v.patch && !c.patchDirty) return true;
        else if (c.patchDirty) {
          if (v.pre !== '' || c.con.pre !== '') return comparePrerelease(v.pre, c.con.pre) !== 0;
          return false;
        }
      }
      return !equalVersions(v, c.con);
    case '>':
      if (vPreOnly) return false;
      if (!c.dirty) return compareVersions(v, c.con) === 1;
      if (v.major > c.con.major) return true;
      if (v.major < c.con.major) return false;
      if (c.minorDirty) return false;
      if (c.patchDirty) return v.minor > c.con.minor;
      return compareVersions(v, c.con) === 1;
    case '<':
      if (vPreOnly) return false;
      return compareVersions(v, c.con) < 0;
    case '>=':
    case '=>':
      if (vPreOnly) return false;
      return compareVersions(v, c.con) >= 0;
    case '<=':
    case '=<':
      if (vPreOnly) return false;
      if (!c.dirty) return compareVersions(v, c.con) <= 0;
      if (v.major > c.con.major) return false;
      if (v.major === c.con.major && v.minor > c.con.minor && !c.minorDirty) return false;
      return true;
    case '~':
    case '~>':
      return tilde(v, c);
    case '^':
      return caret(v, c);
  }
  return false;
}

function tilde(v: SemVer, c: Constraint): boolean {
  if (v.pre !== '' && c.con.pre === '') return false;
  if (compareVersions(v, c.con) < 0) return false;
  if (c.con.major === 0n && c.con.minor === 0n && c.con.patch === 0n && !c.minorDirty && !c.patchDirty) return true;
  if (v.major !== c.con.major) return false;
  if (v.minor !== c.con.minor && !c.minorDirty) return false;
  return true;
}

function caret(v: SemVer, c: Constraint): boolean {
  if (v.pre !== '' && c.con.pre === '') return false;
  if (compareVersions(v, c.con) < 0) return false;
  if (c.con.major > 0n || c.minorDirty) return v.major === c.con.major;
  if (c.con.major === 0n && v.major > 0n) return false;
  if (c.con.minor > 0n || c.patchDirty) return v.minor === c.con.minor;
  if (c.con.minor === 0n && v.minor > 0n) return false;
  return c.con.patch === v.patch;
}

/** Constraints.Check: some or-group whose constraints all hold. */
export function checkConstraint(cs: Constraint[][], v: SemVer): boolean {
  return cs.some((group) => group.every((c) => check(v, c)));
}

/** Sprig's semverCompare(constraint, version). */
export function semverCompare(constraint: string, version: string): boolean {
  const c = newConstraint(constraint);
  if (typeof c === 'string') fail(`${c} (the constraint is not shown: it may be secret)`);
  const v = newVersion(version);
  if (typeof v === 'string') fail(`${v} (the version is not shown: it may be secret)`);
  return checkConstraint(c as Constraint[][], v as SemVer);
}

// ---- *semver.Version and semver.Version as template values ----

export const VERSION_PTR = '*semver.Version';
const VERSION_VAL = 'semver.Version';

const versions = new WeakMap<GoStruct, SemVer>();
export const semverOf = (s: GoStruct): SemVer | undefined => versions.get(s);

function validateIdents(p: string, pre: boolean): string | undefined {
  for (const part of p.split('.')) {
    if (part === '') return 'Invalid Metadata string';
    if (pre && /^[0-9]+$/.test(part)) {
      if (part.length > 1 && part[0] === '0') return 'Version segment starts with 0';
    } else if (![...part].every(isAlnumDash)) return pre ? 'Invalid Prerelease string' : 'Invalid Metadata string';
  }
  return undefined;
}

const vPrefix = (v: SemVer): string => (v.original !== '' && v.original[0] === 'v' ? 'v' : '');

/** A Version as Go's text/template sees it: methods of the pointer (all) or of the value (value receivers). */
export function versionValue(v: SemVer, pointer: boolean): GoStruct {
  const next = (w: Omit<SemVer, 'original'>): GoStruct => {
    const n: SemVer = { ...w, original: '' };
    n.original = vPrefix(v) + versionString(n);
    return versionValue(n, false);
  };
  const other = (o: unknown): SemVer => {
    const ov = o instanceof GoStruct ? versions.get(o) : undefined;
    return ov ?? fail('runtime error: invalid memory address or nil pointer dereference');
  };
  const u64 = (x: bigint): GoNum => new GoNum('uint64', Number(x));
  /** SetPrerelease / SetMetadata: the new identifiers, checked unless empty (which clears the part). */
  const setIdents = (part: 'pre' | 'metadata'): GoFunc => ({
    params: ['string'],
    fn: (idents: string) => {
      const e = idents.length > 0 ? validateIdents(idents, part === 'pre') : undefined;
      if (e) fail(e);
      return next({ ...v, [part]: idents });
    },
  });
  const methods = new Map<string, (() => unknown) | GoFunc>([
    ['String', () => versionString(v)],
    ['Major', () => u64(v.major)],
    ['Minor', () => u64(v.minor)],
    ['Patch', () => u64(v.patch)],
    ['Prerelease', () => v.pre],
    ['Metadata', () => v.metadata],
    [
      'IncPatch',
      () => next(v.pre !== '' ? { ...v, pre: '', metadata: '' } : { ...v, pre: '', metadata: '', patch: v.patch + 1n }),
    ],
    ['IncMinor', () => next({ ...v, pre: '', metadata: '', patch: 0n, minor: v.minor + 1n })],
    ['IncMajor', () => next({ ...v, pre: '', metadata: '', patch: 0n, minor: 0n, major: v.major + 1n })],
    ['SetPrerelease', setIdents('pre')],
    ['SetMetadata', setIdents('metadata')],
    ['MarshalText', () => new Uint8Array(Buffer.from(versionString(v), 'latin1'))],
    ['MarshalJSON', () => new Uint8Array(Buffer.from(JSON.stringify(versionString(v)), 'latin1'))],
    ['Value', () => versionString(v)],
  ]);
  if (pointer) {
    methods.set('Original', () => v.original);
    const compareWith = (f: (d: number) => unknown): GoFunc => ({
      params: [VERSION_PTR],
      fn: (o: unknown) => f(compareVersions(v, other(o))),
    });
    methods.set(
      'LessThan',
      compareWith((d) => d < 0),
    );
    methods.set(
      'LessThanEqual',
      compareWith((d) => d <= 0),
    );
    methods.set(
      'GreaterThan',
      compareWith((d) => d > 0),
    );
    methods.set(
      'GreaterThanEqual',
      compareWith((d) => d >= 0),
    );
    methods.set(
      'Compare',
      compareWith((d) => d),
    );
    methods.set('Equal', {
      params: [VERSION_PTR],
      fn: (o: unknown) => (o === null || o === undefined ? false : equalVersions(v, other(o))),
    });
  }
  const s = new GoStruct(pointer ? VERSION_PTR : VERSION_VAL, new Map(), methods, {
    pointer,
    json: () => versionString(v),
    // Version values compare by their fields (Go's ==, reflect.DeepEqual), pointers by identity for == only.
    key: JSON.stringify([String(v.major), String(v.minor), String(v.patch), v.pre, v.metadata, v.original]),
  });
  versions.set(s, v);
  return s;
}

/** Sprig's semver(version): *semver.Version or NewVersion's error. */
export function semverFunc(version: string): GoStruct {
  const v = newVersion(version);
  if (typeof v === 'string') fail(`${v} (the version is not shown: it may be secret)`);
  return versionValue(v as SemVer, true);
}
