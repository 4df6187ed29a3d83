// The cert Secret: one Secret holds the trust bundle, the signing CA's key and the serving pair, so every
// webhook replica serves the same pair (vault-k8s' injector-certs Secret, ESO's cert-controller Secret).
// Layout:  ca.crt  trust bundle (one or more CAs)      ca.key   signing CA key (never mounted by webhooks)
//          tls.crt serving leaf                         tls.key  serving key
//          annotation vaultgate.io/ca-rotation: non-secret rotation state (phase, fingerprints, publication)
//          annotation vaultgate.io/rotate-ca-requested-at: an operator's "rotate now" (kept; applies once)
// Writes carry resourceVersion: two keepers (a leader hand-over) can never both win.
import type { PublishedRecord, StoredPki } from './rotation.ts';
import { bundleFacts, tryCertFacts, keyMatchesCert } from './pem.ts';

export const ROTATION_ANNOTATION = 'vaultgate.io/ca-rotation';
/** Set by an operator (`kubectl annotate secret ... vaultgate.io/rotate-ca-requested-at=$(date -u +%FT%TZ)`). */
export const ROTATE_REQUEST_ANNOTATION = 'vaultgate.io/rotate-ca-requested-at';
export const SECRET_KEYS = { caBundle: 'ca.crt', caKey: 'ca.key', cert: 'tls.crt', key: 'tls.key' } as const;

export interface SecretObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  type?: string;
  data?: Record<string, string>;
  [k: string]: unknown;
}

/** The few Secret calls the keeper makes (adapter over kube/'s KubeClient in kube-adapter.ts). */
export interface SecretClient {
  getSecret(namespace: string, name: string): Promise<SecretObject | undefined>;
  createSecret(secret: SecretObject): Promise<SecretObject>;
  /** PUT with metadata.resourceVersion: rejects (409) when the Secret changed meanwhile. */
  replaceSecret(secret: SecretObject): Promise<SecretObject>;
}

/** Non-secret state shown in the annotation (humans read it with kubectl; the planner reads `published`). */
export interface RotationAnnotation {
  phase: 'steady' | 'ca-staged' | 'retiring-old-ca' | 'incomplete';
  signer?: string;
  trusted: string[];
  leafIssuer?: string;
  published?: { bundleId: string; at: string };
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined): string | undefined =>
  s ? Buffer.from(s, 'base64').toString('utf8') : undefined;

export function readStoredPki(secret: SecretObject | undefined): StoredPki | undefined {
  if (!secret) return undefined;
  const d = secret.data ?? {};
  let published: PublishedRecord | undefined;
  try {
    const ann = JSON.parse(secret.metadata.annotations?.[ROTATION_ANNOTATION] ?? '{}') as Partial<RotationAnnotation>;
    const at = ann.published ? Date.parse(ann.published.at) : NaN;
    if (ann.published && typeof ann.published.bundleId === 'string' && Number.isFinite(at))
      published = { bundleId: ann.published.bundleId, at };
  } catch {
    // a hand-edited annotation: treat as "never published", which only delays a leaf renewal by the grace
  }
  const requested = Date.parse(secret.metadata.annotations?.[ROTATE_REQUEST_ANNOTATION] ?? '');
  return {
    rotateRequestedAt: Number.isFinite(requested) ? requested : undefined,
    caBundle: unb64(d[SECRET_KEYS.caBundle]),
    caKey: unb64(d[SECRET_KEYS.caKey]),
    cert: unb64(d[SECRET_KEYS.cert]),
    key: unb64(d[SECRET_KEYS.key]),
    published,
  };
}

/** The annotation describing `stored` (fingerprints and times only). */
export function describeRotation(stored: StoredPki): RotationAnnotation {
  const bundle = bundleFacts(stored.caBundle);
  const signer = bundle.find((c) => keyMatchesCert(stored.caKey, c));
  const leaf = tryCertFacts(stored.cert);
  const leafIssuer = leaf
    ? bundle.find((c) => c.subject === leaf.issuer && leaf.x509.verify(c.x509.publicKey))
    : undefined;
  const phase: RotationAnnotation['phase'] =
    !signer || !leaf
      ? 'incomplete'
      : bundle.length === 1
        ? 'steady'
        : leafIssuer?.fingerprint === signer.fingerprint
          ? 'retiring-old-ca'
          : 'ca-staged';
  return {
    phase,
    signer: signer?.fingerprint,
    trusted: bundle.map((c) => c.fingerprint),
    leafIssuer: leafIssuer?.fingerprint,
    published: stored.published
      ? { bundleId: stored.published.bundleId, at: new Date(stored.published.at).toISOString() }
      : undefined,
  };
}

/** `base` with its data and rotation annotation replaced by `stored` (labels and other metadata kept). */
export function toSecret(stored: StoredPki, base: SecretObject): SecretObject {
  const data: Record<string, string> = {};
  if (stored.caBundle) data[SECRET_KEYS.caBundle] = b64(stored.caBundle);
  if (stored.caKey) data[SECRET_KEYS.caKey] = b64(stored.caKey);
  if (stored.cert) data[SECRET_KEYS.cert] = b64(stored.cert);
  if (stored.key) data[SECRET_KEYS.key] = b64(stored.key);
  return {
    ...base,
    apiVersion: 'v1',
    kind: 'Secret',
    type: base.type ?? 'Opaque',
    metadata: {
      ...base.metadata,
      labels: {
        ...base.metadata.labels,
        'app.kubernetes.io/managed-by': base.metadata.labels?.['app.kubernetes.io/managed-by'] ?? 'vaultgate',
        'vaultgate.io/component': 'webhook-tls',
      },
      annotations: { ...base.metadata.annotations, [ROTATION_ANNOTATION]: JSON.stringify(describeRotation(stored)) },
    },
    data,
  };
}

/** Write `stored` into the Secret: create when absent, else an optimistic-concurrency replace. */
export async function writeStoredPki(
  client: SecretClient,
  namespace: string,
  name: string,
  current: SecretObject | undefined,
  stored: StoredPki,
): Promise<SecretObject> {
  if (!current) return client.createSecret(toSecret(stored, { metadata: { name, namespace } }));
  return client.replaceSecret(toSecret(stored, current));
}
