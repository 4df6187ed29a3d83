// The size gate: the first thing the admission core does with an object of a kind it serves, before it
// copies, diffs or parses anything (the mutation's deep copy and JSON Patch diff, raw HCL, ESO
// templates). It checks lengths only, in one pass that stops at the first limit exceeded: the kind's
// schema limits (maxLength, maxItems, maxProperties, with vaultgate's defaults for ESO's unbounded lists
// and maps: schemas/validator.ts sizeLimitProblem), the apiserver's metadata limit, and the kind's own
// (KindHandler.limits, e.g. ESO template text). An object over a limit is refused with the field, the
// limit and the rule, never its content; nothing else runs on it. So a review of any size the body
// limit lets in (7 MiB) costs one parse of its JSON and one bounded pass, whatever it holds.
import { sizeLimitProblem } from '../../schemas/validator.ts';
import type { Finding, KindHandler, KubeObject } from '../admission/kinds.ts';

/** The apiserver's TotalAnnotationSizeLimitB (apimachinery ValidateAnnotations), applied to labels too. */
export const MAX_METADATA_MAP_BYTES = 256 * 1024;

/** Whether a map's keys and values together pass `limit` (stops counting once they do). */
function mapOver(v: unknown, limit: number): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const map = v as Record<string, unknown>;
  let n = 0;
  for (const k in map) {
    const x = map[k];
    n += k.length + (typeof x === 'string' ? x.length : 0);
    if (n > limit) return true;
  }
  return false;
}

/** metadata.labels and metadata.annotations: keys and values together at most 256 KiB each. */
function metadataFindings(obj: KubeObject): Finding[] {
  const meta = obj.metadata;
  if (typeof meta !== 'object' || meta === null) return [];
  const out: Finding[] = [];
  for (const part of ['labels', 'annotations'] as const) {
    if (mapOver((meta as Record<string, unknown>)[part], MAX_METADATA_MAP_BYTES)) {
      out.push({
        field: `metadata.${part}`,
        rule: 'metadata.too-large',
        message: `keys and values together must be at most ${MAX_METADATA_MAP_BYTES} bytes (the apiserver's limit)`,
        severity: 'deny',
      });
    }
  }
  return out;
}

/** Whether an object is within every size limit of its kind (an oldObject that is not is not looked at). */
export function withinLimits(handler: KindHandler, obj: KubeObject): boolean {
  return sizeFindings(handler, obj).length === 0;
}

/** The size limits an object exceeds ([] = within them all); the first schema limit only (one pass). */
export function sizeFindings(handler: KindHandler, obj: KubeObject): Finding[] {
  const out = metadataFindings(obj);
  const schema = sizeLimitProblem(obj);
  if (schema) out.push({ field: schema.field, rule: schema.rule, message: schema.message, severity: 'deny' });
  if (out.length === 0 && handler.limits) out.push(...handler.limits(obj));
  return out;
}

/** sizeFindings, with the kind's tolerance on an UPDATE applied (ESO's ratchet). */
export function gate(handler: KindHandler, obj: KubeObject, oldObj: KubeObject | undefined): Finding[] {
  const found = sizeFindings(handler, obj);
  return found.length && handler.tolerate ? handler.tolerate(found, obj, oldObj) : found;
}
