// The one finalizer helper every reconciler that cleans up outside Kubernetes uses, after kube-rs's
// runtime::finalizer (kube-rs/kube kube-runtime/src/finalizer.rs).
//
// Flow: a user creates the object → the reconciler sees it → `withFinalizer` adds our finalizer, then runs
// `apply` with the object that write returned (kube-rs waits for the next event instead; we go on in the
// same reconcile) → each update runs `apply` → the user deletes the object → the apiserver sets
// deletionTimestamp and keeps the object → `cleanup` runs → on success our finalizer is removed → when no
// finalizer is left the apiserver deletes the object.
//
// Guarantee: if `apply` ever started, `cleanup` has returned before the object's deletion completes (our
// finalizer was stored before `apply` started, and is removed only after `cleanup` returned), unless
// someone else removes our finalizer by hand.
//
// Assumptions:
// - `name` (default FINALIZER) is used by no other controller acting on the object.
// - `apply` and `cleanup` are idempotent and tolerate running again after a crash, a retry or a 409 at
//   any await; `cleanup` tolerates `apply` never having run, or having stopped half way.
// - `obj` is the object as last read (the cache): its resourceVersion is the precondition of every
//   finalizer write here.
//
// Errors: finalizer writes are merge patches carrying metadata.resourceVersion, so the apiserver answers
// 409 if the object moved on and we never clobber another controller's finalizer list (kube-rs uses JSON
// Patch test operations for the same reason); 409 → requeue after a short delay (the watch brings the
// newer version, and `cleanup` runs again); 404 → done. An error thrown by `apply` or `cleanup` propagates
// to the reconciler's error policy; a failed `cleanup` keeps the finalizer.
//
// Caveat: a deleted object stays (Terminating) while the controller is not running or `cleanup` keeps
// failing.
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
  /**
   * Whether the object needs our finalizer now (default true). False (e.g. a PushSecret whose
   * deletionPolicy is None): ours is removed if it is there, then `apply` runs; nothing waits for cleanup.
   */
  wanted?: boolean;
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
    client.patch<T>(
      res,
      obj.metadata.name,
      obj.metadata.namespace,
      { metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers: list } },
      'merge',
    );
  try {
    if (obj.metadata.deletionTimestamp) {
      if (!finalizers.includes(name)) return DONE; // not ours (or already cleaned up)
      await handlers.cleanup(obj);
      await patchFinalizers(finalizers.filter((f) => f !== name));
      return DONE;
    }
    const wanted = opts.wanted ?? true;
    let current = obj;
    if (wanted && !finalizers.includes(name)) current = await patchFinalizers([...finalizers, name]);
    if (!wanted && finalizers.includes(name)) current = await patchFinalizers(finalizers.filter((f) => f !== name));
    return await handlers.apply(current);
  } catch (err) {
    if (isNotFound(err)) return DONE;
    if (isConflict(err)) return { requeueAfterMs: opts.conflictRequeueMs ?? 100 };
    throw err;
  }
}
