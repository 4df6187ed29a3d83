// The part of gjson's path syntax (github.com/tidwall/gjson, used by ESO's `remoteRef.property`) that
// applies to KV secrets: dotted keys with `\` escapes, array indexes, `#` (length, or a projection
// `a.#.b`), and `*`/`?` wildcards matching the first key. String() semantics: strings unquoted,
// numbers/bools as JSON text, null as "", objects/arrays as compact JSON.
import { goJson } from './json.ts';
import { compileGoRegexp, quoteMeta, type GoRegexp } from './regexp.ts';

export interface GjsonResult {
  exists: boolean;
  text: string;
}

function splitPath(path: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (c === '\\' && i + 1 < path.length) {
      cur += `\\${path[++i]}`;
      continue;
    }
    if (c === '.') {
      parts.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  parts.push(cur);
  return parts;
}

function unescape(part: string): string {
  return part.replace(/\\(.)/g, '$1');
}

/** A key pattern with `*`/`?` as a Go regexp (linear time: RE2), or undefined when it has no wildcard. */
function wildcardRe(part: string): GoRegexp | undefined {
  if (!/(^|[^\\])[*?]/.test(part)) return undefined;
  let src = '';
  for (let i = 0; i < part.length; i++) {
    const c = part[i]!;
    if (c === '\\' && i + 1 < part.length) {
      src += quoteMeta(part[++i]!);
      continue;
    }
    if (c === '*') src += '.*';
    else if (c === '?') src += '.';
    else src += quoteMeta(c);
  }
  return compileGoRegexp(`(?s)^${src}$`);
}

function step(value: unknown, part: string): { ok: boolean; value?: unknown } {
  if (Array.isArray(value)) {
    if (part === '#') return { ok: true, value: value.length };
    if (/^\d+$/.test(part)) {
      const i = Number(part);
      return i < value.length ? { ok: true, value: value[i] } : { ok: false };
    }
    return { ok: false };
  }
  if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    const re = wildcardRe(part);
    if (re) {
      const key = Object.keys(obj).find((k) => re.test(k));
      return key === undefined ? { ok: false } : { ok: true, value: obj[key] };
    }
    const key = unescape(part);
    return Object.prototype.hasOwnProperty.call(obj, key) ? { ok: true, value: obj[key] } : { ok: false };
  }
  return { ok: false };
}

function resolve(value: unknown, parts: string[]): { ok: boolean; value?: unknown } {
  let v = value;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === '#' && Array.isArray(v) && i < parts.length - 1) {
      // Projection: `friends.#.first` → every element's `first`.
      const rest = parts.slice(i + 1);
      return {
        ok: true,
        value: v
          .map((e) => resolve(e, rest))
          .filter((r) => r.ok)
          .map((r) => r.value),
      };
    }
    const r = step(v, part);
    if (!r.ok) return r;
    v = r.value;
  }
  return { ok: true, value: v };
}

export function gjsonGet(data: unknown, path: string): GjsonResult {
  if (path === '') return { exists: false, text: '' };
  const r = resolve(data, splitPath(path));
  if (!r.ok) return { exists: false, text: '' };
  const v = r.value;
  if (v === null || v === undefined) return { exists: true, text: '' };
  if (typeof v === 'string') return { exists: true, text: v };
  if (typeof v === 'number' || typeof v === 'boolean') return { exists: true, text: JSON.stringify(v) };
  return { exists: true, text: goJson(v) };
}
