// Go's encodings of template values: encoding/json (Marshal, MarshalIndent, an Encoder without HTML
// escaping) and sigs.k8s.io/yaml (JSON first, then goyaml.v2's emitter: sorted keys, YAML 1.1 quoting,
// literal blocks for multi-line strings), as Sprig's toJson family and ESO's toYaml produce them.
import { formatFloat } from './fmt.ts';
import { FuncError } from './func.ts';
import { GoDuration, GoMap, GoNum, GoStruct, GoTime } from './values.ts';
import { decodeRune, goString, isNilSlice, mapRunes, numberValue, utf8Text } from './values.ts';
import { formatGoTime } from './time.ts';

/** encoding/json's float64: %f-like between 1e-6 and 1e21, else exponent with no leading zero. */
export function jsonFloat(x: number): string {
  if (!Number.isFinite(x))
    throw new FuncError(`json: unsupported value: ${Number.isNaN(x) ? 'NaN' : x > 0 ? '+Inf' : '-Inf'}`);
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-6 || a >= 1e21)) return formatFloat(x, 'e', -1).replace(/e([+-])0(\d)$/, 'e$1$2');
  return formatFloat(x, 'f', -1);
}

function jsonString(s: string, escapeHTML: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length;) {
    const b = s.charCodeAt(i);
    if (b < 0x80) {
      const c = s[i]!;
      if (c === '"' || c === '\\') out += `\\${c}`;
      else if (c === '\n') out += '\\n';
      else if (c === '\r') out += '\\r';
      else if (c === '\t') out += '\\t';
      else if (c === '\b') out += '\\b';
      else if (c === '\f') out += '\\f';
      else if (b < 0x20 || (escapeHTML && (c === '<' || c === '>' || c === '&')))
        out += `\\u00${b.toString(16).padStart(2, '0')}`;
      else out += c;
      i++;
      continue;
    }
    const [r, w] = decodeRune(s, i);
    if (r === 0xfffd && w === 1) out += '\\ufffd';
    else if (r === 0x2028 || r === 0x2029) out += `\\u${r.toString(16)}`;
    else out += s.slice(i, i + w);
    i += w;
  }
  return `${out}"`;
}

/** json.Marshal (indent = MarshalIndent's, escapeHTML false = an Encoder with SetEscapeHTML(false)). */
export function toGoJson(v: unknown, opts: { escapeHTML?: boolean; indent?: string } = {}): string {
  const esc = opts.escapeHTML ?? true;
  const ind = opts.indent;
  const enc = (x: unknown, depth: number): string => {
    if (depth > 1000) throw new FuncError('json: unsupported value: encountered a cycle');
    const nl = ind === undefined ? '' : `\n${ind.repeat(depth + 1)}`;
    const close = ind === undefined ? '' : `\n${ind.repeat(depth)}`;
    if (x === null || x === undefined) return 'null';
    if (typeof x === 'string') return jsonString(x, esc);
    if (typeof x === 'boolean') return x ? 'true' : 'false';
    if (typeof x === 'number') return String(x);
    if (x instanceof GoNum) return x.kind === 'float64' ? jsonFloat(x.value) : String(x.value);
    if (x instanceof GoDuration) return String(x.ns);
    if (x instanceof Uint8Array) return `"${Buffer.from(x).toString('base64')}"`;
    if (x instanceof GoTime) return jsonString(formatGoTime(x, '2006-01-02T15:04:05.999999999Z07:00'), esc);
    if (Array.isArray(x)) {
      if (isNilSlice(x)) return 'null';
      if (x.length === 0) return '[]';
      return `[${x.map((e) => nl + enc(e, depth + 1)).join(',')}${close}]`;
    }
    if (x instanceof GoMap) {
      const keys = x.sortedKeys();
      if (keys.length === 0) return '{}';
      return `{${keys.map((k) => `${nl}${jsonString(k, esc)}:${ind === undefined ? '' : ' '}${enc(x.get(k), depth + 1)}`).join(',')}${close}}`;
    }
    if (x instanceof GoStruct) return enc(x.options.json ? x.options.json() : new GoMap([...x.fields]), depth);
    throw new FuncError('json: unsupported type');
  };
  return enc(v, 0);
}

// ---- YAML (sigs.k8s.io/yaml.Marshal → goyaml.v2) ----

