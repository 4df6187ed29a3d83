// What the SecretStore / ClusterSecretStore reconciler does, decided from what it observed. Pure. Ready
// reasons as ESO: Valid, InvalidStoreConfiguration, InvalidProviderConfig, ValidationFailed,
// ValidationUnknown (a ClusterSecretStore whose references are resolved per ExternalSecret namespace:
// ESO's referent auth, validated when an ExternalSecret uses it).
import type { SecretStoreSpec } from '../../schemas/types.ts';
import type { ConditionInput } from '../../kube/conditions.ts';
import { parseDuration } from '../../schemas/ttl.ts';

export type StoreReady = Omit<ConditionInput, 'type'>;

export interface StoreObserved {
  /** Served by this controller (its spec.controller class). */
  ours: boolean;
  /** Admission's re-check refused the spec: the findings, described. */
  denials?: string;
  /** A ClusterSecretStore whose auth references name no namespace. */
  referentAuth: boolean;
}

export type StorePlan =
  | { decision: 'ignore' } // another controller's class
  | { decision: 'refuse'; ready: StoreReady } // admission's rules refuse it: not re-checked until it changes
  | { decision: 'defer'; ready: StoreReady } // referent auth: validated per ExternalSecret namespace
  | { decision: 'validate' }; // prove the store can log in to Vault as its own identity

export function planSecretStore(o: StoreObserved): StorePlan {
  if (!o.ours) return { decision: 'ignore' };
  if (o.denials)
    return { decision: 'refuse', ready: { status: 'False', reason: 'InvalidStoreConfiguration', message: o.denials } };
  if (o.referentAuth) {
    return {
      decision: 'defer',
      ready: {
        status: 'True',
        reason: 'ValidationUnknown',
        message:
          "the store resolves its credentials in each ExternalSecret's namespace (referent authentication); they are validated when an ExternalSecret uses the store",
      },
    };
  }
  return { decision: 'validate' };
}

/**
 * Ready after the login: Valid, or why not. `failure.reason` is set for an error vaultgate composed
 * (a ReconcileError: a provider Secret missing is ValidationFailed, any other spec problem
 * InvalidProviderConfig, its message shown); any other error is a failed login, its safe text shown.
 */
export function validatedReady(failure?: { reason?: string; message: string }): StoreReady {
  if (!failure) return { status: 'True', reason: 'Valid', message: 'store validated: authenticated to Vault' };
  if (failure.reason !== undefined)
    return {
      status: 'False',
      reason: failure.reason === 'MissingProviderSecret' ? 'ValidationFailed' : 'InvalidProviderConfig',
      message: failure.message,
    };
  return { status: 'False', reason: 'ValidationFailed', message: `cannot authenticate to Vault: ${failure.message}` };
}

/** The re-validation period: the store's refreshInterval (seconds, or a duration), else the default. */
export function recheckMs(spec: SecretStoreSpec, dflt: number): number {
  const r = spec.refreshInterval;
  if (typeof r === 'number') return r > 0 ? r * 1000 : dflt;
  if (typeof r === 'string' && r) return parseDuration(r) || dflt;
  return dflt;
}
