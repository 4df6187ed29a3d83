// The AdmissionContext the controller re-checks objects with, built from its informer caches: the same
// inputs the webhook uses, so "allowed at admission" and "allowed at reconcile" agree.
import type { Store } from '../../kube/cache.ts';
import type { AdmissionContext, GuardrailObject } from '../../webhook/admission/context.ts';

export interface AdmissionSources {
  guardrails?: Store;
  namespaces?: Store;
  policies?: Store;
  namePrefix: string;
  controllerClass: string;
}

export function admissionContext(src: AdmissionSources): AdmissionContext {
  return {
    guardrails: (src.guardrails?.list() ?? []) as unknown as GuardrailObject[],
    namespaceLabels: (ns) => {
      const obj = src.namespaces?.get(ns);
      return obj ? (obj.metadata.labels ?? {}) : undefined;
    },
    policyExists: (ns, name) => (src.policies ? src.policies.get(`${ns}/${name}`) !== undefined : undefined),
    namePrefix: src.namePrefix,
    controllerClass: src.controllerClass,
  };
}