/** What json.Marshal then yaml.v2's Unmarshal of that JSON make of a value: the tree toYaml emits. */
function jsonRoundTrip(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return goString(utf8Text(v)); // json.Marshal replaces invalid UTF-8 with U+FFFD
  if (typeof v === 'boolean') return v;
  if (v instanceof GoTime) return formatGoTime(v, '2006-01-02T15:04:05.999999999Z07:00');
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  const n = numberValue(v);
  if (n !== undefined) {
    // JSON text of the number, read back by yaml.v2: integers as int, others as float64.
    const text = v instanceof GoNum && v.kind === 'float64' ? jsonFloat(n) : String(n);
    return /^-?\d+$/.test(text) && Math.abs(n) < 2 ** 63 ? Number(text) : new GoNum('float64', Number(text));
  }
  if (Array.isArray(v)) return isNilSlice(v) ? null : v.map(jsonRoundTrip);
  if (v instanceof GoMap) return new GoMap(v.sortedKeys().map((k) => [k, jsonRoundTrip(v.get(k))] as const));
  if (v instanceof GoStruct) return jsonRoundTrip(v.options.json ? v.options.json() : new GoMap([...v.fields]));
  return null;
}

const YAML11_SPECIAL =
  /^(?:~|null|Null|NULL|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|\.inf|\.Inf|\.INF|[-+]\.inf|[-+]\.Inf|[-+]\.INF|\.nan|\.NaN|\.NAN|<<)$/;

/** yaml.v2's resolve(): would this plain text be read back as something other than this string? */
function resolvesAsNonString(s: string): boolean {
  if (s === '' || YAML11_SPECIAL.test(s)) return true;
  // ints (decimal, 0x, 0o-style octal, binary, with _), floats, sexagesimal and timestamps of YAML 1.1
  if (
    /^[-+]?(0|[1-9][0-9_]*)$/.test(s) ||
    /^[-+]?0[0-7_]+$/.test(s) ||
    /^[-+]?0x[0-9a-fA-F_]+$/.test(s) ||
    /^[-+]?0b[01_]+$/.test(s)
  )
    return true;
  // floats: yaml.v2's yamlStyleFloat on the text without '_' (after a leading '.', strconv.ParseFloat's)
  if (
    s.startsWith('.')
      ? /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s)
      : /^[-+0-9]/.test(s) && /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(s.replace(/_/g, ''))
  )
    return true;
  if (/^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/.test(s)) return true;
  if (/^\d{4}-\d\d?-\d\d?([Tt ]|$)/.test(s)) return true;
  if (/^[-+]?\d[\d_]*[eE][-+]?\d+$/.test(s)) return true;
  return false;
}

function isPrintableYaml(s: string): boolean {
  for (let i = 0; i < s.length;) {
    const [r, w] = decodeRune(s, i);
    if (r === 0xfffd && w === 1) return false;
    const ok =
      r === 0x9 ||
      r === 0xa ||
      r === 0xd ||
      (r >= 0x20 && r <= 0x7e) ||
      r === 0x85 ||
      (r >= 0xa0 && r <= 0xd7ff) ||
      (r >= 0xe000 && r <= 0xfffd && r !== 0xfeff) ||
      (r >= 0x10000 && r <= 0x10ffff);
    if (!ok) return false;
    i += w;
  }
  return true;
}

