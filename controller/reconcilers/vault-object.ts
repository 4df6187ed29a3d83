// Carries out a VaultObjectPlan (vault-object-plan.ts) for the VaultPolicy and VaultRoleBinding
// reconcilers: each step, then its Event and audit record; then the status; then the plan's Events.
// A failed Vault call (while observing or acting) is written to Ready, then thrown for the work queue's
// backoff: a policy or role changed in Vault brings no Kubernetes event.
import type { ConditionInput } from '../../kube/conditions.ts';
import {
  failedReady,
  type PlannedAudit,
  type PlannedEvent,
  type Ready,
  type VaultFailure,
  type VaultObjectPlan,
} from './vault-object-plan.ts';
import { errorPolicy } from './error-policy.ts';

export interface VaultObjectIo<Op, C> {
  perform(op: Op): Promise<void>;
  event(e: PlannedEvent): void;
  audit(a: PlannedAudit<C>, op: Op): void;
  writeStatus(ready: Ready, conditions: ConditionInput[], extra?: Record<string, unknown>): Promise<void>;
}

export async function performSteps<Op, C>(plan: VaultObjectPlan<Op, C>, io: VaultObjectIo<Op, C>): Promise<void> {
  for (const step of plan.steps) {
    await io.perform(step.op);
    if (step.event) io.event(step.event);
    if (step.audit) io.audit(step.audit, step.op);
  }
}

export async function reportPlan<Op, C>(plan: VaultObjectPlan<Op, C>, io: VaultObjectIo<Op, C>): Promise<void> {
  if (plan.status) await io.writeStatus(plan.status.ready, plan.status.conditions, plan.status.extra);
  for (const e of plan.events) io.event(e);
}

/**
 * Runs `work` (observe, plan, perform the steps); on failure writes Ready from `failure` and rethrows.
 * While deleting, a failed status write is ignored: the error that keeps the finalizer matters more.
 */
export async function whileVaultAnswers<T>(
  failure: VaultFailure,
  writeReady: (ready: Ready) => Promise<void>,
  work: () => Promise<T>,
  deleting = false,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const outcome = errorPolicy(err, 'VaultError');
    const written = writeReady(failedReady(failure, outcome.reason, outcome.message));
    await (deleting ? written.catch(() => undefined) : written);
    throw err;
  }
}
