// The one error policy of every reconciler, as kube-rs's error_policy: whatever a reconcile caught, the
// condition reason it shows, the message a user may read, and when to try again. Decided by the error's
// type, never by its class name: a message is shown only when its type promises it holds no value.
import { KubeApiError } from '../../kube/errors.ts';
import { BACKOFF, NEVER, ReconcileError, type Retry } from '../../kube/reconcile-error.ts';
import { GoRegexpError, TemplateError } from '../../golang/index.ts';
import { CONDITION_REASON, VaultError } from '../../vault/errors.ts';
import { RenderLimitError } from './render-pool.ts';

export interface ErrorOutcome {
  /** CamelCase condition reason (also a metric label: low cardinality). */
  reason: string;
  /** Safe to show in a status, an Event or a log (still checked against the values read: secret-forms.ts). */
  message: string;
  retry: Retry;
}

/**
 * - ReconcileError (and its subclasses in eso/): its own reason, message and retry;
 * - VaultError: its kind's reason (VaultUnavailable, VaultPermissionDenied, ...), its message (scrubbed
 *   by vault/errors.ts), backoff: a policy or role written later changes Vault without any Kubernetes
 *   event, so even a 403 is worth retrying (ESO returns every provider error to the work queue);
 * - KubeApiError: `Kubernetes<StatusReason>`, the Status message, backoff;
 * - a render stopped by the pool's limits (deadline, heap): backoff, the limit named;
 * - Go's template and regexp errors (their messages name lines, fields and Go types, never a value):
 *   `fallbackReason`, not retried (the same template and data fail the same way);
 * - anything else: `fallbackReason`, only the class name (its message could quote a request or a
 *   value), backoff (controller-runtime's rule for an unexpected error).
 */
export function errorPolicy(err: unknown, fallbackReason = 'ReconcileFailed'): ErrorOutcome {
  if (err instanceof ReconcileError) return { reason: err.reason, message: err.message, retry: err.retry };
  if (err instanceof VaultError) return { reason: CONDITION_REASON[err.kind], message: err.message, retry: BACKOFF };
  if (err instanceof KubeApiError)
    return {
      reason: `Kubernetes${err.reason.replace(/[^A-Za-z0-9]/g, '') || 'Error'}`,
      message: err.message,
      retry: BACKOFF,
    };
  if (err instanceof RenderLimitError) return { reason: fallbackReason, message: err.message, retry: BACKOFF };
  if (err instanceof TemplateError || err instanceof GoRegexpError)
    return { reason: fallbackReason, message: err.message, retry: NEVER };
  return {
    reason: fallbackReason,
    message: err instanceof Error ? `unexpected ${err.name}` : 'unexpected error',
    retry: BACKOFF,
  };
}
