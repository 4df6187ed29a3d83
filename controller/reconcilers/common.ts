// Small helpers every reconciler here shares: error text and reason (the error policy's), status building with
// observedGeneration, the jittered periodic re-check, and the admission re-check (defence in depth: the
// webhook may have been down or bypassed when the object was stored).
import type { VaultWriteInput } from '../../trail/events.ts';
import type { SysApi } from '../../vault/types.ts';
import { createHash } from 'node:crypto';
import { setCondition } from '../../kube/conditions.ts';
import { NEVER, ReconcileError } from '../../kube/reconcile-error.ts';
import { errorPolicy } from './error-policy.ts';
import type { Condition, KubeObject } from '../../kube/objects.ts';
import type { AdmissionContext } from '../../webhook/admission/context.ts';
import type { Finding } from '../../webhook/admission/kinds.ts';
import { defaultRegistry } from '../../webhook/review/review.ts';
import type { AdmissionRequest } from '../../webhook/admission/types.ts';

/** Text safe to show in a status, an Event or a log: the error policy's message (error-policy.ts). */
export function safeMessage(err: unknown): string {
  return errorPolicy(err).message;
}

/** The old name of ReconcileError, kept while the reconcilers move to it. */
export { ReconcileError as SafeError } from '../../kube/reconcile-error.ts';

/** Condition reason for a failure (VaultError kinds map to VaultUnavailable, VaultPermissionDenied, ...). */
export function reasonOf(err: unknown, fallback: string): string {
  return errorPolicy(err, fallback).reason;
}

export interface StatusInput {
  ready: { status: Condition['status']; reason: string; message: string };
  extra?: Record<string, unknown>;
  /** More conditions to set besides Ready (e.g. VaultRoleOwned). */
  conditions?: Array<{ type: string; status: Condition['status']; reason: string; message: string }>;
}

/** The complete status vaultgate owns for a vaultgate kind (SSA removes what is left out). */
export function buildStatus(obj: KubeObject, input: StatusInput, now: Date): Record<string, unknown> {
  const current = (obj.status ?? {}) as { conditions?: Condition[] };
  const gen = obj.metadata.generation;
  let conditions = setCondition(current.conditions, { type: 'Ready', ...input.ready }, gen, now);
  for (const c of input.conditions ?? []) conditions = setCondition(conditions, c, gen, now);
  return { ...(gen !== undefined ? { observedGeneration: gen } : {}), ...input.extra, conditions };
}

/** A per-object period stretched by ±10% from its uid, so re-checks of many objects spread out. */
export function jittered(periodMs: number, uid: string | undefined): number {
  const n = createHash('sha256')
    .update(uid ?? '')
    .digest()
    .readUInt32BE(0);
  return Math.round(periodMs * (1 + 0.1 * ((n / 0xffffffff) * 2 - 1)));
}

/** Admission's deny findings for `obj`, re-run with the controller's view of the cluster. */
export function admissionDenials(obj: KubeObject, ctx: AdmissionContext): Finding[] {
  const [group = '', version = ''] = (obj.apiVersion ?? '').split('/');
  const gvk = { group, version, kind: obj.kind ?? '' };
  const handler = defaultRegistry().get(gvk);
  if (!handler) return [];
  const req: AdmissionRequest = {
    uid: `controller-recheck-${obj.metadata.uid ?? ''}`,
    kind: gvk,
    resource: { group, version, resource: '' },
    name: obj.metadata.name,
    namespace: obj.metadata.namespace,
    operation: 'UPDATE',
    userInfo: { username: 'system:vaultgate-controller' },
    object: obj,
  };
  return handler.validate(obj, undefined, ctx, req).filter((f) => f.severity === 'deny' && !f.auditOnly);
}

export function describeFindings(findings: Finding[]): string {
  return findings.map((f) => `${f.field}: ${f.message} (rule ${f.rule})`).join('; ');
}

/**
 * The controller's re-check of a VaultPolicy or VaultRoleBinding before it writes to Vault: throws a
 * ReconcileError that is not retried (GuardrailViolation when a guardrail refuses it, InvalidSpec otherwise)
 * naming every rule.
 */
export function assertAdmitted(
  obj: KubeObject & { spec: { vaultName?: string } },
  derivedName: string,
  ctx: AdmissionContext,
): void {
  if (obj.spec.vaultName && obj.spec.vaultName !== derivedName) {
    throw new ReconcileError(
      'InvalidSpec',
      `spec.vaultName "${obj.spec.vaultName}" must be the derived name "${derivedName}"`,
      NEVER,
    );
  }
  const denials = admissionDenials(obj, ctx);
  if (denials.length === 0) return;
  const guardrail = denials.some((d) => d.rule.startsWith('guardrail.'));
  throw new ReconcileError(guardrail ? 'GuardrailViolation' : 'InvalidSpec', describeFindings(denials), NEVER);
}

/** Called after every Vault write the controller makes (the signed audit trail subscribes). Must not throw. */
export type VaultWriteObserver = (write: VaultWriteInput) => void;

/** What the VaultPolicy and VaultRoleBinding reconcilers need: Vault as the controller, and their settings. */
export interface VaultObjectDeps {
  /** Vault as the controller itself (bootstrap policy: sys/policies/acl/<prefix>.*, auth/<mount>/role/<prefix>.*). */
  sys: SysApi;
  namePrefix: string;
  controllerClass?: string;
  /** How often Vault is re-read to catch out-of-band edits. Default 5 min (±10% per object). */
  driftCheckMs?: number;
  now?: () => Date;
  /** Every write and delete of a Vault policy or role, for the audit trail. */
  onVaultWrite?: VaultWriteObserver;
}
