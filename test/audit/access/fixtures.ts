// What the access-report tests share: the example manifests' path (examples/audit/manifests.yaml), and
// builders of the two objects that grant access, a VaultPolicy and a VaultRoleBinding.
import { fileURLToPath } from 'node:url';
import type { KubeObj } from '../../../audit/access/model.ts';

export const EXAMPLE = fileURLToPath(new URL('../../../examples/audit/manifests.yaml', import.meta.url));

export const vp = (ns: string, name: string, rules: Array<{ path: string; capabilities: string[] }>): KubeObj => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: ns },
  spec: { rules },
});
export const vrb = (ns: string, name: string, serviceAccounts: string[], policies: string[]): KubeObj => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultRoleBinding',
  metadata: { name, namespace: ns },
  spec: { serviceAccounts, policies },
});
