// The part of ESO's template engine v2 (Go text/template + Sprig, runtime/template/v2/template.go)
// that vaultgate supports. Admission refuses templates using anything else; the controller's
// template engine implements exactly this list (agreement between webhook and reconciler: change
// both together). Kept small on purpose: each entry is a function the controller must render
// exactly as Go/Sprig does.

/** Go text/template built-in functions. */
const GO_BUILTINS = ['and', 'or', 'not', 'len', 'index', 'print', 'printf', 'println', 'eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const;

/** Sprig string functions (same names and argument order as Sprig v3). */
const SPRIG_STRINGS = [
  'upper', 'lower', 'title', 'trim', 'trimAll', 'trimPrefix', 'trimSuffix', 'replace', 'contains',
  'hasPrefix', 'hasSuffix', 'quote', 'squote', 'cat', 'indent', 'nindent', 'repeat', 'substr', 'trunc',
  'nospace', 'splitList', 'join', 'toString', 'default', 'empty', 'coalesce', 'ternary',
] as const;

/** Encodings and structured data, the ones ESO users reach for (docker config, JSON blobs). */
const ENCODINGS = ['b64enc', 'b64dec', 'toJson', 'fromJson', 'toYaml', 'fromYaml'] as const;

export const SUPPORTED_TEMPLATE_FUNCTIONS: readonly string[] = [...GO_BUILTINS, ...SPRIG_STRINGS, ...ENCODINGS];

/**
 * Actions beyond plain pipelines. Only conditionals: `range`, `with`, `define`, `template`, `block`,
 * `break`, `continue` and variables (`$x`, `:=`) are not supported.
 */
export const SUPPORTED_TEMPLATE_KEYWORDS: readonly string[] = ['if', 'else', 'end'];

/** Every keyword of Go's text/template grammar, supported or not (so they are not taken for functions). */
export const GO_TEMPLATE_KEYWORDS: readonly string[] = ['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue'];

const functions = new Set(SUPPORTED_TEMPLATE_FUNCTIONS);
const keywords = new Set(SUPPORTED_TEMPLATE_KEYWORDS);

export function isSupportedTemplateFunction(name: string): boolean {
  return functions.has(name);
}

export function isSupportedTemplateKeyword(name: string): boolean {
  return keywords.has(name);
}
