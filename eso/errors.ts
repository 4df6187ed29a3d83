// ESO's rules refusing what a provider returned or what a spec asks of it (a property that is not an
// object, a key collision, kv v1 without metadata): shown to the user, so each message names keys,
// properties, paths and positions, never a value (kube/reconcile-error.ts says how).
import { NEVER, ReconcileError } from '../kube/reconcile-error.ts';

/** Not retried: the same data and spec fail the same way; the ExternalSecret's refresh reads again. */
export class EsoDataError extends ReconcileError {
  override readonly name: string = 'EsoDataError';
  constructor(message: string, reason = 'InvalidProviderData') {
    super(reason, message, NEVER);
  }
}
