// Kubernetes' own API resources vaultgate reads or writes, addressed as group/version/plural (what the REST
// paths use) plus kind (what SSA bodies and ownerReferences need); the product's kinds are in
// schemas/resources.ts. Paths are built here only, so every caller agrees with the apiserver's layout:
// /api/v1/... for the core group, /apis/<group>/<version>/... otherwise.
import type { ResourceRef } from '../schemas/resources.ts';

export type { ResourceRef };

function res(group: string, version: string, plural: string, kind: string, namespaced = true): ResourceRef {
  return Object.freeze({ group, version, plural, kind, namespaced });
}

export const SECRETS = res('', 'v1', 'secrets', 'Secret');
export const CONFIGMAPS = res('', 'v1', 'configmaps', 'ConfigMap');
export const SERVICEACCOUNTS = res('', 'v1', 'serviceaccounts', 'ServiceAccount');
export const NAMESPACES = res('', 'v1', 'namespaces', 'Namespace', false);
export const CORE_EVENTS = res('', 'v1', 'events', 'Event');
export const EVENTS = res('events.k8s.io', 'v1', 'events', 'Event');
export const DEPLOYMENTS = res('apps', 'v1', 'deployments', 'Deployment');
export const STATEFULSETS = res('apps', 'v1', 'statefulsets', 'StatefulSet');
export const DAEMONSETS = res('apps', 'v1', 'daemonsets', 'DaemonSet');
export const LEASES = res('coordination.k8s.io', 'v1', 'leases', 'Lease');
export const CRDS = res('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false);
export const MUTATING_WEBHOOK_CONFIGURATIONS = res(
  'admissionregistration.k8s.io',
  'v1',
  'mutatingwebhookconfigurations',
  'MutatingWebhookConfiguration',
  false,
);
export const VALIDATING_WEBHOOK_CONFIGURATIONS = res(
  'admissionregistration.k8s.io',
  'v1',
  'validatingwebhookconfigurations',
  'ValidatingWebhookConfiguration',
  false,
);

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
