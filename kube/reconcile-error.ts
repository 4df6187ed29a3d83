// The one error type a reconcile throws on purpose, as controller-runtime's reconcile.TerminalError and
// kube-rs's error_policy together: the error itself says which condition reason it shows, whether and
// when to try again, and carries a message that may be shown to a user.

/**
 * When a failed reconcile runs again:
 * - `backoff`: the work queue's per-key exponential backoff (5 ms → 1000 s), for failures that may pass
 *   by themselves (Vault or the apiserver unavailable, a role granted later);
 * - `after`: once, after `ms`, with no backoff counted (a Secret Merge waits for);
 * - `never`: retrying the same state cannot help (invalid spec, refused by admission, data that cannot be
 *   used): the object waits for a change. Its own periodic re-check, if it has one, still runs.
 */
export type Retry =
  { readonly kind: 'backoff' } | { readonly kind: 'after'; readonly ms: number } | { readonly kind: 'never' };

export const BACKOFF: Retry = Object.freeze({ kind: 'backoff' });
export const NEVER: Retry = Object.freeze({ kind: 'never' });
export const retryAfter = (ms: number): Retry => ({ kind: 'after', ms });

/**
 * A failure a reconcile reports: `reason` is a CamelCase word for the Ready condition and metrics,
 * `retry` the rule above (default `backoff`, controller-runtime's for any error).
 *
 * The message is shown as it is (status, Events, logs). It is safe by construction in this sense: it is
 * written where the error is thrown, from literal text and what the code holds by name (field paths, rule
 * ids, object names, Vault paths, keys, Go types), never from a value read from Vault, a Secret or a
 * template, and never from another error's message unless that one is safe by the same rule (wrap with
 * the error policy's message, never `err.message` of an error you did not make). The error policy shows
 * no other error's message (controller/reconcilers/error-policy.ts), and every reconciler checks the text
 * last against the values it read (controller/reconcilers/secret-forms.ts). Subclass it to make an
 * error of a lower package showable; a class name decides nothing.
 */
export class ReconcileError extends Error {
  override readonly name: string = 'ReconcileError';
  constructor(
    readonly reason: string,
    message: string,
    readonly retry: Retry = BACKOFF,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A ReconcileError that must not be retried (the runtime forgets the key and counts a terminal error). */
export function isTerminal(err: unknown): err is ReconcileError {
  return err instanceof ReconcileError && err.retry.kind === 'never';
}
