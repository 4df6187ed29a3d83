// What reconcilers look up besides their own object: a cache the controller may not be watching, and
// whether a SecretStore or ClusterSecretStore is served by this controller.
import type { SecretStoreSpec } from '../../schemas/types.ts';
import type { ReconcileContext } from '../../kube/reconciler.ts';

/** A cache the controller may not watch (e.g. namespaces in a namespace-scoped install): undefined then. */
export function tryCache(
  ctx: ReconcileContext,
  res: Parameters<ReconcileContext['cache']>[0],
): ReturnType<ReconcileContext['cache']> | undefined {
  try {
    return ctx.cache(res);
  } catch {
    return undefined;
  }
}

/** Whether a store is served by this controller (ESO's shouldProcessStore on `spec.controller`). */
export function isOurClass(spec: SecretStoreSpec | undefined, controllerClass: string): boolean {
  const cls = spec?.controller ?? '';
  return cls === '' || cls === controllerClass;
}
