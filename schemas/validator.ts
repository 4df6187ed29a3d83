// Schema validation of a whole object against its kind's JSON Schema: one ajv instance, every
// schema compiled once, errors turned into `{ field: 'spec.rules[0].path', message }` in plain English.
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { KindMeta } from './kind-meta.ts';
import { KINDS, findKindOf } from './kinds.ts';
import { resolveRefs } from './schema-refs.ts';

export interface SchemaProblem {
  /** kubectl-style path of the offending field, e.g. `spec.rules[0].capabilities[1]`. */
  field: string;
  message: string;
  /** `schema.<ajv keyword>`, or `schema.unknown-field`. */
  rule: string;
  /** Unknown fields are warnings: the apiserver prunes them instead of refusing the object. */
  severity: 'deny' | 'warn';
}

/** Keywords Kubernetes understands and ajv must accept as annotations; `tsType` feeds the type generator. */
const ANNOTATION_KEYWORDS = [
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-validations',
  'tsType',
];

/** Human names for the patterns the schemas use, so a message says what is expected, not a regex. */
const PATTERN_NAMES: Record<string, string> = {
  '^(0|([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+)$': 'a Go duration such as "90s", "15m" or "1h30m"',
  '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$':
    'a DNS-1123 subdomain name (lower-case letters, digits, "-" and ".", starting and ending with a letter or digit)',
  '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$':
    'a DNS-1123 label (lower-case letters, digits and "-", starting and ending with a letter or digit)',
  '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$':
    'a mount path such as "kubernetes" or "clusters/prod" (letters, digits, "_", ".", "-", segments separated by "/", no leading or trailing "/")',
};

const addFormats = addFormatsModule.default;
let compiled: Map<string, ValidateFunction> | undefined;
const schemaCache = new Map<string, Record<string, unknown>>();

function schemaOf(file: string): Record<string, unknown> {
  let schema = schemaCache.get(file);
  if (!schema) {
    const read = (f: string): Record<string, unknown> =>
      JSON.parse(readFileSync(new URL(`./${f}`, import.meta.url), 'utf8')) as Record<string, unknown>;
    schema = resolveRefs(read(file), read);
    schemaCache.set(file, schema);
  }
  return schema;
}

function validators(): Map<string, ValidateFunction> {
  if (compiled) return compiled;
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv);
  for (const keyword of ANNOTATION_KEYWORDS) ajv.addKeyword({ keyword });
  ajv.addFormat('int-or-string', true);
  compiled = new Map();
  for (const file of new Set(KINDS.map((k) => k.schemaFile))) compiled.set(file, ajv.compile(schemaOf(file)));
  return compiled;
}

/** Compile every schema now (at startup) rather than on the first admission request. */
export function warmUp(): void {
  validators();
  limitsValidators();
}

/** Problems of an object against the schema of the kind its apiVersion/kind name; [] for kinds we do not serve. */
export function validateObject(obj: unknown): SchemaProblem[] {
  if (!isRecord(obj)) return [{ field: '', message: 'must be an object', rule: 'schema.type', severity: 'deny' }];
  const meta = findKindOf(
    typeof obj.apiVersion === 'string' ? obj.apiVersion : '',
    typeof obj.kind === 'string' ? obj.kind : '',
  );
  return meta ? validateAgainst(meta, obj) : [];
}

export function validateAgainst(meta: KindMeta, obj: unknown): SchemaProblem[] {
  const validate = validators().get(meta.schemaFile);
  if (!validate) throw new Error(`no compiled schema for ${meta.schemaFile}`);
  const problems: SchemaProblem[] = [];
  if (!validate(obj)) problems.push(...dedupe((validate.errors ?? []).map((e) => describe(e, obj))));
  problems.push(...unknownFields(schemaOf(meta.schemaFile), obj, []));
  return problems;
}

/**
 * vaultgate's own bounds where a kind's schema sets none (ESO's lists and maps have none; the apiserver's
 * request limit is the only one): a list of more items or a map of more keys is refused before any rule
 * looks at it. Generous for any real object (ESO's own examples use tens).
 */