/** Whether goyaml.v2's emitter may write `s` as a plain scalar (yaml_emitter_analyze_scalar, simplified). */
function plainAllowed(s: string, inFlowOrKey: boolean): boolean {
  if (s === '' || resolvesAsNonString(s)) return false;
  if (!isPrintableYaml(s)) return false;
  if (/^[\s]|[\s]$/.test(s)) return false;
  if (/\n/.test(s)) return false;
  if (/^[-?:,[\]{}#&*!|>'"%@`]/.test(s) && !(/^[-?:]/.test(s) && s.length > 1 && !/^[-?:][\s]/.test(s))) return false;
  if (/: |:$| #|\t/.test(s)) return false;
  if (inFlowOrKey && /[,[\]{}]/.test(s)) return false;
  if (s.startsWith('---') || s.startsWith('...')) return false;

  if (/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(s)) return false;
  return true;
}

function yamlDoubleQuoted(s: string): string {
  return `"${mapRunes(s, (r, c) => {
    if (r === 0xfffd && c.length === 1) return `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
    switch (r) {
      case 0x22:
        return '\\"';
      case 0x5c:
        return '\\\\';
      case 0x0:
        return '\\0';
      case 0x7:
        return '\\a';
      case 0x8:
        return '\\b';
      case 0x9:
        return '\\t';
      case 0xa:
        return '\\n';
      case 0xb:
        return '\\v';
      case 0xc:
        return '\\f';
      case 0xd:
        return '\\r';
      case 0x1b:
        return '\\e';
      case 0x85:
        return '\\N';
      case 0xa0:
        return '\\_';
      case 0x2028:
        return '\\L';
      case 0x2029:
        return '\\P';
    }
    const printable =
      (r >= 0x20 && r <= 0x7e) ||
      (r >= 0xa0 && r <= 0xd7ff) ||
      (r >= 0xe000 && r <= 0xfffd && r !== 0xfeff) ||
      (r >= 0x10000 && r <= 0x10ffff);
    if (printable) return c;
    if (r <= 0xff) return `\\x${r.toString(16).toUpperCase().padStart(2, '0')}`;
    if (r <= 0xffff) return `\\u${r.toString(16).toUpperCase().padStart(4, '0')}`;
    return `\\U${r.toString(16).toUpperCase().padStart(8, '0')}`;
  })}"`;
}

function yamlScalar(s: string, indent: string, isKey: boolean): string {
  if (plainAllowed(s, isKey)) return s;
  const printable = isPrintableYaml(s);
  if (!isKey && printable && s.includes('\n') && !/[ \t]\n|^ /.test(s) && !/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(s)) {
    // Literal block: |- (no final newline), | (one), |+ (more).
    const chomp = s.endsWith('\n\n') || s === '\n' ? '+' : s.endsWith('\n') ? '' : '-';
    const body = chomp === '' ? s.slice(0, -1) : chomp === '+' ? s.slice(0, -1) : s;
    const lines = body.split('\n').map((l) => (l === '' ? '' : indent + l));
    return `|${chomp}\n${lines.join('\n')}`;
  }
  // A string that would read back as another type is double-quoted (goyaml.v2's marshal picks that
  // style for them); other strings that cannot be plain are single-quoted when printable on one line.
  if (resolvesAsNonString(s)) return yamlDoubleQuoted(s);
  if (printable && !/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\r\t\n]/.test(s)) return `'${s.replace(/'/g, "''")}'`;
  return yamlDoubleQuoted(s);
}

function yamlNode(v: unknown, indent: string): { inline: string } | { block: string } {
  if (v === null) return { inline: 'null' };
  if (typeof v === 'boolean') return { inline: v ? 'true' : 'false' };
  if (typeof v === 'number') return { inline: String(v) };
  if (v instanceof GoNum) {
    const x = v.value;
    if (Number.isNaN(x)) return { inline: '.nan' };
    if (!Number.isFinite(x)) return { inline: x > 0 ? '.inf' : '-.inf' };
    return { inline: formatFloat(x, 'g', -1) };
  }
  if (typeof v === 'string') return { inline: yamlScalar(v, indent, false) };
  if (Array.isArray(v)) {
    if (v.length === 0) return { inline: '[]' };
    return {
      block: v
        .map((e) => {
          const n = yamlNode(e, `${indent}  `);
          if ('inline' in n) return `${indent}- ${n.inline}`;
          return `${indent}- ${n.block.slice(indent.length + 2)}`;
        })
        .join('\n'),
    };
  }
  if (v instanceof GoMap) {
    if (v.size === 0) return { inline: '{}' };
    return {
      block: [...v]
        .map(([k, e]) => {
          const key = yamlScalar(k, indent, true);
          const n = yamlNode(e, Array.isArray(e) ? indent : `${indent}  `);
          if ('inline' in n) return `${indent}${key}: ${n.inline}`;
          return `${indent}${key}:\n${n.block}`;
        })
        .join('\n'),
    };
  }
  return { inline: 'null' };
}

/** sigs.k8s.io/yaml.Marshal(v), without its final newline (ESO's toYaml trims it). */
export function toGoYaml(v: unknown): string {
  const tree = jsonRoundTrip(v);
  const n = yamlNode(tree, '');
  return 'inline' in n ? n.inline : n.block;
}

/** goString for a JS text that came from a parser (yaml, JSON). */
export const text = goString;
