// ESO's template engine v2 in vaultgate: Go's text/template (template-lex/parse/exec.ts) with the
// functions ESO registers (template-supported.ts), over Go values (template-values.ts). A function ESO
// has and vaultgate refuses fails by name with the reason, never silently; everything else renders as
// ESO renders it (test/eso/go-differential.test.ts compares with Go's own text/template and Sprig).
import { execute } from '../golang/template/index.ts';
import { functionsUsed, parseTemplateSet, TemplateError, type TemplateSet } from '../golang/template/index.ts';
import { isEsoTemplateFunction, isSupportedTemplateFunction, LAZY_BUILTINS, refusalReason, TEMPLATE_FUNCTIONS } from './function-map.ts';
import { GoMap, goStringBytes, goStringMap as toGoStringMap, utf8Text } from '../golang/index.ts';

export { TemplateError, TemplateExecError } from '../golang/template/index.ts';
export { GoMap } from '../golang/index.ts';

const parsedCache = new Map<string, TemplateSet>();
const hasFunction = (name: string): boolean => LAZY_BUILTINS.includes(name) || isEsoTemplateFunction(name);

/** Parse as ESO does (the template named `name`), then refuse the functions vaultgate does not render. */
function parse(src: string, name: string): TemplateSet {
  const key = `${name}\0${src}`;
  let set = parsedCache.get(key);
  if (!set) {
    set = parseTemplateSet(Buffer.from(src, 'utf8').toString('latin1'), Buffer.from(name, 'utf8').toString('latin1'), hasFunction);
    if (parsedCache.size > 5000) parsedCache.clear();
    parsedCache.set(key, set);
  }
  for (const f of functionsUsed(set)) {
    if (!LAZY_BUILTINS.includes(f) && !isSupportedTemplateFunction(f)) throw new TemplateError(`function "${f}" is not supported by vaultgate: ${refusalReason(f)!}`);
  }
  return set;
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
