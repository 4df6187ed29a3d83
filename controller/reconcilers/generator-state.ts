// The state Secret in which an ExternalSecret keeps a VaultDynamicSecret generator's credential
// (externalsecret-generators.ts): `esgen-<uid>-<i>`, owned by the ExternalSecret (gone with it), the
// credential as data, a label naming the ExternalSecret, and in annotations the leases (ids and times,
// never a value) and the provider block that minted them. Its format is written and read here only. Pure.
import { controllerReference } from '../../kube/apply.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { EXTERNAL_SECRETS } from '../../schemas/resources.ts';
import type { VaultDynamicSecretGeneratorSpec } from '../../schemas/types.generated.ts';
import type { KeptLeases } from './externalsecret-plan.ts';

export type StateSecret = KubeObject & { data?: Record<string, string> };
type Provider = VaultDynamicSecretGeneratorSpec['provider'];

/** Label: the uid of the ExternalSecret it keeps a credential for. */
const LABEL_STATE_FOR = 'vaultgate.io/generator-state-for';
/** Annotation: `{lease, previous}` (ids and times only, never a value). */
const ANNOTATION_LEASES = 'vaultgate.io/generator-lease';
/**
 * Annotation: the provider block that minted the lease, so it can be revoked when the generator is gone
 * first (a namespace deleted, a manifest file deleted with kubectl).
 */
const ANNOTATION_PROVIDER = 'vaultgate.io/generator-provider';

/** The state Secret of dataFrom[index] (ESO keys its GeneratorState by the index too). */
export function stateSecretName(es: KubeObject, index: number): string {
  return `esgen-${es.metadata.uid ?? es.metadata.name}-${index}`;
}

/** The dataFrom index a state Secret of `es` is named for; undefined: not such a name. */
export function stateIndexOf(es: KubeObject, name: string): number | undefined {
  const prefix = stateSecretName(es, 0).slice(0, -1);
  const index = name.slice(prefix.length);
  return name.startsWith(prefix) && /^[0-9]+$/.test(index) ? Number(index) : undefined;
}

/** The label selector of the state Secrets of the ExternalSecret `uid`. */
export function stateSelector(uid: string): string {
  return `${LABEL_STATE_FOR}=${uid}`;
}

/** `secret` is labelled a state Secret of the ExternalSecret `uid` (a Secret of that name made by someone else is not). */
export function isStateOf(secret: StateSecret | undefined, uid: string | undefined): secret is StateSecret {
  return secret !== undefined && secret.metadata.labels?.[LABEL_STATE_FOR] === uid;
}

/** The state Secret to create or apply for `es`, holding `data` and `kept`; never labelled as a target. */
export function stateSecret(
  es: KubeObject,
  name: string,
  data: Map<string, Buffer>,
  kept: KeptLeases,
  provider: Provider,
): StateSecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: es.metadata.namespace,
      labels: { [LABEL_STATE_FOR]: es.metadata.uid ?? '' },
      annotations: { [ANNOTATION_LEASES]: JSON.stringify(kept), [ANNOTATION_PROVIDER]: JSON.stringify(provider) },
      ownerReferences: [controllerReference(EXTERNAL_SECRETS, es)],
    },
    type: 'Opaque',
    data: Object.fromEntries([...data].map(([k, v]) => [k, v.toString('base64')])),
  };
}

/** The kept credential's keys. */
export function stateDataOf(secret: StateSecret): Map<string, Buffer> {
  return new Map(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

/** The leases the state Secret keeps; none when it is missing or its annotation unreadable. */
export function keptLeasesOf(secret: StateSecret | undefined): KeptLeases {
  const text = secret?.metadata.annotations?.[ANNOTATION_LEASES];
  if (!text) return { previous: [] };
  try {
    const parsed = JSON.parse(text) as Partial<KeptLeases>;
    return {
      ...(parsed.lease ? { lease: parsed.lease } : {}),
      previous: Array.isArray(parsed.previous) ? parsed.previous : [],
    };
  } catch {
    return { previous: [] };
  }
}

/** The provider block that minted the kept leases; undefined when not recorded (kept by an older version). */
export function providerOf(secret: StateSecret | undefined): Provider | undefined {
  const text = secret?.metadata.annotations?.[ANNOTATION_PROVIDER];
  if (!text) return undefined;
  try {
    const p = JSON.parse(text) as unknown;
    return p && typeof p === 'object' && !Array.isArray(p) ? (p as Provider) : undefined;
  } catch {
    return undefined;
  }
}
