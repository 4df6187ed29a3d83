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

export const ESO_KINDS: KindMeta[] = [
  {
    group: ESO_GROUP,
    version: ESO_VERSION,
    kind: 'SecretStore',
    plural: 'secretstores',
    singular: 'secretstore',
    shortNames: ['ss'],
    categories: CATEGORIES,
    scope: 'Namespaced',
    schemaFile: 'secretstore.schema.json',
    printerColumns: STORE_COLUMNS,
    statusSubresource: true,
  },
  {
    group: ESO_GROUP,
    version: ESO_VERSION,
    kind: 'ClusterSecretStore',
    plural: 'clustersecretstores',
    singular: 'clustersecretstore',
    shortNames: ['css'],
    categories: CATEGORIES,
    scope: 'Cluster',
    schemaFile: 'clustersecretstore.schema.json',
    printerColumns: STORE_COLUMNS,
    statusSubresource: true,
  },
  {
    group: ESO_GROUP,
    version: ESO_VERSION,
    kind: 'ExternalSecret',
    plural: 'externalsecrets',
    singular: 'externalsecret',
    shortNames: ['es'],
    categories: CATEGORIES,
    scope: 'Namespaced',
    schemaFile: 'externalsecret.schema.json',
    printerColumns: [
      { name: 'StoreType', type: 'string', jsonPath: '.spec.secretStoreRef.kind' },
      { name: 'Store', type: 'string', jsonPath: '.spec.secretStoreRef.name' },
      { name: 'Refresh Interval', type: 'string', jsonPath: '.spec.refreshInterval' },
      READY_REASON,
      READY,
      AGE,
    ],
    statusSubresource: true,
  },
  {
    group: ESO_GROUP,
    version: ESO_VERSION,
    kind: 'ClusterExternalSecret',
    plural: 'clusterexternalsecrets',
    singular: 'clusterexternalsecret',
    shortNames: ['ces'],
    categories: CATEGORIES,
    scope: 'Cluster',
    schemaFile: 'clusterexternalsecret.schema.json',
    printerColumns: [
      { name: 'Store', type: 'string', jsonPath: '.spec.externalSecretSpec.secretStoreRef.name' },
      { name: 'Refresh Interval', type: 'string', jsonPath: '.spec.refreshTime' },
      READY,
    ],
    statusSubresource: true,
  },
  {
    group: ESO_GROUP,
    version: ESO_PUSH_VERSION,
    kind: 'PushSecret',
    plural: 'pushsecrets',
    singular: 'pushsecret',
    shortNames: ['ps'],
    categories: CATEGORIES,
    scope: 'Namespaced',
    schemaFile: 'pushsecret.schema.json',
    printerColumns: [AGE, READY_REASON],
    statusSubresource: true,
  },
];
