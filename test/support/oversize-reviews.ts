// Maximum-size AdmissionReviews, one per shape a hostile tenant (or a pod POSTing forged reviews) can
// send: each fills the webhook's 7 MiB body limit with what costs the most to parse or copy, and stays
// under the webhook's JSON-value bound (so it reaches the admission core). Shared by the size-gate tests
// (test/webhook/review/size-gate.test.ts) and the webhook benchmark's max-size row (test/bench/webhook.ts).
import type { AdmissionRequest } from '../../webhook/admission/types.ts';

/** Just under the 7 MiB body limit, leaving room for the envelope. */
export const NEAR_BODY_LIMIT = 7 * 1024 * 1024 - 4096;

/** `unit` repeated to about `bytes` bytes of JSON (its escapes counted). */
function text(unit: string, bytes: number): string {
  return unit.repeat(Math.max(1, Math.floor(bytes / (JSON.stringify(unit).length - 2))));
}

const DENSE_HCL = 'path "secret/data/team-a/app/*" {\n  capabilities = ["read"]\n}\n';
const DENSE_TEMPLATE = '{{ .a | upper }} {{ .b | lower }}\n';

/** The admission request of each shape, with about `chars` bytes of hostile JSON text (default: fills the body limit). */
export function oversizeRequests(chars = NEAR_BODY_LIMIT - 2048): Record<string, Omit<AdmissionRequest, 'uid'>> {
  const base = { operation: 'CREATE' as const, userInfo: { username: 'tenant' }, namespace: 'team-a', name: 'big' };
  const meta = { name: 'big', namespace: 'team-a' };
  const esSpec = (template: Record<string, unknown>) => ({
    secretStoreRef: { name: 's', kind: 'SecretStore' },
    target: { template },
    data: [{ secretKey: 'a', remoteRef: { key: 'x' } }],
  });
  return {
    'VaultPolicy raw HCL': {
      ...base,
      kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
      resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultpolicies' },
      object: {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: meta,
        spec: { policy: text(DENSE_HCL, chars) },
      },
    },
    'ExternalSecret template': {
      ...base,
      kind: { group: 'external-secrets.io', version: 'v1', kind: 'ExternalSecret' },
      resource: { group: 'external-secrets.io', version: 'v1', resource: 'externalsecrets' },
      object: {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: meta,
        spec: esSpec({ data: { key: text(DENSE_TEMPLATE, chars) } }),
      },
    },
    'PushSecret template': {
      ...base,
      kind: { group: 'external-secrets.io', version: 'v1alpha1', kind: 'PushSecret' },
      resource: { group: 'external-secrets.io', version: 'v1alpha1', resource: 'pushsecrets' },
      object: {
        apiVersion: 'external-secrets.io/v1alpha1',
        kind: 'PushSecret',
        metadata: meta,
        spec: {
          secretStoreRefs: [{ name: 's', kind: 'SecretStore' }],
          selector: { secret: { name: 'src' } },
          template: { data: { key: text(DENSE_TEMPLATE, chars) } },
          data: [{ match: { secretKey: 'a', remoteRef: { remoteKey: 'x' } } }],
        },
      },
    },
    'ClusterExternalSecret template': {
      ...base,
      namespace: '',
      kind: { group: 'external-secrets.io', version: 'v1', kind: 'ClusterExternalSecret' },
      resource: { group: 'external-secrets.io', version: 'v1', resource: 'clusterexternalsecrets' },
      object: {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ClusterExternalSecret',
        metadata: { name: 'big' },
        spec: {
          namespaceSelectors: [{ matchLabels: { team: 'a' } }],
          externalSecretSpec: esSpec({ data: { key: text(DENSE_TEMPLATE, chars) } }),
        },
      },
    },
    'ExternalSecret templateFrom literals': {
      ...base,
      kind: { group: 'external-secrets.io', version: 'v1', kind: 'ExternalSecret' },
      resource: { group: 'external-secrets.io', version: 'v1', resource: 'externalsecrets' },
      // many small templates, each well under any per-field limit: only their total is too large
      object: {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: meta,
        spec: esSpec({
          templateFrom: Array.from({ length: 900 }, () => ({
            literal: text(DENSE_TEMPLATE, Math.floor(chars / 900) - 40),
          })),
        }),
      },
    },
  };
}

export function reviewBody(uid: string, request: Omit<AdmissionRequest, 'uid'>): string {
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid, ...request } });
}
