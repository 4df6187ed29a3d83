// The product's API resources (vaultgate's kinds and the ESO kinds it serves), addressed as the REST paths
// and SSA bodies need them. Derived from the kind list the CRDs are generated from, so a path can never
// disagree with the installed CRD. Kubernetes' own kinds (Secret, Lease ...) are in kube/resources.ts.
import { KINDS } from './kinds.ts';
import { GENERATOR_GROUP } from './generator-kinds.ts';

/** An API resource: group/version/plural for REST paths, kind for SSA bodies and ownerReferences. */
export interface ResourceRef {
  /** '' for the core group (Secrets, ConfigMaps, ...). */
  group: string;
  version: string;
  /** Lower-case plural used in paths, e.g. `vaultpolicies`. */
  plural: string;
  kind: string;
  namespaced: boolean;
}

function productResource(kind: string, group?: string): ResourceRef {
  const meta = KINDS.find((k) => k.kind === kind && (group === undefined || k.group === group));
  if (!meta) throw new Error(`schemas/kinds.ts declares no kind ${kind}`);
  return Object.freeze({
    group: meta.group,
    version: meta.version,
    plural: meta.plural,
    kind: meta.kind,
    namespaced: meta.scope === 'Namespaced',
  });
}

export const VAULT_POLICIES = productResource('VaultPolicy');
export const VAULT_ROLE_BINDINGS = productResource('VaultRoleBinding');
export const VAULT_GUARDRAILS = productResource('VaultGuardrail');
export const VAULT_DYNAMIC_SECRETS = productResource('VaultDynamicSecret');
export const SECRET_STORES = productResource('SecretStore');
export const CLUSTER_SECRET_STORES = productResource('ClusterSecretStore');
export const EXTERNAL_SECRETS = productResource('ExternalSecret');
export const CLUSTER_EXTERNAL_SECRETS = productResource('ClusterExternalSecret');
export const PUSH_SECRETS = productResource('PushSecret');
// ESO's generators (an ExternalSecret's dataFrom[].sourceRef.generatorRef): VaultDynamicSecret is also a vaultgate kind.
export const PASSWORD_GENERATORS = productResource('Password', GENERATOR_GROUP);
export const VAULT_DYNAMIC_SECRET_GENERATORS = productResource('VaultDynamicSecret', GENERATOR_GROUP);
export const CLUSTER_GENERATORS = productResource('ClusterGenerator', GENERATOR_GROUP);
