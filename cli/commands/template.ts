// `vaultgate template`: ESO's `esoctl template` with the same flags, rendered by the controller's own
// engine under the controller's limits (a worker thread, the 2 s deadline, the heap limit, the work
// budget: controller/reconcilers/render-pool.ts), so a template behaves here as it will in the cluster,
// and its errors read the same (field, rule, never a value). Exit 0 rendered, 1 a render error, 2 bad input.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseDocument, stringify } from 'yaml';
import type { ExternalSecretTarget } from '../../schemas/types.ts';
import { ANNOTATION_DATA_HASH, LABEL_MANAGED } from '../../eso/target.ts';
import type { TemplateSourceObject, TemplateSources } from '../../eso/target-template.ts';
import { TemplateError } from '../../golang/template/index.ts';
import { RenderPool } from '../../controller/main.ts';
import { defineCommand, FlagReader, type FlagSection, HELP_FLAG } from './flags.ts';

/** Every flag of `vaultgate template`: esoctl template's. */
export const TEMPLATE_SECTIONS: readonly FlagSection[] = [
  {
    title: 'Options',
    flags: [
      {
        name: 'source-templated-object',
        type: 'string',
        arg: 'file',
        required: true,
        help: 'the ExternalSecret or PushSecret (YAML or JSON)',
      },
      {
        name: 'source-secret-data-file',
        type: 'string',
        arg: 'file',
        required: true,
        help: "the secret data: a YAML/JSON map of key to base64 value, as a Secret's data (a whole Secret manifest is read for its data)",
      },
      {
        name: 'template-from-config-map',
        type: 'string',
        arg: 'file',
        help: 'a ConfigMap that templateFrom[].configMap reads',
      },
      { name: 'template-from-secret', type: 'string', arg: 'file', help: 'a Secret that templateFrom[].secret reads' },
      { name: 'output', type: 'string', arg: 'file', help: 'write the Secret there instead of standard output' },
      HELP_FLAG,
    ],
  },
];

const helpText = (
  flagsHelp: string,
): string => `Usage: vaultgate template --source-templated-object <file> --source-secret-data-file <file> [options]

Renders the template of an ExternalSecret (spec.target.template) or a PushSecret (spec.template) over the
secret data you give, with the controller's engine and limits (a 2 s deadline, a memory limit, the work
budget), and prints the Secret it would produce. The flags are those of ESO's esoctl template.

${flagsHelp}
Exit status: 0 rendered, 1 the template failed to render (the message names the field and the rule,
never a value), 2 bad input (a missing flag or file, YAML that does not parse, an unsupported kind).
`;

const COMMAND = defineCommand('template', TEMPLATE_SECTIONS, helpText);
export const { help: TEMPLATE_HELP, options: TEMPLATE_OPTIONS } = COMMAND;

class InputError extends Error {}

function readYaml(flag: string, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`${flag}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const doc = parseDocument(text, { prettyErrors: false });
  // The parser's message quotes the text (secret data): the position only.
  if (doc.errors.length > 0)
    throw new InputError(
      `${flag}: ${file} is not valid YAML or JSON (line ${doc.errors[0]!.linePos?.[0].line ?? '?'})`,
    );
  return doc.toJS({ maxAliasCount: 100 }) as unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** key → base64 text, as a Secret's data (or the data of a whole Secret manifest). */
function base64Map(flag: string, v: unknown): Map<string, Buffer> {
  const m = isRecord(v) && v.kind === 'Secret' ? (v.data ?? {}) : (v ?? {});
  if (!isRecord(m)) throw new InputError(`${flag}: expected a map of key to base64 value`);
  const out = new Map<string, Buffer>();
  for (const [k, val] of Object.entries(m)) {
    if (
      typeof val !== 'string' ||
      !/^[A-Za-z0-9+/]*={0,2}$/.test(val.replace(/\s+/g, '')) ||
      val.replace(/\s+/g, '').length % 4 !== 0
    ) {
      throw new InputError(
        `${flag}: the value of key ${JSON.stringify(k)} is not base64 (values are given as a Secret's data)`,
      );
    }
    out.set(k, Buffer.from(val, 'base64'));
  }
  if (isRecord(v) && v.kind === 'Secret' && isRecord(v.stringData)) {
    for (const [k, val] of Object.entries(v.stringData)) out.set(k, Buffer.from(String(val), 'utf8'));
  }
  return out;
}

