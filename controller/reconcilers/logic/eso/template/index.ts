// ESO template engine v2, as far as vaultgate supports it: Go text/template syntax (parse.ts, exec.ts)
// with the functions admission allows (webhook/rules/eso/template-subset.ts). Anything else fails with
// a message naming the function, never silently.
import { execute, type TemplateFunction } from './exec.ts';
import { ALL_FUNCTIONS } from './functions.ts';
import { functionsUsed, parseTemplate, TemplateError, type Node } from './parse.ts';
import { SUPPORTED_TEMPLATE_FUNCTIONS } from './supported.ts';

export { TemplateError };

function functionMap(allowed: readonly string[]): Map<string, TemplateFunction> {
  const m = new Map<string, TemplateFunction>();
  for (const name of allowed) {
    const fn = ALL_FUNCTIONS.get(name);
    if (fn) m.set(name, fn);
  }
  return m;
}

const DEFAULT_FUNCS = functionMap(SUPPORTED_TEMPLATE_FUNCTIONS);
const parsedCache = new Map<string, Node[]>();

function parseCached(src: string): Node[] {
  let nodes = parsedCache.get(src);
  if (!nodes) {
    nodes = parseTemplate(src);
    if (parsedCache.size > 5000) parsedCache.clear();
    parsedCache.set(src, nodes);
  }
  return nodes;
}

/** Render one template against `data` (ESO passes the secret map as strings). Throws TemplateError. */
export function renderTemplate(src: string, data: unknown, funcs: ReadonlyMap<string, TemplateFunction> = DEFAULT_FUNCS): string {
  return execute(parseCached(src), data, funcs);
}

/** Problems with a template before running it: syntax errors and functions vaultgate does not support. */
export function templateProblems(src: string, funcs: ReadonlyMap<string, TemplateFunction> = DEFAULT_FUNCS): string[] {
  let nodes: Node[];
  try {
    nodes = parseCached(src);
  } catch (e) {
    return [e instanceof Error ? e.message : String(e)];
  }
  return [...functionsUsed(nodes)].filter((f) => f !== 'and' && f !== 'or' && !funcs.has(f)).map((f) => `function "${f}" is not supported by vaultgate`);
}
