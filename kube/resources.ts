// The API resources vaultgate reads or writes, addressed as group/version/plural (what the REST paths use)
// plus kind (what SSA bodies and ownerReferences need). Paths are built here only, so every caller agrees
// with the apiserver's layout: /api/v1/... for the core group, /apis/<group>/<version>/... otherwise.

export interface ResourceRef {
  /** '' for the core group (Secrets, ConfigMaps, ...). */
  group: string;
  version: string;
  /** Lower-case plural used in paths, e.g. `vaultpolicies`. */
  plural: string;
  kind: string;
  namespaced: boolean;
}

function res(group: string, version: string, plural: string, kind: string, namespaced = true): ResourceRef {
  return Object.freeze({ group, version, plural, kind, namespaced });
}

export const SECRETS = res('', 'v1', 'secrets', 'Secret');
export const CONFIGMAPS = res('', 'v1', 'configmaps', 'ConfigMap');
export const SERVICEACCOUNTS = res('', 'v1', 'serviceaccounts', 'ServiceAccount');
export const NAMESPACES = res('', 'v1', 'namespaces', 'Namespace', false);
export const CORE_EVENTS = res('', 'v1', 'events', 'Event');
export const EVENTS = res('events.k8s.io', 'v1', 'events', 'Event');
export const LEASES = res('coordination.k8s.io', 'v1', 'leases', 'Lease');
export const CRDS = res('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false);
export const MUTATING_WEBHOOK_CONFIGURATIONS = res('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false);
export const VALIDATING_WEBHOOK_CONFIGURATIONS = res('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false);

export const VAULT_POLICIES = res('vaultgate.io', 'v1alpha1', 'vaultpolicies', 'VaultPolicy');
export const VAULT_ROLE_BINDINGS = res('vaultgate.io', 'v1alpha1', 'vaultrolebindings', 'VaultRoleBinding');
export const VAULT_GUARDRAILS = res('vaultgate.io', 'v1alpha1', 'vaultguardrails', 'VaultGuardrail', false);
export const SECRET_STORES = res('external-secrets.io', 'v1', 'secretstores', 'SecretStore');
export const CLUSTER_SECRET_STORES = res('external-secrets.io', 'v1', 'clustersecretstores', 'ClusterSecretStore', false);
export const EXTERNAL_SECRETS = res('external-secrets.io', 'v1', 'externalsecrets', 'ExternalSecret');
export const CLUSTER_EXTERNAL_SECRETS = res('external-secrets.io', 'v1', 'clusterexternalsecrets', 'ClusterExternalSecret', false);
export const PUSH_SECRETS = res('external-secrets.io', 'v1alpha1', 'pushsecrets', 'PushSecret');

/** `v1` for the core group, `<group>/<version>` otherwise (the object's `apiVersion`). */
export function apiVersionOf(r: ResourceRef): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** A stable id for a resource: one shared informer per id (its selectors are fixed by the first declaration). */
export function resourceId(r: ResourceRef): string {
  return `${r.group || 'core'}/${r.version}/${r.plural}`;
}

/**
 * REST path of a collection or object. `namespace` is ignored for cluster-scoped resources and may be
 * omitted for namespaced ones to address all namespaces (list/watch).
 */
export function resourcePath(r: ResourceRef, namespace?: string, name?: string, subresource?: string): string {
  let p = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  if (r.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${r.plural}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}
