// The leak-test corpus: every supported template function (eso/function-map.ts) called with a
// canary secret in every argument position, with 0 to 3 arguments, the other arguments drawn from values
// of every Go type a template can produce (string, int, bool, nil, list, map), directly and piped. Most
// calls fail (wrong count, wrong type, out of range, nil): each failure's message must not contain the
// canary. Shared by the engine test (test/eso/template-leak.test.ts) and the reconciler test
// (test/controller/reconcilers/eso-leak.test.ts).
import { SUPPORTED_TEMPLATE_FUNCTIONS } from '../../eso/function-map.ts';

/** Secret values: a plain one, one that breaks YAML when rendered into a templateFrom literal, one that is JSON. */
export const CANARY = 'canary-Zq9x7WvKp2';
export const CANARY_YAML = 'cnry: [unclosed "Yq8Lm3"';
export const CANARY_JSON = '{"cnry":"Jv4Tn6Rb"}';
/** Every string that must not appear outside the Secret (the distinctive parts of the canaries included). */
export const CANARY_NEEDLES = [CANARY, 'Zq9x7WvKp2', 'Yq8Lm3', 'Jv4Tn6Rb', Buffer.from(CANARY).toString('base64')];

/** The distinctive parts of the canaries, for canaryLeaks (test/eso/canary-variants.ts): their names (`.canary`) may be quoted. */
export const CANARY_TOKENS = ['Zq9x7WvKp2', 'Yq8Lm3', 'Jv4Tn6Rb'];

/**
 * A secret transformed as a template can transform it before it reaches an error (issue #21 item 3):
 * case, split and joined, encodings, quoting, truncation, formatting.
 */
export const CANARY_TRANSFORMS = [
  '.canary',
  '.canary | upper',
  '.canary | lower',
  '.canary | title',
  'splitList "" .canary | join "."',
  'splitList "" .canary | join " "',
  'splitList "" .canary | join ""',
  '.canary | b64enc',
  '.canary | quote',
  '.canary | squote',
  'printf "%q" .canary',
  'printf "%x" .canary',
  'trunc 12 .canary',
  'abbrev 12 .canary',
  'substr 3 13 .canary',
  'wrap 3 .canary',
  '.yaml',
  '.yaml | upper',
  '.json',
];

/**
 * Where a rendered (secret) text meets a parser or a check that can fail: a KeysAndValues literal whose
 * key is secret and whose value is a list or a map, invalid YAML after it, an alias named by it, a
 * duplicate key, `fail` with it.
 */
export function renderedTextShapes(t: string): string[] {
  return [
    `{{ ${t} }}: [1]`,
    `{{ ${t} }}: {a: 1}`,
    `{{ ${t} }}`,
    `k: {{ ${t} }}`,
    `k: [{{ ${t} }}`,
    `{{ ${t} }}: 1\n{{ ${t} }}: 2`,
    `k: "{{ ${t} }}`,
    `{{ fail (${t}) }}`,
    `k: {{ ${t} }}\nk2: [x`,
    `- {{ ${t} }}`,
    `k: *{{ ${t} }}`,
    `&{{ ${t} }} k: 1`,
    `k: !!int {{ ${t} }}`,
  ];
}

/** Template data as ESO passes it (map[string]string). */
export const LEAK_DATA: Record<string, string> = { canary: CANARY, yaml: CANARY_YAML, json: CANARY_JSON, int: '7' };

/** An argument holding secret data: each supported type, so type errors are tried with a secret too. */
const SECRET_ARGS = [
  '.canary',
  '.yaml',
  '.json',
  '(fromJson .json)',
  '(splitList "-" .canary)',
  '(b64dec .canary)',
  '(.canary | upper)',
  '.',
];
/** The other arguments: every Go type a template can produce, and a secret. */
const FILLERS = ['"x"', '1', '-1', '99', 'nil', 'true', '(fromJson .json)', '(splitList "," "a,b")', '.canary', '.int'];

/**
 * `maxPerFunction` bounds the calls per function (a deterministic stride through all combinations), so the
 * corpus stays within the fast tier now that ESO's whole function map (~200 functions) is supported.
 */
export function leakCorpus(
  opts: { fillers?: readonly string[]; secretArgs?: readonly string[]; maxPerFunction?: number } = {},
): string[] {
  const fillers = opts.fillers ?? FILLERS;
  const secrets = opts.secretArgs ?? SECRET_ARGS;
  const cap = opts.maxPerFunction ?? (opts.fillers ? 16 : 160);
  const all = new Set<string>();
  for (const fn of SUPPORTED_TEMPLATE_FUNCTIONS) {
    const out = new Set<string>();
    out.add(`{{ ${fn} }}`);
    for (const s of secrets) {
      out.add(`{{ ${fn} ${s} }}`);
      out.add(`{{ ${s} | ${fn} }}`);
      for (const f of fillers) {
        out.add(`{{ ${fn} ${s} ${f} }}`);
        out.add(`{{ ${fn} ${f} ${s} }}`);
        out.add(`{{ ${s} | ${fn} ${f} }}`);
        out.add(`{{ ${f} | ${fn} ${s} }}`);
      }
      for (const f of fillers.slice(0, 5)) {
        for (const g of fillers.slice(0, 5)) {
          out.add(`{{ ${fn} ${s} ${f} ${g} }}`);
          out.add(`{{ ${fn} ${f} ${s} ${g} }}`);
          out.add(`{{ ${fn} ${f} ${g} ${s} }}`);
        }
      }
    }
    const calls = [...out];
    const stride = Math.max(1, Math.ceil(calls.length / cap));
    calls.filter((_, i) => i % stride === 0).forEach((c) => all.add(c));
  }
  const out = all;
  // Failures outside function calls: fields of a secret, a secret as a function, range/if over it.
  for (const s of secrets) {
    out.add(`{{ ${s}.field }}`);
    out.add(`{{ (${s}).field.deeper }}`);
    out.add(`{{ ${s} "arg" }}`);
    out.add(`{{ if ${s} }}{{ ${s}.x }}{{ end }}`);
    out.add(`{{ index ${s} .canary }}`);
    out.add(`{{ index .canary ${s} }}`);
  }
  out.add('{{ index .canary .canary }}'); // the example: index .token .password
  out.add('{{ .missing }}');
  return [...out];
}
