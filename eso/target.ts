// The Secret an ExternalSecret should produce: provider data, through target.template (engine v2) when
// one is set, plus ESO's bookkeeping label and data-hash annotation
// (controllers/externalsecret/externalsecret_controller_template.go applyTemplate), with ESO's metadata:
// without a template the ExternalSecret's own labels and annotations are copied (setMetadata), and the
// data hash is ESO's own (utils.ObjectHash), so a Secret ESO wrote is recognised as up to date.
import { createHash } from 'node:crypto';
import type { ExternalSecretTarget } from '../schemas/types.ts';
import { NO_TEMPLATE_SOURCES, renderTargetTemplate, type TemplateSources } from './target-template.ts';

export const LABEL_MANAGED = 'reconcile.external-secrets.io/managed';
export const ANNOTATION_DATA_HASH = 'reconcile.external-secrets.io/data-hash';
export const ANNOTATION_FORCE_SYNC = 'external-secrets.io/force-sync';
/** On Owner Secrets: ESO's hash of `<namespace>/<name>` of the ExternalSecret (it finds orphans by it). */
export const LABEL_CREATED_BY = 'reconcile.external-secrets.io/created-by';

/**
 * Annotations of the ExternalSecret that are not copied onto its Secret (ESO copies every one): the
 * force-sync trigger is addressed to the controller, and copying it made every forced refresh rewrite
 * every Secret whose data had not changed. A documented difference (README, ESO side by side).
 */
export const NOT_COPIED_ANNOTATIONS: ReadonlySet<string> = new Set([ANNOTATION_FORCE_SYNC]);

/** The ExternalSecret's own metadata, copied onto the Secret when there is no template. */
export interface SourceMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface DesiredSecret {
  type?: string;
  data: Map<string, Buffer>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  immutable?: boolean;
}

export function desiredSecret(
  target: ExternalSecretTarget | undefined,
  providerData: Map<string, Buffer>,
  source: SourceMetadata = {},
  sources: TemplateSources = NO_TEMPLATE_SOURCES,
): DesiredSecret {
  const tpl = target?.template;
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  let data: Map<string, Buffer>;
  if (!tpl) {
    data = new Map<string, Buffer>(providerData);
    Object.assign(labels, source.labels);
    for (const [k, v] of Object.entries(source.annotations ?? {}))
      if (!NOT_COPIED_ANNOTATIONS.has(k)) annotations[k] = v;
  } else {
    // ESO keeps the provider data with mergePolicy Merge, and when no data template is given at all.
    const noTemplate = Object.keys(tpl.data ?? {}).length === 0 && (tpl.templateFrom ?? []).length === 0;
    const rendered = renderTargetTemplate(
      tpl,
      providerData,
      sources,
      new Map<string, Buffer>(tpl.mergePolicy === 'Merge' || noTemplate ? providerData : []),
    );
    data = rendered.data;
    Object.assign(labels, rendered.labels);
    Object.assign(annotations, rendered.annotations);
  }
  labels[LABEL_MANAGED] = 'true';
  annotations[ANNOTATION_DATA_HASH] = dataHash(data);
  return {
    ...(tpl?.type ? { type: tpl.type } : {}),
    data,
    labels,
    annotations,
    ...(target?.immutable ? { immutable: true } : {}),
  };
}

/**
 * ESO's data hash, exactly: utils.ObjectHash(secret.Data) is SHA3-224 over Go's `fmt.Sprintf("%+v", m)`
 * of the map[string][]byte, i.e. `map[k1:[1 2 3] k2:[]]`, keys in byte order. The same hash for the same
 * data as ESO means a Secret ESO wrote is not rewritten when vaultgate takes it over, and a hand-edited
 * one is noticed without comparing values.
 */
export function dataHash(data: ReadonlyMap<string, Buffer> | Record<string, string>): string {
  const entries: Array<[string, Buffer]> =
    data instanceof Map
      ? [...(data as ReadonlyMap<string, Buffer>).entries()]
      : Object.entries(data as Record<string, string>).map(([k, b64]): [string, Buffer] => [
          k,
          Buffer.from(b64, 'base64'),
        ]);
  entries.sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  return createHash('sha3-224').update(goMapText(entries), 'utf8').digest('hex');
}

/** Go's %+v of a map[string][]byte whose entries are already in key order. */
function goMapText(entries: ReadonlyArray<[string, Buffer]>): string {
  return `map[${entries.map(([k, v]) => `${k}:[${v.join(' ')}]`).join(' ')}]`;
}

/** ESO's created-by label value for an Owner Secret: ObjectHash("<namespace>/<name>"), SHA3-224 of the text. */
export function createdByLabel(namespace: string, name: string): string {
  return createHash('sha3-224').update(`${namespace}/${name}`, 'utf8').digest('hex');
}
