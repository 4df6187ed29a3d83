// Metadata the CRD generator needs beside each JSON Schema (which stays a plain schema of the object).
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface KindMeta {
  group: string; // e.g. vaultgate.io, external-secrets.io
  version: string; // e.g. v1alpha1, v1
  kind: string; // e.g. VaultPolicy
  plural: string; // e.g. vaultpolicies
  singular: string;
  shortNames: string[];
  categories?: string[]; // e.g. ['vaultgate'] so `kubectl get vaultgate` lists them
  scope: 'Namespaced' | 'Cluster';
  schemaFile: string; // file name in schemas/, e.g. vaultpolicy.schema.json
  printerColumns: PrinterColumn[];
  statusSubresource: boolean;
}
