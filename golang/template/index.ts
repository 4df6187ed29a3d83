// Go's text/template: lex, parse, exec and its builtin functions. The one import of this package for
// code outside golang/.
export * from './lex.ts';
export * from './parse.ts';
export * from './exec.ts';
export * from './builtins.ts';
