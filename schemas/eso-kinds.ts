// PLACEHOLDER: ESO-compatible kinds (SecretStore, ClusterSecretStore, ExternalSecret) are added here.
import type { KindMeta } from './kind-meta.ts';
export const ESO_KINDS: KindMeta[] = [];