export const DEFAULT_MAX_ITEMS = 1000;
export const DEFAULT_MAX_PROPERTIES = 1000;

/**
 * The size keywords of a schema only (maxLength, maxItems, maxProperties, with the defaults above where
 * a list or map has none), over the same structure: what a size check needs, nothing it does not.
 */
function limitsOnly(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['maxItems', 'maxProperties'] as const) if (typeof schema[k] === 'number') out[k] = schema[k];
  if (typeof schema.maxLength === 'number') out.maxChars = schema.maxLength;
  if (isRecord(schema.items)) {
    out.items = limitsOnly(schema.items);
    out.maxItems ??= DEFAULT_MAX_ITEMS;
  } else if (schema.type === 'array') out.maxItems ??= DEFAULT_MAX_ITEMS;
  if (isRecord(schema.properties)) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties)
        .filter(([, v]) => isRecord(v))
        .map(([k, v]) => [k, limitsOnly(v as Record<string, unknown>)]),
    );
  }
  if (isRecord(schema.additionalProperties)) {
    out.additionalProperties = limitsOnly(schema.additionalProperties);
    out.maxProperties ??= DEFAULT_MAX_PROPERTIES;
  } else if (schema.type === 'object' && !isRecord(schema.properties)) out.maxProperties ??= DEFAULT_MAX_PROPERTIES;
  return out;
}

let limitValidators: Map<string, ValidateFunction> | undefined;

function limitsValidators(): Map<string, ValidateFunction> {
  if (limitValidators) return limitValidators;
  // allErrors off: the check stops at the first limit exceeded, so an oversized object costs one pass at most.
  const ajv = new Ajv({ allErrors: false, strict: false, verbose: true });
  // maxLength counts code points (as ajv and the apiserver do), which walks the whole string: a 6 MiB
  // string took 60–170 ms. maxChars decides from .length (UTF-16 units, never fewer than code points)
  // and counts only when that cannot: a string of more than twice the limit is over it for sure.
  ajv.addKeyword({
    keyword: 'maxChars',
    type: 'string',
    schemaType: 'number',
    errors: true,
    validate: (limit: number, s: string) => s.length <= limit || (s.length <= 2 * limit && codePoints(s) <= limit),
  });
  limitValidators = new Map();
  for (const file of new Set(KINDS.map((k) => k.schemaFile)))
    limitValidators.set(file, ajv.compile(limitsOnly(schemaOf(file))));
  return limitValidators;
}

/**
 * The first size limit an object exceeds (the schema's maxLength, maxItems and maxProperties, and
 * DEFAULT_MAX_ITEMS / DEFAULT_MAX_PROPERTIES where it has none), or undefined. Cheap and bounded: run
 * it before anything parses or copies the object (HCL, templates, the mutation's deep copy), so an
 * oversized object is refused in one pass instead of being parsed first.
 */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) n++;
    else {
      n++;
      i++;
    }
  }
  return n;
}

export function sizeLimitProblem(obj: unknown): SchemaProblem | undefined {
  if (!isRecord(obj)) return undefined;
  const meta = findKindOf(
    typeof obj.apiVersion === 'string' ? obj.apiVersion : '',
    typeof obj.kind === 'string' ? obj.kind : '',
  );
  const validate = meta ? limitsValidators().get(meta.schemaFile) : undefined;
  if (!validate || validate(obj)) return undefined;
  const err = validate.errors?.[0];
  return err ? describe(err, obj) : undefined;
}

