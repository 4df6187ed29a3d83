// target.template rendered as ESO v0.16.2 renders it (externalsecret_controller_template.go
// applyTemplate, templating/parser.go, template/v2 Execute), in ESO's order: templateFrom entries (each
// one's configMap items, secret items, literal), then template.data, then metadata.labels, then
// metadata.annotations — a later one overwrites an earlier key. Scopes: `Values` renders each value,
// named by its key; `KeysAndValues` renders the whole text, named by itself, and reads the result as a
// YAML map of strings (sigs.k8s.io/yaml into map[string]string: scalars become their Go text, a list
// or a map is an error, as in ESO). Template sources (ConfigMaps, Secrets) come from the caller:
// this module does no I/O. No message quotes a value: they go into status and Events.
import { parseDocument } from 'yaml';
import type { ExternalSecretTarget } from '../schemas/types.ts';
import { goStringMap, renderTemplateBytes, TemplateError, type GoMap } from './template.ts';

type Template = NonNullable<ExternalSecretTarget['template']>;
type TemplateFrom = NonNullable<Template['templateFrom']>[number];
type Into = 'data' | 'labels' | 'annotations';

/** A ConfigMap or Secret a templateFrom entry reads, as the caller found it (undefined: not found). */
export interface TemplateSourceObject {
  /** ConfigMap data (text) or Secret data (bytes). */
  data: ReadonlyMap<string, Buffer>;
}

export interface TemplateSources {
  configMap(name: string): TemplateSourceObject | undefined;
  secret(name: string): TemplateSourceObject | undefined;
}

export const NO_TEMPLATE_SOURCES: TemplateSources = { configMap: () => undefined, secret: () => undefined };

/** A templateFrom source that does not exist (yet): the ExternalSecret waits for it (Ready False). */
export class TemplateSourceMissingError extends TemplateError {}

export interface RenderedTemplate {
  data: Map<string, Buffer>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

let fieldObserver: ((where: string) => void) | undefined;

/**
 * Be told the field path of each template before it renders (the render worker writes it where the
 * controller can read it after a deadline, to name the field in its error). One observer at a time.
 */
export function observeTemplateFields(fn: ((where: string) => void) | undefined): void {
  fieldObserver = fn;
}

function render(src: string, name: string, values: GoMap, where: string): Buffer {
  fieldObserver?.(where);
  try {
    return renderTemplateBytes(src, values, name);
  } catch (e) {
    // TemplateError messages name positions, functions and types, never values: safe for status. Any
    // other error gets a fixed message with the field path (its text could quote the data).
    if (e instanceof TemplateError) throw new TemplateError(`${where}: ${e.message}`);
    throw new TemplateError(`${where}: the template failed (details withheld: they could contain secret data)`);
  }
}

/**
 * The rendered text of a KeysAndValues template as ESO reads it: YAML 1.1 (goyaml.v2) read into a
 * map[string]string by sigs.k8s.io/yaml, which turns scalars into strings on the way (an int as its
 * decimal, a float as Go's FormatFloat(f, 'g', -1, 32), a bool as true/false, null as ""); a list or a
 * map as a value is an error. The text is secret, its keys included (they are rendered too), and so is
 * where in it an error is (a column is the length of what came before): no message quotes a key, an
 * alias or a position of the rendered text, only the field of the template and the kind of error.
 */
function parseKeysAndValues(rendered: Buffer, where: string): Map<string, string> {
  const text = rendered.toString('utf8');
  const doc = parseDocument(text, {
    version: '1.1',
    intAsBigInt: true,
    logLevel: 'silent',
    prettyErrors: false,
    uniqueKeys: true,
  });
  if (doc.errors.length > 0) {
    throw new TemplateError(
      `${where}: the rendered template is not valid YAML; the rendered text and the error's position in it are not shown because they contain secret data`,
    );
  }
  let v: unknown;
  try {
    v = doc.toJS({ maxAliasCount: 100 });
  } catch {
    // An alias without its anchor, or too many aliases: the parser's message names the alias (rendered text).
    throw new TemplateError(
      `${where}: the rendered template is not valid YAML (an alias cannot be resolved); the rendered text is not shown because it contains secret data`,
    );
  }
  const out = new Map<string, string>();
  if (v === null || v === undefined) return out;
  if (typeof v !== 'object' || Array.isArray(v))
    throw new TemplateError(
      `${where}: could not unmarshal template to 'map[string][]byte': the rendered template is not a YAML map`,
    );
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (x === null) out.set(k, '');
    else if (typeof x === 'string') out.set(k, x);
    else if (typeof x === 'bigint') out.set(k, x.toString());
    else if (typeof x === 'number') out.set(k, formatFloat32(x));
    else if (typeof x === 'boolean') out.set(k, x ? 'true' : 'false');
    else
      throw new TemplateError(
        `${where}: could not unmarshal template to 'map[string][]byte': a value is a ${Array.isArray(x) ? 'list' : 'map'}, not a string (the key is not shown: it is rendered text)`,
      );
  }
  return out;
}

