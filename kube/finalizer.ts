// The one finalizer helper every reconciler that touches Vault uses (kube-rs's runtime::finalizer):
//   not being deleted → make sure our finalizer is on the object *before* acting, then `apply`;
//   being deleted     → if our finalizer is on it, `cleanup`, then remove the finalizer.
// Finalizer writes are merge patches carrying metadata.resourceVersion, so the apiserver rejects them
// with 409 if the object moved on (we never clobber another controller's finalizer list).
// 409 → requeue after a short delay (the watch brings the newer version); 404 → done.
import { isConflict, isNotFound } from './errors.ts';
import type { KubeClient } from './kube-client.ts';
import type { KubeObject } from './objects.ts';
import { DONE, type Result } from './reconciler.ts';
import type { ResourceRef } from './resources.ts';

export const FINALIZER = 'vaultgate.io/finalizer';

export interface FinalizerHandlers<T extends KubeObject> {
  /** Converge the world to the object. Runs with the finalizer already in place. */
  apply(obj: T): Promise<Result>;
  /** Undo what apply did. Throw to retry; returning means done, and the finalizer is removed. */
  cleanup(obj: T): Promise<void>;
}

export interface FinalizerOptions {
  name?: string;
  /** Delay before re-reconciling after a 409. Default 100 ms. */
  conflictRequeueMs?: number;
}

export function hasFinalizer(obj: KubeObject, name = FINALIZER): boolean {
  return obj.metadata.finalizers?.includes(name) ?? false;
}

export async function withFinalizer<T extends KubeObject>(
  client: Pick<KubeClient, 'patch'>,
  res: ResourceRef,
  obj: T,
  handlers: FinalizerHandlers<T>,
  opts: FinalizerOptions = {},
): Promise<Result> {
  const name = opts.name ?? FINALIZER;
  const finalizers = obj.metadata.finalizers ?? [];
  const patchFinalizers = (list: string[]): Promise<T> =>
    client.patch<T>(res, obj.metadata.name, obj.metadata.namespace, { metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers: list } }, 'merge');
  try {
    if (obj.metadata.deletionTimestamp) {
      if (!finalizers.includes(name)) return DONE; // not ours (or already cleaned up)
      await handlers.cleanup(obj);
      await patchFinalizers(finalizers.filter((f) => f !== name));
      return DONE;
    }
    let current = obj;
    if (!finalizers.includes(name)) current = await patchFinalizers([...finalizers, name]);
    return await handlers.apply(current);
  } catch (err) {
    if (isNotFound(err)) return DONE;
    if (isConflict(err)) return { requeueAfterMs: opts.conflictRequeueMs ?? 100 };
    throw err;
  }
}