function dedupe(problems: SchemaProblem[]): SchemaProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.field}\0${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function describe(err: ErrorObject, root: unknown): SchemaProblem {
  const segments = err.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const value = valueAt(root, segments);
  const params = err.params as Record<string, unknown>;
  let field = fieldPath(root, segments);
  let message: string;
  switch (err.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      field = fieldPath(root, [...segments, missing]);
      message = 'is required';
      break;
    }
    case 'type':
      message = `must be ${article(String(params.type))}, not ${kindOf(value)}`;
      break;
    case 'enum':
      message = `${show(value)} is not one of: ${(params.allowedValues as unknown[]).map(show).join(', ')}`;
      break;
    case 'pattern':
      message = `${show(value)} is not ${PATTERN_NAMES[String(params.pattern)] ?? `valid (must match ${String(params.pattern)})`}`;
      break;
    case 'minItems':
      message =
        Number(params.limit) === 1 ? 'must list at least one item' : `must list at least ${String(params.limit)} items`;
      break;
    case 'maxItems':
      message = `must list at most ${String(params.limit)} items`;
      break;
    case 'minLength':
      message =
        Number(params.limit) === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters long`;
      break;
    case 'maxLength':
      message = `must be at most ${String(params.limit)} characters long`;
      break;
    case 'maxChars':
      message = `must be at most ${String(err.schema)} characters long`;
      break;
    case 'maxProperties':
      message = `must have at most ${String(params.limit)} keys`;
      break;
    case 'minimum':
      message = `must be at least ${String(params.limit)}`;
      break;
    case 'maximum':
      message = `must be at most ${String(params.limit)}`;
      break;
    case 'format':
      message = `${show(value)} is not a valid ${String(params.format)}`;
      break;
    case 'additionalProperties': {
      field = fieldPath(root, [...segments, String(params.additionalProperty)]);
      message = 'is not a known field';
      break;
    }
    default:
      message = err.message ?? `fails the schema's ${err.keyword} check`;
  }
  return { field, message, rule: `schema.${err.keyword === 'maxChars' ? 'maxLength' : err.keyword}`, severity: 'deny' };
}

/**
 * Fields the schema does not declare: the apiserver silently prunes them, so say so before it does.
 * Runs on every admission review, so the walk keeps one path stack (`at`, pushed and popped) and one
 * output array, and builds a field path only for an unknown field it reports.
 */
function unknownFields(
  schema: Record<string, unknown>,
  value: unknown,
  at: string[],
  out: SchemaProblem[] = [],
): SchemaProblem[] {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return out;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!isRecord(items)) return out;
    for (let i = 0; i < value.length; i++) {
      at.push(String(i));
      unknownFields(items, value[i], at, out);
      at.pop();
    }
  } else if (isRecord(value)) {
    const props = isRecord(schema.properties) ? schema.properties : undefined;
    const extra = schema.additionalProperties;
    for (const k of Object.keys(value)) {
      const sub = props?.[k];
      const subSchema = isRecord(sub) ? sub : isRecord(extra) ? extra : undefined;
      if (subSchema) {
        at.push(k);
        unknownFields(subSchema, value[k], at, out);
        at.pop();
      } else if (props && extra === undefined && !(at.length === 0 && k === 'status')) {
        const hint = closest(k, Object.keys(props));
        out.push({
          field: fieldPath(undefined, [...at, k]),
          message: `is not a field of this kind and would be dropped by the apiserver${hint ? ` (did you mean "${hint}"?)` : ''}`,
          rule: 'schema.unknown-field',
          severity: 'warn',
        });
      }
    }
  }
  return out;
}

function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** `spec.rules[0].path` from path segments; array indexes in brackets, odd keys quoted. */
export function fieldPath(root: unknown, segments: string[]): string {
  let out = '';
  let node = root;
  for (const seg of segments) {
    if (Array.isArray(node) || (node === undefined && /^\d+$/.test(seg) && out !== '')) out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
    node = isRecord(node) || Array.isArray(node) ? (node as Record<string, unknown>)[seg] : undefined;
  }
  return out;
}

function valueAt(root: unknown, segments: string[]): unknown {
  let node = root;
  for (const seg of segments)
    node = isRecord(node) || Array.isArray(node) ? (node as Record<string, unknown>)[seg] : undefined;
  return node;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${show(v)}`;
}

function article(type: string): string {
  const names: Record<string, string> = {
    object: 'an object',
    array: 'a list',
    string: 'a string',
    integer: 'an integer',
    number: 'a number',
    boolean: 'true or false',
  };
  return type
    .split(',')
    .map((t) => names[t] ?? t)
    .join(' or ');
}

function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
