// `npm run generate`: derive the CRDs (charts/vaultgate/crds/) and the TypeScript types
// (schemas/types.generated.ts) from the JSON Schemas, which are the single source of truth.
// `--check` writes nothing and exits 1 when a generated file differs from what is on disk (CI).
import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';
import { stringify } from 'yaml';
import type { KindMeta } from './kind-meta.ts';
import { KINDS } from './kinds.ts';
import { resolveRefs } from './schema-refs.ts';

const SCHEMAS_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = join(SCHEMAS_DIR, '..');
export const CRD_DIR = join(ROOT, 'charts', 'vaultgate', 'crds');
/**
 * ESO-group CRDs are not in crds/ (Helm installs those unconditionally): the chart renders them from
 * here only when the cluster has no ESO CRDs of its own (templates/eso-crds.yaml, eso.installCRDs).
 */
export const ESO_CRD_DIR = join(ROOT, 'charts', 'vaultgate', 'files', 'eso-crds');
const ESO_GROUP = 'external-secrets.io';
export const TYPES_FILE = join(SCHEMAS_DIR, 'types.generated.ts');

/** Keywords a CRD's openAPIV3Schema rejects (apiextensions.k8s.io/v1 JSONSchemaProps has no such field) or that only serve our tooling. */
const NOT_IN_CRD = new Set(['$schema', '$id', '$comment', 'tsType', 'definitions', '$defs', 'examples']);

const readSchema = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(SCHEMAS_DIR, file), 'utf8')) as Record<string, unknown>;

/** A schema with its `$ref`s to other schema files resolved (schema-refs.ts). */
export function loadSchema(file: string): Record<string, unknown> {
  return resolveRefs(readSchema(file), readSchema);
}

/** The schema as a CRD accepts it: drop tooling keywords, `const` → one-value `enum`, no `additionalProperties: false` (CRDs prune instead). */
export function toCrdSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toCrdSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (NOT_IN_CRD.has(key)) continue;
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'const') {
      out.enum = [value];
      continue;
    }
    // Property names and enum values are data, not schema: copy them without rewriting keys.
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toCrdSchema(v)]),
      );
      continue;
    }
    out[key] =
      key === 'enum' || key === 'default' || key === 'required' || key === 'x-kubernetes-validations'
        ? value
        : toCrdSchema(value);
  }
  return out;
}

/**
 * The apiserver forbids anything but `type: object` on the root `metadata` of a CRD schema
 * ("must not specify anything other than name and generateName"): keep only the type there.
 */
function rootSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties as Record<string, unknown> | undefined;
  if (!properties?.metadata) return schema;
  return { ...schema, properties: { ...properties, metadata: { type: 'object' } } };
}

/** One CRD per group + plural; the first KindMeta listed for it is the storage version. */
export function buildCrd(metas: KindMeta[]): Record<string, unknown> {
  const first = metas[0];
  if (!first) throw new Error('buildCrd needs at least one KindMeta');
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${first.plural}.${first.group}`,
      labels: { 'app.kubernetes.io/name': 'vaultgate', 'app.kubernetes.io/part-of': 'vaultgate' },
    },
    spec: {
      group: first.group,
      names: {
        kind: first.kind,
        listKind: `${first.kind}List`,
        plural: first.plural,
        singular: first.singular,
        shortNames: first.shortNames,
        ...(first.categories?.length ? { categories: first.categories } : {}),
      },
      scope: first.scope,
      versions: metas.map((m, i) => ({
        name: m.version,
        served: true,
        storage: i === 0,
        ...(m.statusSubresource ? { subresources: { status: {} } } : {}),
        additionalPrinterColumns: m.printerColumns,
        schema: { openAPIV3Schema: rootSchema(toCrdSchema(loadSchema(m.schemaFile)) as Record<string, unknown>) },
      })),
    },
  };
}

function crdFiles(): Map<string, string> {
  const byCrd = new Map<string, KindMeta[]>();
  for (const k of KINDS) {
    const name = `${k.plural}.${k.group}`;
    byCrd.set(name, [...(byCrd.get(name) ?? []), k]);
  }
  const files = new Map<string, string>();
  for (const [name, metas] of byCrd) {
    const sources = [...new Set(metas.map((m) => `schemas/${m.schemaFile}`))].join(', ');
    const header = `# Generated by schemas/generate.ts from ${sources}. Do not edit; run \`npm run generate\`.\n`;
    const group = metas[0]?.group ?? '';
    const dir = group === ESO_GROUP || group.endsWith(`.${ESO_GROUP}`) ? ESO_CRD_DIR : CRD_DIR;
    files.set(join(dir, `${name}.yaml`), header + stringify(buildCrd(metas), { lineWidth: 0 }));
  }
  return files;
}