/** strconv.FormatFloat(f, 'g', -1, 32): the shortest digits that read back as the same float32. */
export function formatFloat32(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const f = Math.fround(x);
  let digits = '0';
  let exp = 0;
  if (f !== 0) {
    for (let p = 1; p <= 9; p++) {
      const t = Math.abs(f).toExponential(p - 1);
      if (Math.fround(Number(t)) === Math.abs(f)) {
        const [m = '0', e = '0'] = t.split('e');
        digits = m.replace('.', '').replace(/0+$/, '') || '0';
        exp = Number(e);
        break;
      }
    }
  }
  const sign = f < 0 || Object.is(f, -0) ? '-' : '';
  if (exp < -4 || exp >= 21) {
    const mant = digits.length > 1 ? `${digits[0]!}.${digits.slice(1)}` : digits;
    return `${sign}${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp >= 6 && exp < 21) {
    // shortest %g switches to an exponent from 1e6 on (eprec 6)
    const mant = digits.length > 1 ? `${digits[0]!}.${digits.slice(1)}` : digits;
    return `${sign}${mant}e+${String(exp).padStart(2, '0')}`;
  }
  const dp = exp + 1;
  if (dp <= 0) return `${sign}0.${'0'.repeat(-dp)}${digits}`;
  if (dp >= digits.length) return sign + digits + '0'.repeat(dp - digits.length);
  return `${sign}${digits.slice(0, dp)}.${digits.slice(dp)}`;
}

function into(target: string | undefined, where: string): Into {
  switch ((target ?? 'Data').toLowerCase()) {
    case 'data':
      return 'data';
    case 'labels':
      return 'labels';
    case 'annotations':
      return 'annotations';
    default:
      throw new TemplateError(`${where}.target: ${JSON.stringify(target)} is not one of Data, Annotations, Labels`);
  }
}

/** Render target.template. `initial` is the data already in place (ESO: provider data with mergePolicy Merge). */
export function renderTargetTemplate(
  tpl: Template,
  providerData: ReadonlyMap<string, Buffer>,
  sources: TemplateSources,
  initial: Map<string, Buffer>,
): RenderedTemplate {
  const values = goStringMap(providerData);
  const out: RenderedTemplate = { data: initial, labels: {}, annotations: {} };
  const apply = (to: Into, k: string, v: Buffer): void => {
    if (to === 'data') out.data.set(k, v);
    else out[to][k] = v.toString('utf8');
  };
  const execute = (
    tplMap: Iterable<[string, Buffer]>,
    scope: string | undefined,
    to: Into,
    where: (key: string) => string,
  ): void => {
    for (const [k, v] of tplMap) {
      const text = v.toString('utf8');
      if ((scope ?? 'Values') === 'KeysAndValues') {
        for (const [rk, rv] of parseKeysAndValues(render(text, text, values, where(k)), where(k)))
          apply(to, rk, Buffer.from(rv, 'utf8'));
      } else apply(to, k, render(text, k, values, where(k)));
    }
  };

  (tpl.templateFrom ?? []).forEach((from: TemplateFrom, i) => {
    const field = `spec.target.template.templateFrom[${i}]`;
    const to = into(from.target, field);
    for (const [kind, ref] of [
      ['configMap', from.configMap],
      ['secret', from.secret],
    ] as const) {
      if (!ref) continue;
      const obj = kind === 'configMap' ? sources.configMap(ref.name) : sources.secret(ref.name);
      if (!obj)
        throw new TemplateSourceMissingError(
          `${field}.${kind}: ${kind === 'configMap' ? 'ConfigMap' : 'Secret'} ${JSON.stringify(ref.name)} not found in the ExternalSecret's namespace`,
        );
      (ref.items ?? []).forEach((item, j) => {
        const val = obj.data.get(item.key);
        if (val === undefined)
          throw new TemplateSourceMissingError(
            `${field}.${kind}.items[${j}].key: ${kind === 'configMap' ? 'ConfigMap' : 'Secret'} ${JSON.stringify(ref.name)} has no key ${JSON.stringify(item.key)}`,
          );
        execute([[item.key, val]], item.templateAs, to, () => `${field}.${kind}.items[${j}]`);
      });
    }
    if (from.literal !== undefined)
      execute([[from.literal, Buffer.from(from.literal, 'utf8')]], 'KeysAndValues', to, () => `${field}.literal`);
  });
  const asBuffers = (m: Record<string, string | undefined> | undefined): Array<[string, Buffer]> =>
    Object.entries(m ?? {})
      .filter((e): e is [string, string] => e[1] !== undefined)
      .map(([k, v]) => [k, Buffer.from(v, 'utf8')]);
  execute(asBuffers(tpl.data), 'Values', 'data', (k) => `spec.target.template.data[${JSON.stringify(k)}]`);
  execute(
    asBuffers(tpl.metadata?.labels),
    'Values',
    'labels',
    (k) => `spec.target.template.metadata.labels[${JSON.stringify(k)}]`,
  );
  execute(
    asBuffers(tpl.metadata?.annotations),
    'Values',
    'annotations',
    (k) => `spec.target.template.metadata.annotations[${JSON.stringify(k)}]`,
  );
  return out;
}

/** The ConfigMaps and Secrets an ExternalSecret's templates read (same namespace: names only). */
export function templateSourceRefs(target: ExternalSecretTarget | undefined): {
  configMaps: string[];
  secrets: string[];
} {
  const from = target?.template?.templateFrom ?? [];
  return {
    configMaps: [...new Set(from.flatMap((f) => (f.configMap ? [f.configMap.name] : [])))],
    secrets: [...new Set(from.flatMap((f) => (f.secret ? [f.secret.name] : [])))],
  };
}
