// The Secret an ExternalSecret should produce: provider data, through target.template (engine v2) when
// one is set, plus ESO's bookkeeping label and data-hash annotation
// (controllers/externalsecret/externalsecret_controller_template.go applyTemplate).
import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type { ExternalSecretTarget } from '../../../../schemas/types.ts';
import { renderTemplate } from './template/index.ts';
import { byteValue } from './values.ts';

export const LABEL_MANAGED = 'reconcile.external-secrets.io/managed';
export const ANNOTATION_DATA_HASH = 'reconcile.external-secrets.io/data-hash';
export const ANNOTATION_FORCE_SYNC = 'external-secrets.io/force-sync';

export interface DesiredSecret {
  type?: string;
  data: Map<string, Buffer>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  immutable?: boolean;
}

/** Secret data as templates see it (ESO v2 passes values as strings). */
function templateData(data: Map<string, Buffer>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of data) out[k] = v.toString('utf8');
  return out;
}

export function desiredSecret(target: ExternalSecretTarget | undefined, providerData: Map<string, Buffer>): DesiredSecret {
  const tpl = target?.template;
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  let data: Map<string, Buffer>;
  if (!tpl) {
    data = new Map<string, Buffer>(providerData);
  } else {
    data = tpl.mergePolicy === 'Merge' ? new Map<string, Buffer>(providerData) : new Map<string, Buffer>();
    const values = templateData(providerData);
    for (const [i, from] of (tpl.templateFrom ?? []).entries()) {
      if (from.configMap || from.secret) throw new Error(`spec.target.template.templateFrom[${i}]: configMap and secret template sources are not supported by vaultgate (use literal or template.data)`);
      if (from.literal === undefined) continue;
      const rendered = render(from.literal, values, `spec.target.template.templateFrom[${i}].literal`);
      const parsed = parseYaml(rendered) as unknown;
      if (parsed === null || parsed === undefined) continue;
      if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`spec.target.template.templateFrom[${i}].literal: the rendered template is not a YAML map`);
      const into = (from.target ?? 'Data').toLowerCase();
      for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
        if (into === 'data') data.set(k, byteValue(v));
        else if (into === 'labels') labels[k] = byteValue(v).toString('utf8');
        else if (into === 'annotations') annotations[k] = byteValue(v).toString('utf8');
        else throw new Error(`spec.target.template.templateFrom[${i}].target: "${from.target}" is not one of Data, Labels, Annotations`);
      }
    }
    for (const [key, src] of Object.entries(tpl.data ?? {})) {
      if (src === undefined) continue;
      data.set(key, Buffer.from(render(src, values, `spec.target.template.data[${JSON.stringify(key)}]`), 'utf8'));
    }
    // No template output at all: the provider data goes through unchanged (ESO's fallback).
    if (Object.keys(tpl.data ?? {}).length === 0 && (tpl.templateFrom ?? []).length === 0) data = new Map(providerData);
    for (const [k, v] of Object.entries(tpl.metadata?.labels ?? {})) if (v !== undefined) labels[k] = v;
    for (const [k, v] of Object.entries(tpl.metadata?.annotations ?? {})) if (v !== undefined) annotations[k] = v;
  }
  labels[LABEL_MANAGED] = 'true';
  annotations[ANNOTATION_DATA_HASH] = dataHash(data);
  return { ...(tpl?.type ? { type: tpl.type } : {}), data, labels, annotations, ...(target?.immutable ? { immutable: true } : {}) };
}

function render(src: string, values: Record<string, string>, where: string): string {
  try {
    return renderTemplate(src, values);
  } catch (e) {
    // Template errors name positions and functions, never values: safe to surface in status.
    throw new Error(`${where}: ${(e as Error).message}`);
  }
}

/**
 * ESO's data-hash idea (esutils.ObjectHash over secret.Data, SHA3-224): a digest of the final data, so an
 * unchanged Secret is recognised without comparing values and a hand-edited one is noticed.
 */
export function dataHash(data: ReadonlyMap<string, Buffer> | Record<string, string>): string {
  const h = createHash('sha3-224');
  const entries: Array<[string, string]> = data instanceof Map
    ? [...(data as ReadonlyMap<string, Buffer>).entries()].map(([k, v]): [string, string] => [k, v.toString('base64')])
    : Object.entries(data as Record<string, string>);
  for (const [k, b64] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) h.update(`${k.length}:${k}=${b64.length}:${b64};`);
  return h.digest('hex');
}
