// SecretStore / ClusterSecretStore: re-run admission's rules (defence in depth), then prove the store
// can authenticate to Vault as its own identity (a login through the shared token cache, so this costs
// one login per identity, not one per check). Ready reasons as ESO: Valid, InvalidStoreConfiguration,
// InvalidProviderConfig, ValidationFailed, ValidationUnknown (a ClusterSecretStore whose references are
// resolved per ExternalSecret namespace: ESO's referent auth, validated when an ExternalSecret uses it).
import type { SecretStoreSpec } from '../../schemas/types.ts';
import { setCondition } from '../../kube/conditions.ts';
import type { Condition } from '../../kube/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { ReconcileError } from '../../kube/reconcile-error.ts';
import { NAMESPACES, type ResourceRef } from '../../kube/resources.ts';
import { CLUSTER_SECRET_STORES, SECRET_STORES } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings, jittered } from './common.ts';
import { errorPolicy } from './error-policy.ts';
import type { StoreConnector, StoreKind, StoreObject } from './store-connector.ts';
import { isOurClass, tryCache } from './lookups.ts';
import { planSecretStore, recheckMs, validatedReady, type StoreReady } from './secretstore-plan.ts';

export interface SecretStoreDeps {
  kind: StoreKind;
  connector: StoreConnector;
  /** ESO `spec.controller` class this vaultgate serves; '' = stores without a class. */
  controllerClass: string;
  namePrefix: string;
  /** Re-validation period when the store sets no refreshInterval (ESO's --store-requeue-interval, 5 min). */
  defaultRecheckMs?: number;
  now?: () => Date;
}

export function storeResource(kind: StoreKind): ResourceRef {
  return kind === 'SecretStore' ? SECRET_STORES : CLUSTER_SECRET_STORES;
}

/** A ClusterSecretStore whose auth references name no namespace: resolved per ExternalSecret (referent auth). */
export function usesReferentAuth(spec: SecretStoreSpec): boolean {
  const a = spec.provider?.vault?.auth;
  if (!a) return false;
  const refs = [
    a.kubernetes?.serviceAccountRef,
    a.kubernetes?.secretRef,
    a.tokenSecretRef,
    a.appRole?.secretRef,
    a.appRole?.roleRef,
    a.jwt?.secretRef,
    a.jwt?.kubernetesServiceAccountToken?.serviceAccountRef,
  ];
  return refs.some((r) => r !== undefined && !r.namespace);
}

export function createSecretStoreReconciler(deps: SecretStoreDeps): Reconciler {
  const res = storeResource(deps.kind);
  const now = deps.now ?? (() => new Date());
  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const store = ctx.cache<StoreObject>(res).get(key);
    if (!store || store.metadata.deletionTimestamp) return DONE;
    const ours = isOurClass(store.spec, deps.controllerClass);
    const denials = ours
      ? admissionDenials(
          store,
          admissionContext({
            namespaces: tryCache(ctx, NAMESPACES),
            namePrefix: deps.namePrefix,
            controllerClass: deps.controllerClass,
          }),
        )
      : [];
    const plan = planSecretStore({
      ours,
      ...(denials.length > 0 ? { denials: describeFindings(denials) } : {}),
      referentAuth: deps.kind === 'ClusterSecretStore' && usesReferentAuth(store.spec),
    });
    const write = (ready: StoreReady): Promise<unknown> => writeReady(ctx, res, store, ready, now());
    switch (plan.decision) {
      case 'ignore':
        return DONE;
      case 'refuse':
      case 'defer':
        await write(plan.ready);
        return DONE;
      case 'validate':
        break;
    }
    try {
      const conn = await deps.connector.connect(deps.kind, store);
      await conn.session.token();
    } catch (err) {
      // Failures go back to the work queue's per-key exponential backoff (5 ms → 1000 s), not to the
      // periodic recheck: the usual cause is something applied in the same batch (the VaultRoleBinding
      // whose role this store logs in with, a referenced Secret) that is moments away, and the store's
      // ExternalSecrets wait on it. Both messages are safe (no tokens, no values).
      await write(
        validatedReady({
          ...(err instanceof ReconcileError ? { reason: err.reason } : {}),
          message: errorPolicy(err).message,
        }),
      );
      throw err;
    }
    await write(validatedReady());
    return requeueAfter(jittered(recheckMs(store.spec, deps.defaultRecheckMs ?? 300_000), store.metadata.uid));
  };
}

// Only fields ESO's CRD declares (no observedGeneration): with ESO's own CRDs installed, the apiserver
// refuses any other field in an apply.
async function writeReady(
  ctx: ReconcileContext,
  res: ResourceRef,
  store: StoreObject,
  ready: StoreReady,
  now: Date,
): Promise<void> {
  const current = (store.status ?? {}) as { conditions?: Condition[] };
  await applyStatus(ctx.client, res, store, {
    capabilities: 'ReadOnly',
    conditions: setCondition(current.conditions, { type: 'Ready', ...ready }, undefined, now),
  });
}
