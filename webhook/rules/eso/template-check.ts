// Admission's check of an ESO template: the controller's own parser (eso/template-parse.ts, Go's
// text/template grammar with ESO's function map), so admission refuses exactly what the controller
// could not render: Go's syntax errors, functions Go does not know ("not defined", as ESO's parser says)
// and functions ESO has but vaultgate refuses, each named with the reason (eso/template-supported.ts).
// Messages never repeat template text: a template may embed literal secret material.
import { functionsUsed, parseTemplateSet, TemplateError } from '../../../golang/template/index.ts';
import { isEsoTemplateFunction, isSupportedTemplateFunction, LAZY_BUILTINS, refusalReason } from '../../../eso/function-map.ts';

export { lexTemplate } from '../../../golang/template/index.ts';

export interface TemplateIssue {
  kind: 'syntax' | 'function';
  /** The refused function's name (code, never template text). */
  name?: string;
  message: string;
}

const known = (name: string): boolean => LAZY_BUILTINS.includes(name) || isEsoTemplateFunction(name);

/** What in a template Go would refuse to parse, or vaultgate refuses to render. [] = fine. */
export function checkTemplate(src: string): TemplateIssue[] {
  let set;
  try {
    set = parseTemplateSet(Buffer.from(src, 'utf8').toString('latin1'), 'template', known);
  } catch (e) {
    const message = e instanceof TemplateError ? e.message : 'the template could not be parsed';
    return [{ kind: 'syntax', message: `template syntax error at ${message}` }];
  }
  const issues: TemplateIssue[] = [];
  for (const f of functionsUsed(set)) {
    if (LAZY_BUILTINS.includes(f) || isSupportedTemplateFunction(f)) continue;
    issues.push({ kind: 'function', name: f, message: `template function "${f}" is not supported by vaultgate: ${refusalReason(f)!}` });
  }
  return issues;
}
