// Every kind vaultgate serves: the vaultgate kinds plus the ESO-compatible ones (eso-kinds.ts) and ESO's
// generators (generator-kinds.ts).
// The CRD generator, the schema validator and the admission registry all read this list.
import type { KindMeta, PrinterColumn } from './kind-meta.ts';
import { ESO_KINDS } from './eso-kinds.ts';
import { GENERATOR_KIND_METAS } from './generator-kinds.ts';

export const VAULTGATE_GROUP = 'vaultgate.io';
export const VAULTGATE_VERSION = 'v1alpha1';
export const VAULTGATE_API_VERSION = `${VAULTGATE_GROUP}/${VAULTGATE_VERSION}`;

const READY: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'Whether Vault matches the spec',
};
const VAULT_NAME: PrinterColumn = {
  name: 'Vault Name',
  type: 'string',
  jsonPath: '.spec.vaultName',
  description: 'Name of the object in Vault',
};
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const VAULTGATE_KINDS: KindMeta[] = [
  {
    group: VAULTGATE_GROUP,
    version: VAULTGATE_VERSION,
    kind: 'VaultPolicy',
    plural: 'vaultpolicies',
    singular: 'vaultpolicy',
    shortNames: ['vp'],
    categories: ['vaultgate'],
    scope: 'Namespaced',
    schemaFile: 'vaultpolicy.schema.json',
    printerColumns: [READY, VAULT_NAME, AGE],
    statusSubresource: true,
  },
  {
    group: VAULTGATE_GROUP,
    version: VAULTGATE_VERSION,
    kind: 'VaultRoleBinding',
    plural: 'vaultrolebindings',
    singular: 'vaultrolebinding',
    shortNames: ['vrb'],
    categories: ['vaultgate'],
    scope: 'Namespaced',
    schemaFile: 'vaultrolebinding.schema.json',
    printerColumns: [
      READY,
      VAULT_NAME,
      { name: 'Policies', type: 'string', jsonPath: '.spec.policies', priority: 1 },
      AGE,
    ],
    statusSubresource: true,
  },
  {
    group: VAULTGATE_GROUP,
    version: VAULTGATE_VERSION,
    kind: 'VaultGuardrail',
    plural: 'vaultguardrails',
    singular: 'vaultguardrail',
    shortNames: ['vgr'],
    categories: ['vaultgate'],
    scope: 'Cluster',
    schemaFile: 'vaultguardrail.schema.json',
    printerColumns: [
      { ...READY, description: 'Whether the controller has made the guardrail effective' },
      { name: 'Mode', type: 'string', jsonPath: '.spec.mode' },
      {
        name: 'Namespaces',
        type: 'integer',
        jsonPath: '.status.selectedNamespaces',
        description: 'Namespaces it selects',
      },
      AGE,
    ],
    statusSubresource: true,
  },
  {
    group: VAULTGATE_GROUP,
    version: VAULTGATE_VERSION,
    kind: 'VaultDynamicSecret',
    plural: 'vaultdynamicsecrets',
    singular: 'vaultdynamicsecret',
    shortNames: ['vds'],
    categories: ['vaultgate'],
    scope: 'Namespaced',
    schemaFile: 'vaultdynamicsecret.schema.json',
    printerColumns: [
      { ...READY, description: 'Whether the Secret holds a live credential' },
      { name: 'Path', type: 'string', jsonPath: '.spec.path' },
      {
        name: 'Expires',
        type: 'date',
        jsonPath: '.status.lease.expiresAt',
        description: 'When the lease ends unless renewed',
      },
      AGE,
    ],
    statusSubresource: true,
  },
];

export const KINDS: KindMeta[] = [...VAULTGATE_KINDS, ...ESO_KINDS, ...GENERATOR_KIND_METAS];

export function findKind(group: string, version: string, kind: string): KindMeta | undefined {
  return KINDS.find((k) => k.group === group && k.version === version && k.kind === kind);
}

/** Look a kind up by `apiVersion` + `kind` as written in a manifest. */
export function findKindOf(apiVersion: string, kind: string): KindMeta | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return findKind(group, version, kind);
}
