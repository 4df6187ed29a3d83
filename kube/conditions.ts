// metav1.Condition helpers with apimachinery's meta.SetStatusCondition semantics: lastTransitionTime moves
// only when status changes; reason/message/observedGeneration update in place. Pure: the caller passes
// `now`, and gets a new array (cached objects are frozen).
import type { Condition } from './objects.ts';
import { redactSecrets } from './redact.ts';

export interface ConditionInput {
  type: string;
  status: Condition['status'];
  /** CamelCase, as the API requires: ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ */
  reason: string;
  message: string;
}

const REASON_RE = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const MAX_MESSAGE = 32_768; // metav1.Condition.message maxLength

/** RFC 3339 without fractional seconds, as metav1.Time serialises. */
export function timestamp(now: Date | number | string): string {
  if (typeof now === 'string') return now;
  return new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  generation: number | undefined,
  now: Date | number | string = new Date(),
): Condition[] {
  if (!REASON_RE.test(input.reason)) throw new Error(`condition reason "${input.reason}" is not CamelCase`);
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const existing = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: redactSecrets(input.message).slice(0, MAX_MESSAGE),
    lastTransitionTime: existing && existing.status === input.status ? existing.lastTransitionTime : timestamp(now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

export function getCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/**
 * Ready=True. With `generation`, also requires that the condition was computed for that generation
 * (a Ready left over from an older spec doesn't count).
 */
export function isReady(conditions: readonly Condition[] | undefined, generation?: number): boolean {
  const c = getCondition(conditions, 'Ready');
  if (!c || c.status !== 'True') return false;
  return generation === undefined || c.observedGeneration === undefined || c.observedGeneration === generation;
}
