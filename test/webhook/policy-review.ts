// The admission request the webhook server tests send: a VaultPolicy CREATE in team-a whose one rule
// reads the namespace's own KV subtree (the default guardrails allow it), as the JSON body of a POST.

/** `request` adds to or replaces the request's fields; `username` is the requester (default `alice`). */
export function policyCreateReview(
  uid: string,
  opts: { username?: string; request?: Record<string, unknown> } = {},
): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      operation: 'CREATE',
      userInfo: { username: opts.username ?? 'alice' },
      kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
      resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultpolicies' },
      namespace: 'team-a',
      name: 'p',
      object: {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'p', namespace: 'team-a' },
        spec: { rules: [{ path: 'secret/data/team-a/*', capabilities: ['read'] }] },
      },
      ...opts.request,
    },
  });
}