/** A ConfigMap or Secret file as a template source: serves refs to its own name (any name when it has none). */
function sourceFile(
  flag: string,
  file: string | undefined,
  kind: 'ConfigMap' | 'Secret',
): (name: string) => TemplateSourceObject | undefined {
  if (!file) return () => undefined;
  const obj = readYaml(flag, file);
  if (!isRecord(obj) || (obj.kind !== undefined && obj.kind !== kind))
    throw new InputError(`${flag}: ${file} is not a ${kind}`);
  const name = isRecord(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : undefined;
  let data: Map<string, Buffer>;
  if (kind === 'Secret') data = base64Map(flag, { ...obj, kind: 'Secret' });
  else {
    const d = obj.data ?? {};
    if (!isRecord(d)) throw new InputError(`${flag}: data must be a map`);
    data = new Map(Object.entries(d).map(([k, v]) => [k, Buffer.from(String(v), 'utf8')]));
  }
  return (ref) => (name === undefined || name === ref ? { data } : undefined);
}

interface Input {
  namespace: string;
  target: ExternalSecretTarget;
  data: Map<string, Buffer>;
  sources: TemplateSources;
  output?: string;
}

function readInput(flags: FlagReader): Input {
  const objectFile = flags.string('source-templated-object');
  const dataFile = flags.string('source-secret-data-file');
  if (objectFile === undefined) throw new InputError('--source-templated-object is required');
  if (dataFile === undefined) throw new InputError('--source-secret-data-file is required');
  const obj = readYaml('--source-templated-object', objectFile);
  if (!isRecord(obj)) throw new InputError('--source-templated-object: expected an ExternalSecret or a PushSecret');
  const spec = isRecord(obj.spec) ? obj.spec : {};
  let target: ExternalSecretTarget;
  if (obj.kind === 'ExternalSecret') {
    const t = isRecord(spec.target) ? spec.target : {};
    if (!isRecord(t.template))
      throw new InputError('--source-templated-object: the ExternalSecret has no spec.target.template');
    target = t;
  } else if (obj.kind === 'PushSecret') {
    if (!isRecord(spec.template))
      throw new InputError('--source-templated-object: the PushSecret has no spec.template');
    // As the controller renders it (pushsecret.ts): over the source Secret's data, keys it does not template kept.
    target = {
      template: { ...(spec.template as NonNullable<ExternalSecretTarget['template']>), mergePolicy: 'Merge' },
    };
  } else {
    throw new InputError(
      `--source-templated-object: unsupported template kind ${JSON.stringify(obj.kind ?? '')} (an ExternalSecret or a PushSecret)`,
    );
  }
  const cm = sourceFile('--template-from-config-map', flags.string('template-from-config-map'), 'ConfigMap');
  const secret = sourceFile('--template-from-secret', flags.string('template-from-secret'), 'Secret');
  const metadata = isRecord(obj.metadata) ? obj.metadata : {};
  const output = flags.string('output');
  return {
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : 'default',
    target,
    data: base64Map('--source-secret-data-file', readYaml('--source-secret-data-file', dataFile)),
    sources: { configMap: cm, secret },
    ...(output !== undefined ? { output } : {}),
  };
}

export async function run(argv: string[]): Promise<number> {
  const flags = COMMAND.parse(argv, (values) => new FlagReader(TEMPLATE_SECTIONS, values));
  if (typeof flags === 'number') return flags;
  let input: Input;
  try {
    input = readInput(flags);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    process.stderr.write(`vaultgate template: ${e.message}\n(see vaultgate template --help)\n`);
    return 2;
  }
  const pool = new RenderPool({ size: 1 });
  let text: string;
  try {
    const d = await pool.desiredSecret(input.namespace, input.target, input.data, {}, input.sources);
    // The Secret as the template makes it: the controller's bookkeeping (managed label, data hash) left out, as esoctl prints it.
    const labels = Object.fromEntries(Object.entries(d.labels).filter(([k]) => k !== LABEL_MANAGED));
    const annotations = Object.fromEntries(Object.entries(d.annotations).filter(([k]) => k !== ANNOTATION_DATA_HASH));
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        ...(Object.keys(labels).length ? { labels } : {}),
        ...(Object.keys(annotations).length ? { annotations } : {}),
      },
      ...(d.type ? { type: d.type } : {}),
      data: Object.fromEntries(
        [...d.data].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, v.toString('base64')]),
      ),
      ...(d.immutable ? { immutable: true } : {}),
    };
    text = stringify(secret);
  } catch (e) {
    // TemplateError messages name the field and the rule, never a value; anything else is not shown.
    process.stderr.write(
      `vaultgate template: ${e instanceof TemplateError ? e.message : 'the template failed (details withheld: they could contain secret data)'}\n`,
    );
    return 1;
  } finally {
    await pool.close();
  }
  if (input.output) {
    try {
      writeFileSync(input.output, text, { mode: 0o600 });
    } catch (e) {
      process.stderr.write(
        `vaultgate template: --output: cannot write ${input.output}: ${(e as NodeJS.ErrnoException).code ?? 'error'}\n`,
      );
      return 2;
    }
  } else process.stdout.write(text);
  return 0;
}
