// A realistic admission request: a 20-rule VaultPolicy CREATE that the default guardrails accept.
import type { AdmissionRequest } from '../../webhook/admission/types.ts';

export function twentyRulePolicyReview(uid = 'bench-0000'): {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request: AdmissionRequest;
} {
  const caps = [['read'], ['read', 'list'], ['create', 'update'], ['read', 'update', 'patch'], ['delete']];
  const rules = Array.from({ length: 20 }, (_, i) => ({
    path: i % 2 === 0 ? `secret/data/payments/service-${i}/*` : `secret/metadata/payments/service-${i}/*`,
    capabilities: caps[i % caps.length]!,
    ...(i % 7 === 0 ? { allowedParameters: { ttl: ['1h', '2h'] } } : {}),
  }));
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
      resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultpolicies' },
      namespace: 'payments',
      name: 'payments-app',
      operation: 'CREATE',
      userInfo: {
        username: 'system:serviceaccount:argocd:argocd-application-controller',
        groups: ['system:serviceaccounts', 'system:authenticated'],
      },
      object: {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: {
          name: 'payments-app',
          namespace: 'payments',
          labels: { team: 'payments' },
          annotations: { 'argocd.argoproj.io/tracking-id': 'payments:vaultgate.io/VaultPolicy:payments/payments-app' },
        },
        spec: { rules },
      },
      oldObject: null,
      dryRun: false,
    },
  };
}
