// VaultGuardrail status: how many namespaces a guardrail selects, the built-in floor it leaves there, and
// Ready. Nothing outside Kubernetes changes: the webhook and the other reconcilers read guardrails from
// their own caches; this reconciler only reports what they enforce. observe (the guardrail, the Namespace
// cache, admission's verdict on the guardrail) → plan (pure: the status) → act (one server-side apply,
// skipped when nothing changed).
import { setCondition } from '../../kube/conditions.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { DONE, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { NAMESPACES } from '../../kube/resources.ts';
import { VAULT_GUARDRAILS } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import type { VaultGuardrailFloor, VaultGuardrailStatus } from '../../schemas/types.generated.ts';
import type { GuardrailObject } from '../../webhook/admission/context.ts';
import type { Finding } from '../../webhook/rules/finding.ts';
import {
  builtInGuardrail,
  effectiveGuardrail,
  guardrailSelects,
  honouredRelaxations,
} from '../../webhook/rules/guardrails.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings } from './common.ts';

export interface VaultGuardrailObject extends KubeObject {
  spec?: Record<string, unknown>;
  status?: VaultGuardrailStatus;
}

/** What is: the guardrail, the namespaces the controller watches, and admission's denials of the guardrail. */
export interface GuardrailObservation {
  guardrail: VaultGuardrailObject;
  namespaces: ReadonlyArray<{ name: string; labels?: Record<string, string> }>;
  /** Admission's rules on the guardrail now: it may have been stored while the webhook was down. */
  denials: Finding[];
}

/** The reasons of the Ready condition. */
export const GUARDRAIL_REASONS = { effective: 'Effective', invalid: 'InvalidSpec' } as const;

/**
 * The floor as the guardrail leaves it in the namespaces it selects (its honoured relaxFloor lifted). An
 * empty list is left out (absent: nothing relaxed, nothing forbidden, no path limit): server-side apply
 * drops an emptied list, and a status that never reads back as written would be rewritten every time.
 */
export function floorOf(guardrail: GuardrailObject): VaultGuardrailFloor {
  const relaxed = [...honouredRelaxations(effectiveGuardrail(guardrail))].sort();
  const floor = builtInGuardrail(new Set(relaxed));
  const lists = {
    relaxed,
    forbiddenCapabilities: floor.forbiddenCapabilities,
    forbiddenPaths: floor.forbiddenPaths,
    allowedPaths: floor.allowedPaths ?? [],
  };
  return Object.fromEntries(Object.entries(lists).filter(([, list]) => list.length > 0));
}

function readyMessage(mode: string, selected: number, floor: VaultGuardrailFloor): string {
  const where =
    selected === 0 ? 'selects no namespace' : `${mode} in ${selected} namespace${selected === 1 ? '' : 's'}`;
  return floor.relaxed?.length ? `${where}; floor relaxed there: ${floor.relaxed.join(', ')}` : where;
}

/** Plan: the complete status the controller owns, from what was observed. Pure. */
export function planGuardrailStatus(observed: GuardrailObservation, now: Date): VaultGuardrailStatus {
  const g = observed.guardrail;
  const selected = observed.namespaces.filter((ns) =>
    guardrailSelects(g as GuardrailObject, ns.name, ns.labels),
  ).length;
  const floor = floorOf(g as GuardrailObject);
  const ready =
    observed.denials.length > 0
      ? {
          type: 'Ready',
          status: 'False' as const,
          reason: GUARDRAIL_REASONS.invalid,
          message: describeFindings(observed.denials),
        }
      : {
          type: 'Ready',
          status: 'True' as const,
          reason: GUARDRAIL_REASONS.effective,
          message: readyMessage(effectiveGuardrail(g as GuardrailObject).mode, selected, floor),
        };
  const generation = g.metadata.generation;
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    selectedNamespaces: selected,
    floor,
    conditions: setCondition(g.status?.conditions, ready, generation, now),
  };
}

export interface VaultGuardrailDeps {
  namePrefix: string;
  controllerClass: string;
  now?: () => Date;
}

export function createVaultGuardrailReconciler(deps: VaultGuardrailDeps): Reconciler {
  const now = deps.now ?? (() => new Date());
  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const observed = observe(key, ctx, deps);
    if (!observed) return DONE;
    await applyStatus(ctx.client, VAULT_GUARDRAILS, observed.guardrail, { ...planGuardrailStatus(observed, now()) });
    return DONE;
  };
}

/** Observe: from the caches only (NotFound or being deleted: nothing to report). */
function observe(key: string, ctx: ReconcileContext, deps: VaultGuardrailDeps): GuardrailObservation | undefined {
  const guardrail = ctx.cache<VaultGuardrailObject>(VAULT_GUARDRAILS).get(key);
  if (!guardrail || guardrail.metadata.deletionTimestamp) return undefined;
  const namespaceCache = ctx.cache(NAMESPACES);
  const namespaces = namespaceCache
    .list()
    .map((ns) => ({ name: ns.metadata.name, ...(ns.metadata.labels ? { labels: ns.metadata.labels } : {}) }));
  const denials = admissionDenials(
    guardrail,
    admissionContext({
      namespaces: namespaceCache,
      namePrefix: deps.namePrefix,
      controllerClass: deps.controllerClass,
    }),
  );
  return { guardrail, namespaces, denials };
}
