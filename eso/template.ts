// ESO's template engine v2 in vaultgate: Go's text/template (golang/template/) with the functions ESO
// registers (function-map.ts), over Go values (golang/values.ts). A function ESO has and vaultgate
// refuses fails by name with the reason, never silently; everything else renders as ESO renders it
// (test/eso/go-differential.test.ts compares with Go's own text/template and Sprig). Admission checks a
// template with checkTemplate, the same parse-and-refuse step the engine runs before rendering, so it
// refuses exactly what the controller could not render.
import { execute, functionsUsed, parseTemplateSet, TemplateError, type TemplateSet } from '../golang/template/index.ts';
import {
  isEsoTemplateFunction,
  isSupportedTemplateFunction,
  LAZY_BUILTINS,
  refusalReason,
  TEMPLATE_FUNCTIONS,
} from './function-map.ts';
import { GoMap, goStringBytes, goStringMap as toGoStringMap, utf8Text } from '../golang/index.ts';

export { TemplateError, TemplateExecError } from '../golang/template/index.ts';
export { GoMap } from '../golang/index.ts';

/** A parsed template and the functions it uses that vaultgate refuses, in order of first use. */
interface CheckedTemplate {
  set: TemplateSet;
  refused: string[];
}

const known = (name: string): boolean => LAZY_BUILTINS.includes(name) || isEsoTemplateFunction(name);
const refusedMessage = (f: string): string => `function "${f}" is not supported by vaultgate: ${refusalReason(f)!}`;

/**
 * The one parse-and-refuse step: Go's parse with ESO's function map (the template named `name`), then
 * the functions it uses that vaultgate does not render. Throws Go's parse error (a TemplateError).
 */
function parseAndRefuse(src: string, name: string): CheckedTemplate {
  const set = parseTemplateSet(
    Buffer.from(src, 'utf8').toString('latin1'),
    Buffer.from(name, 'utf8').toString('latin1'),
    known,
  );
  const refused = [...functionsUsed(set)].filter((f) => !LAZY_BUILTINS.includes(f) && !isSupportedTemplateFunction(f));
  return { set, refused };
}

const parsedCache = new Map<string, CheckedTemplate>();

/** parseAndRefuse, cached (a controller renders the same templates at every refresh); throws on a refusal. */
function parse(src: string, name: string): TemplateSet {
  const key = `${name}\0${src}`;
  let checked = parsedCache.get(key);
  if (!checked) {
    checked = parseAndRefuse(src, name);
    if (parsedCache.size > 5000) parsedCache.clear();
    parsedCache.set(key, checked);
  }
  if (checked.refused.length > 0) throw new TemplateError(refusedMessage(checked.refused[0]!));
  return checked.set;
}

export interface TemplateIssue {
  kind: 'syntax' | 'function';
  /** The refused function's name (code, never template text). */
  name?: string;
  message: string;
}

/**
 * Admission's check: what in a template Go would refuse to parse (Go's syntax errors, functions Go does
 * not know: "not defined", as ESO's parser says), or vaultgate refuses to render (each function named
 * once, with the reason). [] = fine. Messages never repeat template text: a template may embed literal
 * secret material.
 */
export function checkTemplate(src: string): TemplateIssue[] {
  let checked: CheckedTemplate;
  try {
    checked = parseAndRefuse(src, 'template');
  } catch (e) {
    const message = e instanceof TemplateError ? e.message : 'the template could not be parsed';
    return [{ kind: 'syntax', message: `template syntax error at ${message}` }];
  }
  return checked.refused.map((f) => ({ kind: 'function', name: f, message: `template ${refusedMessage(f)}` }));
}

/** ESO's data map (map[string]string) from a record or from key/bytes pairs. */
export function goStringMap(data: Record<string, string> | Iterable<readonly [string, string | Uint8Array]>): GoMap {
  return toGoStringMap(Symbol.iterator in data ? data : Object.entries(data));
}

/**
 * Render one template against `data` as ESO does, to the bytes it writes. Throws TemplateError: phase
 * `parse` where Go's Parse fails (syntax, an unknown or refused function), `exec` where Execute does.
 * No message carries a value from `data`.
 */
export function renderTemplateBytes(src: string, data: GoMap, name = 'template'): Buffer {
  const set = parse(src, name);
  return goStringBytes(execute(set, data, TEMPLATE_FUNCTIONS));
}

/** renderTemplateBytes as text (UTF-8), for names and keys. */
export function renderTemplate(src: string, data: GoMap | Record<string, string>, name = 'template'): string {
  const m = data instanceof GoMap ? data : goStringMap(data);
  return utf8Text(execute(parse(src, name), m, TEMPLATE_FUNCTIONS));
}

/** Problems with a template before running it: syntax errors and functions vaultgate does not render. */
export function templateProblems(src: string): string[] {
  try {
    parse(src, 'template');
    return [];
  } catch (e) {
    return [e instanceof Error ? e.message : String(e)];
  }
}
