// The world of the VaultPolicy and VaultRoleBinding reconciler tests: a Vault simulator with a root-token
// SysApi, started before a file's tests and stopped after them; an in-memory Kubernetes (harness.ts) with
// the index the VaultRoleBinding reconciler finds a policy's dependents by; and the objects a tenant and
// the cluster admin put there.
import { after, before } from 'node:test';
import type { KubeObject } from '../../../kube/objects.ts';
import { VAULT_ROLE_BINDINGS } from '../../../schemas/resources.ts';
import { createSysApi } from '../../../vault/sys.ts';
import type { SysApi, VaultRequest } from '../../../vault/types.ts';
import { POLICY_INDEX, policyIndex } from '../../../controller/reconcilers/vaultrolebinding.ts';
import type { VaultSim } from '../../sim/vault.ts';
import { startHarness, type Harness } from '../../vault/helpers.ts';
import { FakeKube } from './harness.ts';

export interface VaultWorld {
  /** The simulator (faults, request counts); there once the file's `before` hook ran. */
  readonly sim: VaultSim;
  /** Vault's sys API as root, what the reconcilers are given and what tests read Vault back with. */
  readonly sys: SysApi;
}

/** Registers the file's `before`/`after` hooks that start and stop the simulator: call it at the top level. */
export function vaultWorld(): VaultWorld {
  let harness: Harness | undefined;
  const started = (): Harness => {
    if (!harness) throw new Error('vaultWorld: the simulator is not started (used outside a test?)');
    return harness;
  };
  void before(async () => {
    harness = await startHarness({}, { timeoutMs: 2000 });
  });
  void after(async () => {
    await harness?.close();
  });
  return {
    get sim() {
      return started().sim;
    },
    sys: createSysApi({ request: <T>(req: VaultRequest) => started().root.request<T>(req) }),
  };
}

/** An in-memory Kubernetes whose VaultRoleBinding cache is indexed by the policies each binding names. */
export function vaultObjectKube(): FakeKube {
  const kube = new FakeKube();
  kube.cacheOf(VAULT_ROLE_BINDINGS).addIndex(POLICY_INDEX, policyIndex);
  return kube;
}

/** A namespaced vaultgate.io object a tenant writes. */
const tenantObject = (
  kind: string,
  name: string,
  spec: Record<string, unknown>,
  annotations: Record<string, string> | undefined,
  namespace: string,
): KubeObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind,
  metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
  spec,
});

/** A tenant's VaultPolicy; by default one rule reading its namespace's KV subtree in `team-a`. */
export const vaultPolicy = (
  name: string,
  spec: Record<string, unknown> = { rules: [{ path: 'secret/data/team-a/*', capabilities: ['read'] }] },
  annotations?: Record<string, string>,
  namespace = 'team-a',
): KubeObject => tenantObject('VaultPolicy', name, spec, annotations, namespace);

/** A tenant's VaultRoleBinding in `namespace` (default `team-a`). */
export const vaultRoleBinding = (
  name: string,
  spec: Record<string, unknown>,
  annotations?: Record<string, string>,
  namespace = 'team-a',
): KubeObject => tenantObject('VaultRoleBinding', name, spec, annotations, namespace);

/** A cluster admin's VaultGuardrail. */
export function guardrail(name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'vaultgate.io/v1alpha1', kind: 'VaultGuardrail', metadata: { name }, spec };
}

/** The cluster admin's consent to adoption in every namespace: an enforce guardrail with allowAdoption. */
export const ADOPTION_CONSENT = guardrail('adopt-ok', { mode: 'enforce', allowAdoption: true });
