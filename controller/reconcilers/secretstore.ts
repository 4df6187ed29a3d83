// SecretStore / ClusterSecretStore: re-run admission's rules (defence in depth), then prove the store
// can authenticate to Vault as its own identity (a login through the shared token cache, so this costs
// one login per identity, not one per check). Ready reasons as ESO: Valid, InvalidStoreConfiguration,
// InvalidProviderConfig, ValidationFailed, ValidationUnknown (a ClusterSecretStore whose references are
// resolved per ExternalSecret namespace: ESO's referent auth, validated when an ExternalSecret uses it).
import type { SecretStoreSpec } from '../../schemas/types.ts';
import { setCondition } from '../../kube/conditions.ts';
import type { Condition } from '../../kube/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../../kube/reconciler.ts';
import { NAMESPACES, type ResourceRef } from '../../kube/resources.ts';
import { CLUSTER_SECRET_STORES, SECRET_STORES } from '../../schemas/resources.ts';
import { applyStatus } from '../../kube/status.ts';
import { parseDuration } from '../../schemas/ttl.ts';
import { admissionContext } from './admission-context.ts';
import { admissionDenials, describeFindings, jittered, safeMessage, SafeError } from './common.ts';
import type { StoreConnector, StoreKind, StoreObject } from './store-connector.ts';
import { isOurClass, tryCache } from './lookups.ts';

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
  const refs = [a.kubernetes?.serviceAccountRef, a.kubernetes?.secretRef, a.tokenSecretRef, a.appRole?.secretRef, a.appRole?.roleRef, a.jwt?.secretRef, a.jwt?.kubernetesServiceAccountToken?.serviceAccountRef];
  return refs.some((r) => r !== undefined && !r.namespace);
}

export function createSecretStoreReconciler(deps: SecretStoreDeps): Reconciler {
  const res = storeResource(deps.kind);
  const now = deps.now ?? (() => new Date());
  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const store = ctx.cache<StoreObject>(res).get(key);
    if (!store || store.metadata.deletionTimestamp) return DONE;
    if (!isOurClass(store.spec, deps.controllerClass)) return DONE;
    const recheck = jittered(recheckMs(store.spec, deps.defaultRecheckMs ?? 300_000), store.metadata.uid);
    const write = async (status: Condition['status'], reason: string, message: string): Promise<void> => {
      const current = (store.status ?? {}) as { conditions?: Condition[] };
      // Only fields ESO's CRD declares (no observedGeneration): with ESO's own CRDs installed, the apiserver
      // refuses any other field in an apply.
      const conditions = setCondition(current.conditions, { type: 'Ready', status, reason, message }, undefined, now());
      await applyStatus(ctx.client, res, store, { capabilities: 'ReadOnly', conditions });
    };

    const denials = admissionDenials(store, admissionContext({ namespaces: tryCache(ctx, NAMESPACES), namePrefix: deps.namePrefix, controllerClass: deps.controllerClass }));
    if (denials.length > 0) {
      await write('False', 'InvalidStoreConfiguration', describeFindings(denials));
      return DONE;
    }
    if (deps.kind === 'ClusterSecretStore' && usesReferentAuth(store.spec)) {
      await write('True', 'ValidationUnknown', 'the store resolves its credentials in each ExternalSecret\'s namespace (referent authentication); they are validated when an ExternalSecret uses the store');
      return DONE;
    }
    try {
      const conn = await deps.connector.connect(deps.kind, store);
      await conn.session.token();
    } catch (err) {
      // Failures go back to the work queue's per-key exponential backoff (5 ms → 1000 s), not to the
      // periodic recheck: the usual cause is something applied in the same batch (the VaultRoleBinding
      // whose role this store logs in with, a referenced Secret) that is moments away, and the store's
      // ExternalSecrets wait on it. Both messages are safe (no tokens, no values).
      if (err instanceof SafeError) {
        await write('False', err.reason === 'MissingProviderSecret' ? 'ValidationFailed' : 'InvalidProviderConfig', err.message);
        throw err;
      }
      await write('False', 'ValidationFailed', `cannot authenticate to Vault: ${safeMessage(err)}`);
      throw err;
    }
    await write('True', 'Valid', 'store validated: authenticated to Vault');
    return requeueAfter(recheck);
  };
}

function recheckMs(spec: SecretStoreSpec, dflt: number): number {
  const r = spec.refreshInterval;
  if (typeof r === 'number') return r > 0 ? r * 1000 : dflt;
  if (typeof r === 'string' && r) return parseDuration(r) || dflt;
  return dflt;
}