/**
 * json-schema-to-typescript compiles one schema at a time, so shared shapes (Condition, …) come out
 * once per schema: keep each declaration once and refuse two different ones under the same name.
 */
function mergeDeclarations(chunks: string[]): string {
  const seen = new Map<string, string>();
  const out: string[] = [];
  for (const chunk of chunks) {
    // Declarations start at column 0 with an optional JSDoc comment; split before each such start.
    const decls = chunk
      .split(/(?<!\*\/)\n(?=(?:\/\*\*[\s\S]*?\*\/\n)?export )/)
      .map((d) => d.trim())
      .filter(Boolean);
    for (const decl of decls) {
      const name = /export (?:interface|type) (\w+)/.exec(decl)?.[1];
      if (!name) throw new Error(`unexpected generated declaration:\n${decl.slice(0, 200)}`);
      const previous = seen.get(name);
      if (previous === undefined) {
        seen.set(name, decl);
        out.push(decl);
      } else if (previous !== decl)
        throw new Error(`two different generated types are named ${name}: give one schema a distinct title`);
    }
  }
  return out.join('\n\n');
}

async function typesFile(): Promise<string> {
  const chunks: string[] = [];
  for (const file of [...new Set(KINDS.map((k) => k.schemaFile))]) {
    const schema = loadSchema(file);
    chunks.push(
      await compile(schema, typeof schema.title === 'string' ? schema.title : file, {
        bannerComment: '',
        additionalProperties: false,
        strictIndexSignatures: true,
        unknownAny: true,
        ignoreMinAndMaxItems: true,
        format: true,
        cwd: SCHEMAS_DIR,
        style: { singleQuote: true, printWidth: 120 },
      }),
    );
  }
  return [
    '// Generated by schemas/generate.ts from schemas/*.schema.json. Do not edit; run `npm run generate`.',
    '',
    '/** The parts of metav1.ObjectMeta vaultgate reads; the rest passes through untouched. */',
    'export interface ObjectMeta {',
    '  name?: string;',
    '  namespace?: string;',
    '  uid?: string;',
    '  generation?: number;',
    '  resourceVersion?: string;',
    '  labels?: { [k: string]: string };',
    '  annotations?: { [k: string]: string };',
    '  finalizers?: string[];',
    '  deletionTimestamp?: string;',
    '  creationTimestamp?: string;',
    '  [k: string]: unknown;',
    '}',
    '',
    mergeDeclarations(chunks),
    '',
  ].join('\n');
}

/** Every generated file and its expected content. */
export async function generatedFiles(): Promise<Map<string, string>> {
  const files = crdFiles();
  files.set(TYPES_FILE, await typesFile());
  return files;
}

/** Files whose content on disk differs from what would be generated, plus stray generated CRDs. */
export async function staleFiles(): Promise<Array<{ file: string; summary: string }>> {
  const files = await generatedFiles();
  const stale: Array<{ file: string; summary: string }> = [];
  for (const [file, want] of files) {
    const have = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (have === want) continue;
    stale.push({ file: relative(ROOT, file), summary: have === undefined ? 'missing' : diffSummary(have, want) });
  }
  for (const dir of [CRD_DIR, ESO_CRD_DIR]) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const file = join(dir, name);
      if (
        name.endsWith('.yaml') &&
        !files.has(file) &&
        readFileSync(file, 'utf8').startsWith('# Generated by schemas/generate.ts')
      ) {
        stale.push({ file: relative(ROOT, file), summary: 'no longer generated (kind removed?)' });
      }
    }
  }
  return stale;
}

function diffSummary(have: string, want: string): string {
  const a = have.split('\n');
  const b = want.split('\n');
  let first = 0;
  while (first < a.length && first < b.length && a[first] === b[first]) first++;
  let changed = 0;
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) changed++;
  return `${changed} line(s) differ, first at line ${first + 1}: on disk ${JSON.stringify(a[first] ?? '<end>')}, generated ${JSON.stringify(b[first] ?? '<end>')}`;
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--check')) {
    const stale = await staleFiles();
    if (stale.length === 0) {
      process.stdout.write('generated files are up to date\n');
      return 0;
    }
    process.stderr.write(
      `stale generated files (run \`npm run generate\`):\n${stale.map((s) => `  ${s.file}: ${s.summary}`).join('\n')}\n`,
    );
    return 1;
  }
  for (const [file, content] of await generatedFiles()) {
    mkdirSync(dirname(file), { recursive: true });
    const old = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (old !== content) {
      writeFileSync(file, content);
      process.stdout.write(`wrote ${relative(ROOT, file)}\n`);
    }
  }
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`generate: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  }
}
