// The template functions the controller runs. Admission (webhook/rules/eso/template-subset.ts) refuses
// templates using anything else; this list must equal that one (a test compares them).
export const SUPPORTED_TEMPLATE_FUNCTIONS: readonly string[] = [
  'and', 'or', 'not', 'len', 'index', 'slice', 'print', 'println', 'printf', 'eq', 'ne', 'lt', 'le', 'gt', 'ge',
  'upper', 'lower', 'title', 'trim', 'trimAll', 'trimPrefix', 'trimSuffix', 'replace', 'contains', 'hasPrefix',
  'hasSuffix', 'repeat', 'substr', 'trunc', 'nospace', 'quote', 'squote', 'indent', 'nindent', 'splitList', 'join', 'cat',
  'default', 'empty', 'coalesce', 'ternary',
  'b64enc', 'b64dec', 'toString', 'toJson', 'toRawJson', 'toPrettyJson', 'fromJson', 'mustFromJson', 'toYaml', 'fromYaml',
  'sha1sum', 'sha256sum', 'atoi', 'int',
  'list', 'dict', 'get', 'hasKey', 'keys', 'first', 'last',
  'regexMatch', 'regexFind', 'regexReplaceAll', 'regexReplaceAllLiteral',
];
