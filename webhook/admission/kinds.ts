// The kind registry: which (group, version, kind) the admission core serves, and the handler for each.
// Handlers are pure: `validate` returns findings, `mutate` changes the object it is given in place
// (the core hands it a deep copy and diffs it into a JSON Patch, as controller-runtime's
// PatchResponseFromRaw does).
import type { AdmissionContext } from './context.ts';
import type { AdmissionRequest, GroupVersionKind } from './types.ts';

export type Severity = 'deny' | 'warn';

/** One thing a rule has to say about an object. `field` is a kubectl-style path: `spec.rules[0].path`. */
export interface Finding {
  field: string;
  /** Stable rule id, e.g. `guardrail.forbidden-capability`. Used in messages, metrics and the audit trail. */
  rule: string;
  message: string;
  severity: Severity;
  /** Set by guardrail findings in `audit` mode: allowed and not warned, only recorded. */
  auditOnly?: boolean;
}

export type KubeObject = Record<string, unknown>;

export interface KindHandler {
  group: string;
  version: string;
  kind: string;
  /** Findings for the object as it would be stored. `oldObj` is set on UPDATE. */
  validate(obj: KubeObject, oldObj: KubeObject | undefined, ctx: AdmissionContext, req: AdmissionRequest): Finding[];
  /** Defaults and normalisation, applied in place to a deep copy. */
  mutate?(obj: KubeObject, ctx: AdmissionContext, req: AdmissionRequest): void;
  /**
   * The kind's own size limits beyond its schema's (e.g. the total template text of an ESO object),
   * checked by the size gate (webhook/review/size-gate.ts) before anything parses the object. Cheap:
   * lengths only, never a parse.
   */
  limits?(obj: KubeObject): Finding[];
  /**
   * What becomes of size denials on an UPDATE (ESO's ratchet: an unchanged spec is tolerated, so an
   * object stored before vaultgate can still lose its finalizer). Default: they stay denials.
   */
  tolerate?(findings: Finding[], obj: KubeObject, oldObj: KubeObject | undefined): Finding[];
}

export class KindRegistry {
  readonly #handlers = new Map<string, KindHandler>();

  constructor(handlers: Iterable<KindHandler> = []) {
    for (const h of handlers) this.register(h);
  }

  register(handler: KindHandler): void {
    const key = gvkKey(handler);
    if (this.#handlers.has(key)) throw new Error(`admission handler for ${key} registered twice`);
    this.#handlers.set(key, handler);
  }

  get(gvk: GroupVersionKind): KindHandler | undefined {
    return this.#handlers.get(gvkKey(gvk));
  }

  /** Whether any handler serves this API group (to name an unexpected version instead of waving it through). */
  servesGroup(group: string): boolean {
    for (const h of this.#handlers.values()) if (h.group === group) return true;
    return false;
  }

  /** The served `group/version` strings for a kind in a group (for "served versions are ..." messages). */
  versionsOf(group: string, kind: string): string[] {
    return [...this.#handlers.values()].filter((h) => h.group === group && h.kind === kind).map((h) => h.version);
  }

  all(): KindHandler[] {
    return [...this.#handlers.values()];
  }
}

export function gvkKey(gvk: { group: string; version: string; kind: string }): string {
  return `${gvk.group}/${gvk.version}/${gvk.kind}`;
}
