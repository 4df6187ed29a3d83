// ESO-compatible kinds, served in ESO's own group and version so existing manifests apply unchanged
// (Vault provider only). Names, short names and printer columns as ESO's CRDs
// (apis/externalsecrets/v1/*_types.go kubebuilder markers).
import type { KindMeta, PrinterColumn } from './kind-meta.ts';

export const ESO_GROUP = 'external-secrets.io';
export const ESO_VERSION = 'v1';
export const ESO_API_VERSION = `${ESO_GROUP}/${ESO_VERSION}`;
/** PushSecret is still ESO's v1alpha1 (apis/externalsecrets/v1alpha1). */
export const ESO_PUSH_VERSION = 'v1alpha1';
/** `kubectl get external-secrets` lists all three, as with ESO; the second category singles out ours. */
const CATEGORIES = ['external-secrets', 'external-secrets-vault'];

const READY_REASON: PrinterColumn = {
  name: 'Status',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
};
const READY: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
};
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const STORE_COLUMNS: PrinterColumn[] = [
  AGE,
  READY_REASON,
  { name: 'Capabilities', type: 'string', jsonPath: '.status.capabilities' },
  READY,
];

/** An ESO kind: its singular is the lower-cased kind, its schema `<singular>.schema.json`. */
function esoKind(
  kind: string,
  plural: string,
  shortName: string,
  scope: KindMeta['scope'],
  printerColumns: PrinterColumn[],
  version = ESO_VERSION,
): KindMeta {
  const singular = kind.toLowerCase();
  return {
    group: ESO_GROUP,
    version,
    kind,
    plural,
    singular,
    shortNames: [shortName],
    categories: CATEGORIES,
    scope,
    schemaFile: `${singular}.schema.json`,
    printerColumns,
    statusSubresource: true,
  };
}

export const ESO_KINDS: KindMeta[] = [
  esoKind('SecretStore', 'secretstores', 'ss', 'Namespaced', STORE_COLUMNS),
  esoKind('ClusterSecretStore', 'clustersecretstores', 'css', 'Cluster', STORE_COLUMNS),
  esoKind('ExternalSecret', 'externalsecrets', 'es', 'Namespaced', [
    { name: 'StoreType', type: 'string', jsonPath: '.spec.secretStoreRef.kind' },
    { name: 'Store', type: 'string', jsonPath: '.spec.secretStoreRef.name' },
    { name: 'Refresh Interval', type: 'string', jsonPath: '.spec.refreshInterval' },
    READY_REASON,
    READY,
    AGE,
  ]),
  esoKind('ClusterExternalSecret', 'clusterexternalsecrets', 'ces', 'Cluster', [
    { name: 'Store', type: 'string', jsonPath: '.spec.externalSecretSpec.secretStoreRef.name' },
    { name: 'Refresh Interval', type: 'string', jsonPath: '.spec.refreshTime' },
    READY,
  ]),
  esoKind('PushSecret', 'pushsecrets', 'ps', 'Namespaced', [AGE, READY_REASON], ESO_PUSH_VERSION),
];
