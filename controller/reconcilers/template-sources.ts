// The ConfigMaps and Secrets an ExternalSecret's templateFrom reads (same namespace only: the schema has
// no namespace field, so a template never reads another namespace's objects). Read at every reconcile
// (level-triggered: the current content, never a remembered one): ConfigMaps from the informer cache
// main.ts keeps for them, Secrets with a GET (the Secret cache holds only managed target Secrets).
// Their fingerprint (kind, name, uid, resourceVersion — never content) is remembered per ExternalSecret
// once its Secret is synced, so a changed source makes the Secret out of date and re-renders it without
// waiting for a refresh. Remembered in memory, not on the Secret (ESO's Secrets carry no such mark and
// the side-by-side suite compares them): after a restart or a leader change each one renders once more.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../kube/objects.ts';
import { CONFIGMAPS, SECRETS } from '../../kube/resources.ts';
import type { ReconcileContext } from '../../kube/reconciler.ts';
import { templateSourceRefs, type TemplateSourceObject, type TemplateSources } from '../../eso/target-template.ts';
import { tryCache } from './lookups.ts';

/** Index on ExternalSecrets: `ConfigMap/<ns>/<name>` and `Secret/<ns>/<name>` of their template sources. */
export const TEMPLATE_SOURCE_INDEX = 'template-source';

type DataObject = KubeObject & { data?: Record<string, string> };

export function templateSourceIndex(obj: KubeObject): string[] {
  const ns = obj.metadata.namespace ?? '';
  const refs = templateSourceRefs(
    (obj as { spec?: { target?: Parameters<typeof templateSourceRefs>[0] } }).spec?.target,
  );
  return [...refs.configMaps.map((n) => `ConfigMap/${ns}/${n}`), ...refs.secrets.map((n) => `Secret/${ns}/${n}`)];
}

export interface ReadTemplateSources {
  sources: TemplateSources;
  /** undefined when the ExternalSecret has no configMap/secret templates. */
  fingerprint?: string;
  /** The Secret sources' values (secret data: kept out of status, Events and logs). */
  secretTexts: string[];
}

export async function readTemplateSources(
  ctx: ReconcileContext,
  namespace: string,
  target: Parameters<typeof templateSourceRefs>[0],
): Promise<ReadTemplateSources> {
  const refs = templateSourceRefs(target);
  if (refs.configMaps.length === 0 && refs.secrets.length === 0)
    return { sources: { configMap: () => undefined, secret: () => undefined }, secretTexts: [] };
  const cmCache = tryCache(ctx, CONFIGMAPS);
  const configMaps = new Map<string, DataObject | undefined>();
  for (const name of refs.configMaps) {
    configMaps.set(
      name,
      cmCache?.get(`${namespace}/${name}`) ?? (await ctx.client.get<DataObject>(CONFIGMAPS, name, namespace)),
    );
  }
  const secrets = new Map<string, DataObject | undefined>();
  for (const name of refs.secrets) secrets.set(name, await ctx.client.get<DataObject>(SECRETS, name, namespace));

  const asSource = (o: DataObject | undefined, encoding: 'utf8' | 'base64'): TemplateSourceObject | undefined =>
    o
      ? { data: new Map(Object.entries(o.data ?? {}).map(([k, v]) => [k, Buffer.from(v, encoding)] as const)) }
      : undefined;
  const secretTexts = [...secrets.values()].flatMap((s) =>
    Object.values(s?.data ?? {}).map((v) => Buffer.from(v, 'base64').toString('utf8')),
  );
  const h = createHash('sha256');
  for (const [kind, m] of [
    ['ConfigMap', configMaps],
    ['Secret', secrets],
  ] as const) {
    for (const [name, o] of [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      h.update(`${kind}/${name}@${o ? `${o.metadata.uid ?? ''}/${o.metadata.resourceVersion ?? ''}` : 'missing'}\n`);
  }
  return {
    sources: {
      configMap: (n) => asSource(configMaps.get(n), 'utf8'),
      secret: (n) => asSource(secrets.get(n), 'base64'),
    },
    fingerprint: h.digest('hex').slice(0, 32),
    secretTexts,
  };
}

/** The template-source fingerprint each ExternalSecret's Secret was last rendered from. */
export class RenderedSourceVersions {
  readonly #rendered = new Map<string, string>();
  /** Whether the Secret of `key` was rendered from the sources as they are now. */
  current(key: string, read: ReadTemplateSources): boolean {
    return read.fingerprint === undefined || this.#rendered.get(key) === read.fingerprint;
  }
  remember(key: string, read: ReadTemplateSources): void {
    if (read.fingerprint === undefined) this.#rendered.delete(key);
    else this.#rendered.set(key, read.fingerprint);
  }
}
