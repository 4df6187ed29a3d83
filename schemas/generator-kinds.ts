// ESO's generators (generators.external-secrets.io/v1alpha1) that vaultgate serves, in ESO's group and
// version so existing manifests apply unchanged: Password, VaultDynamicSecret and ClusterGenerator (which
// wraps either). Names, scope and categories as ESO v0.16.2's kubebuilder markers
// (apis/generators/v1alpha1/types_{password,vault,cluster}.go): no short names, no printer columns.
import type { KindMeta } from './kind-meta.ts';

export const GENERATOR_GROUP = 'generators.external-secrets.io';
export const GENERATOR_VERSION = 'v1alpha1';
export const GENERATOR_API_VERSION = `${GENERATOR_GROUP}/${GENERATOR_VERSION}`;
const CATEGORIES = ['external-secrets', 'external-secrets-generators'];

/** The generator kinds an ExternalSecret's dataFrom[].sourceRef.generatorRef may name. */
export const GENERATOR_KINDS = ['Password', 'VaultDynamicSecret', 'ClusterGenerator'] as const;
export type GeneratorKind = (typeof GENERATOR_KINDS)[number];
/** The spec.kind values of a ClusterGenerator vaultgate generates, with the field holding each one's spec. */
export const CLUSTER_GENERATOR_SPECS = {
  Password: 'passwordSpec',
  VaultDynamicSecret: 'vaultDynamicSecretSpec',
} as const;

const meta = (kind: string, plural: string, scope: KindMeta['scope'], schemaFile: string): KindMeta => ({
  group: GENERATOR_GROUP,
  version: GENERATOR_VERSION,
  kind,
  plural,
  singular: plural.slice(0, -1),
  shortNames: [],
  categories: CATEGORIES,
  scope,
  schemaFile,
  printerColumns: [],
  statusSubresource: true,
});

export const GENERATOR_KIND_METAS: KindMeta[] = [
  meta('Password', 'passwords', 'Namespaced', 'password.schema.json'),
  meta('VaultDynamicSecret', 'vaultdynamicsecrets', 'Namespaced', 'vaultdynamicsecret-generator.schema.json'),
  meta('ClusterGenerator', 'clustergenerators', 'Cluster', 'clustergenerator.schema.json'),
];
