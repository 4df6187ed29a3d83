// Rule "eso.template.too-large": the template text of one ESO object, all its templates together, is
// at most MAX_TEMPLATE_TEXT characters. Checked by the size gate (webhook/review/size-gate.ts) before
// any template is parsed: parsing costs about a microsecond per character of dense template text, and
// ESO's CRDs bound a template by nothing but the request size, so without this a 3 MiB template held
// the webhook for seconds (past the apiserver's 5 s webhook timeout, where ESO's failurePolicy Ignore
// lets the object in unchecked). Lengths only: the text is never read, nor repeated in the message.
import type { Finding, KubeObject } from '../finding.ts';

/** As VaultPolicy's raw policy text (schemas/vaultpolicy.schema.json spec.policy maxLength). */
export const MAX_TEMPLATE_TEXT = 65536;

/** Where an ExternalSecret spec holds template text (`*` = every key of a map or item of a list). */
const EXTERNAL_SECRET_TEMPLATES = [
  'target.template.data.*',
  'target.template.metadata.labels.*',
  'target.template.metadata.annotations.*',
  'target.template.templateFrom.*.literal',
  'dataFrom.*.rewrite.*.transform.template',
];

/** Per kind: the template locations under `spec`. */
const TEMPLATE_PATHS: Record<string, string[]> = {
  ExternalSecret: EXTERNAL_SECRET_TEMPLATES,
  ClusterExternalSecret: EXTERNAL_SECRET_TEMPLATES.map((p) => `externalSecretSpec.${p}`),
  PushSecret: [
    ...EXTERNAL_SECRET_TEMPLATES.filter((p) => p.startsWith('target.template.')).map((p) => p.slice('target.'.length)),
    'dataTo.*.rewrite.*.transform.template',
  ],
};

/** Every string at a path pattern, with its kubectl-style field name. */
function stringsAt(
  node: unknown,
  pattern: string[],
  field: string,
  out: Array<{ field: string; length: number }>,
): void {
  if (pattern.length === 0) {
    if (typeof node === 'string') out.push({ field, length: node.length });
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const [head, ...rest] = pattern as [string, ...string[]];
  if (head !== '*') {
    if (!Array.isArray(node)) stringsAt((node as Record<string, unknown>)[head], rest, `${field}.${head}`, out);
    return;
  }
  if (Array.isArray(node))
    node.forEach((x, i) => {
      stringsAt(x, rest, `${field}[${i}]`, out);
    });
  else
    for (const [k, x] of Object.entries(node))
      stringsAt(x, rest, /^[A-Za-z_][A-Za-z0-9_-]*$/.test(k) ? `${field}.${k}` : `${field}[${JSON.stringify(k)}]`, out);
}

/** The total length of the strings at a path pattern (stringsAt without the field names). */
function lengthAt(node: unknown, pattern: readonly string[], from: number): number {
  if (from === pattern.length) return typeof node === 'string' ? node.length : 0;
  if (typeof node !== 'object' || node === null) return 0;
  const head = pattern[from]!;
  if (head !== '*')
    return Array.isArray(node) ? 0 : lengthAt((node as Record<string, unknown>)[head], pattern, from + 1);
  let n = 0;
  if (Array.isArray(node)) for (const x of node) n += lengthAt(x, pattern, from + 1);
  else for (const x of Object.values(node)) n += lengthAt(x, pattern, from + 1);
  return n;
}

const SPLIT_PATHS: Record<string, string[][]> = Object.fromEntries(
  Object.entries(TEMPLATE_PATHS).map(([kind, paths]) => [kind, paths.map((p) => p.split('.'))]),
);

/** The size gate's check for an ESO kind's templates: [] or one denial naming the field where the total passes the limit. */
export function templateSizeFindings(kind: string, o: KubeObject): Finding[] {
  const paths = SPLIT_PATHS[kind];
  if (!paths) return [];
  // Lengths first, on every review; the field names only for an object over the limit.
  let sum = 0;
  for (const p of paths) sum += lengthAt(o.spec, p, 0);
  if (sum <= MAX_TEMPLATE_TEXT) return [];
  const texts: Array<{ field: string; length: number }> = [];
  for (const p of paths) stringsAt(o.spec, p, 'spec', texts);
  let total = 0;
  for (const t of texts) {
    total += t.length;
    if (total > MAX_TEMPLATE_TEXT) {
      const all = texts.reduce((n, x) => n + x.length, 0);
      return [
        {
          field: t.field,
          rule: 'eso.template.too-large',
          severity: 'deny',
          message: `the object's templates hold ${all} characters together, more than vaultgate parses at admission (${MAX_TEMPLATE_TEXT}); split them over several objects`,
        },
      ];
    }
  }
  return [];
}
