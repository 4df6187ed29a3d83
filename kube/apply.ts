// Server-side apply of objects vaultgate manages (e.g. Secrets written for an ExternalSecret): field
// manager `vaultgate`, label app.kubernetes.io/managed-by=vaultgate, and a controller ownerReference so the
// owner's deletion garbage-collects them and `owns()` maps their changes back to the owner.
// `force` defaults to true (the controller owns these fields; another manager's edit is reverted), except
// when the caller must not take fields from someone else (adopting a user-made object): then 409.
import type { KubeClient } from './kube-client.ts';
import type { KubeObject, OwnerReference } from './objects.ts';
import { apiVersionOf, type ResourceRef } from './resources.ts';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'vaultgate';

/** A controller ownerReference pointing at `owner` (whose uid must be known). */
export function controllerReference(ownerRes: ResourceRef, owner: KubeObject): OwnerReference {
  if (!owner.metadata.uid) throw new Error(`owner ${owner.metadata.name} has no uid`);
  return {
    apiVersion: apiVersionOf(ownerRes),
    kind: ownerRes.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export async function applyOwned<T extends KubeObject>(
  client: Pick<KubeClient, 'apply'>,
  res: ResourceRef,
  desired: KubeObject,
  opts: { owner?: { res: ResourceRef; obj: KubeObject }; force?: boolean } = {},
): Promise<T> {
  const meta = desired.metadata;
  const body: KubeObject = {
    ...desired,
    apiVersion: apiVersionOf(res),
    kind: res.kind,
    metadata: {
      ...meta,
      labels: { ...meta.labels, [MANAGED_BY_LABEL]: MANAGED_BY },
      ...(opts.owner ? { ownerReferences: [controllerReference(opts.owner.res, opts.owner.obj)] } : {}),
    },
  };
  return client.apply<T>(res, body, { force: opts.force ?? true });
}

/** True when vaultgate manages the object (safe to update or delete). */
export function isManagedByUs(obj: KubeObject): boolean {
  return obj.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
}
