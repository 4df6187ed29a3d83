// Status writes through server-side apply on the /status subresource (field manager `vaultgate`).
// A write that would change nothing is skipped: every status write is a resourceVersion bump and a watch
// event to every informer, and a reconciler that rewrote an identical status would wake itself forever.
// Pass the complete status this controller owns: with SSA, owned fields left out are removed.
import { isDeepStrictEqual } from 'node:util';
import type { KubeClient } from './kube-client.ts';
import type { KubeObject } from './objects.ts';
import { apiVersionOf, type ResourceRef } from './resources.ts';

export interface StatusWriteResult<T> {
  written: boolean;
  /** The object as returned by the server, when written. */
  obj?: T;
}

/** True when every field of `desired` already has that value in `current`. */
export function statusUnchanged(current: unknown, desired: Record<string, unknown>): boolean {
  const cur = (current ?? {}) as Record<string, unknown>;
  return Object.entries(desired).every(([k, v]) =>
    v === undefined ? cur[k] === undefined : isDeepStrictEqual(cur[k], v),
  );
}

/**
 * SSA `status` of `obj` (as read from the cache). `force` defaults to true: status belongs to the
 * controller (controller-runtime's advice for controllers). A 409 is thrown as KubeApiError and the
 * controller turns it into a requeue, not a failure.
 */
export async function applyStatus<T extends KubeObject>(
  client: Pick<KubeClient, 'apply'>,
  res: ResourceRef,
  obj: KubeObject,
  status: Record<string, unknown>,
  opts: { force?: boolean } = {},
): Promise<StatusWriteResult<T>> {
  if (statusUnchanged(obj.status, status)) return { written: false };
  const body: KubeObject = {
    apiVersion: apiVersionOf(res),
    kind: res.kind,
    metadata: { name: obj.metadata.name, ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}) },
    status,
  };
  const written = await client.apply<T>(res, body, { subresource: 'status', force: opts.force ?? true });
  return { written: true, obj: written };
}
