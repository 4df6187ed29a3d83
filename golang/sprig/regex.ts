// Sprig's regular-expression functions over Go's regexp (golang/regexp.ts: RE2 in linear time), on the
// strings' bytes.
import { fail } from '../func.ts';
import { type GoRegexp, type GoRegexpResult, parseGoRegexp, GoRegexpError, splitGo } from '../regexp.ts';
import { utf8Text, goString, nilSlice, stringSlice } from '../values.ts';

/** The pattern (a Go string) compiled; the error names the rule, never the pattern (it may be secret data). */
export function compile(re: string): GoRegexp {
  const r = parse(re);
  if (r.ok) return r.regexp;
  // Go's message ends with the offending part of the pattern in backquotes: left out.
  return fail(r.error.replace(/: `[\s\S]*`$/, ''));
}

export function parse(re: string): GoRegexpResult {
  const text = utf8Text(re);
  // Go reads a pattern as UTF-8: one that does not round-trip is invalid.
  return goString(text) === re ? parseGoRegexp(text) : { ok: false, error: 'error parsing regexp: invalid UTF-8' };
}

/** A regexp call, its bound (input size × program size) reported as a function error. */
export function guarded<T>(call: () => T): T {
  try {
    return call();
  } catch (e) {
    if (e instanceof GoRegexpError) return fail(e.message);
    throw e;
  }
}

export function findAllStrings(re: string, s: string, n: number): unknown {
  const found = guarded(() => compile(re).findAllIndexGo(s, n));
  return found.length === 0 ? nilSlice('string') : stringSlice(found.map(([a, b]) => s.slice(a, b)));
}

export function findString(re: string, s: string): string {
  const m = guarded(() => compile(re).findAllIndexGo(s, 1))[0];
  return m ? s.slice(m[0], m[1]) : '';
}

export function split(re: string, s: string, n: number): unknown {
  const parts = guarded(() => splitGo(compile(re), s, n));
  return parts === null ? nilSlice('string') : stringSlice(parts);
}
