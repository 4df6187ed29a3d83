// Go's text/template: lex, parse, exec and its builtin functions. The one import of this package for
// code outside golang/.
export { lexTemplate, type Item, type ItemType } from './lex.ts';
export { TemplateError, TemplateExecError } from '../errors.ts';
export { functionsUsed, parseTemplateSet, type TemplateSet } from './parse.ts';
export { execute, withRenderDeadline } from './exec.ts';
export { GO_BUILTINS } from './builtins.ts';
