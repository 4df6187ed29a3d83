// Every kind vaultgate serves: the vaultgate kinds plus the ESO-compatible ones (eso-kinds.ts) and ESO's
// generators (generator-kinds.ts).
// The CRD generator, the schema validator and the admission registry all read this list.
import type { KindMeta, PrinterColumn } from './kind-meta.ts';
import { ESO_KINDS } from './eso-kinds.ts';
import { GENERATOR_KIND_METAS } from './generator-kinds.ts';

export const VAULTGATE_GROUP = 'vaultgate.io';
export const VAULTGATE_VERSION = 'v1alpha1';
export const VAULTGATE_API_VERSION = `${VAULTGATE_GROUP}/${VAULTGATE_VERSION}`;

/** A printer column of `kubectl get`: its header, its type, where its value is, and what it means. */
function column(name: string, type: PrinterColumn['type'], jsonPath: string, description?: string): PrinterColumn {
  return { name, type, jsonPath, ...(description === undefined ? {} : { description }) };
}

// Each kind's printer columns: Ready first (what it means for the kind), Age last.
const READY: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'Whether Vault matches the spec',
};
const VAULT_NAME = column('Vault Name', 'string', '.spec.vaultName', 'Name of the object in Vault');
const AGE = column('Age', 'date', '.metadata.creationTimestamp');
const POLICIES = { ...column('Policies', 'string', '.spec.policies'), priority: 1 };
const READY_EFFECTIVE = { ...READY, description: 'Whether the controller has made the guardrail effective' };
const MODE = column('Mode', 'string', '.spec.mode');
const NAMESPACES = column('Namespaces', 'integer', '.status.selectedNamespaces', 'Namespaces it selects');
const READY_LIVE = { ...READY, description: 'Whether the Secret holds a live credential' };
const PATH = column('Path', 'string', '.spec.path');
const EXPIRES = column('Expires', 'date', '.status.lease.expiresAt', 'When the lease ends unless renewed');

/** A vaultgate kind: its singular is the lower-cased kind, its schema `<singular>.schema.json`. */
function vaultgateKind(
  kind: string,
  plural: string,
  shortName: string,
  scope: KindMeta['scope'],
  printerColumns: PrinterColumn[],
): KindMeta {
  const singular = kind.toLowerCase();
  return {
    group: VAULTGATE_GROUP,
    version: VAULTGATE_VERSION,
    kind,
    plural,
    singular,
    shortNames: [shortName],
    categories: ['vaultgate'],
    scope,
    schemaFile: `${singular}.schema.json`,
    printerColumns,
    statusSubresource: true,
  };
}

export const VAULTGATE_KINDS: KindMeta[] = [
  vaultgateKind('VaultPolicy', 'vaultpolicies', 'vp', 'Namespaced', [READY, VAULT_NAME, AGE]),
  vaultgateKind('VaultRoleBinding', 'vaultrolebindings', 'vrb', 'Namespaced', [READY, VAULT_NAME, POLICIES, AGE]),
  vaultgateKind('VaultGuardrail', 'vaultguardrails', 'vgr', 'Cluster', [READY_EFFECTIVE, MODE, NAMESPACES, AGE]),
  vaultgateKind('VaultDynamicSecret', 'vaultdynamicsecrets', 'vds', 'Namespaced', [READY_LIVE, PATH, EXPIRES, AGE]),
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
