// The errors of Go's text/template: a template that does not parse, or fails while it runs (a Go
// function's error or panic is one of those, golang/func.ts).
/**
 * A template failed. Messages name lines, fields, functions and Go types, never a value the template
 * computed or read: they go into status conditions, Events and logs, and template data is secret.
 */
export class TemplateError extends Error {
  // Every subclass keeps this name: the reconciler's safeMessage trusts messages of errors so named.
  override readonly name: string = 'TemplateError';
  /** Where Go's text/template would fail: `parse` (template.Parse) or `exec` (template.Execute). */
  readonly phase: 'parse' | 'exec' = 'parse';
}

/** An error while executing a parsed template (Go's ExecError). */
export class TemplateExecError extends TemplateError {
  override readonly phase = 'exec';
}
