import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { VaultSim } from '../../sim/vault.ts';
import { createVaultClient } from '../../../vault/client.ts';
import { createSysApi } from '../../../vault/sys.ts';
import type { VaultClient, VaultRequest, VaultRequester, SysApi } from '../../../vault/types.ts';
import { VAULT_GUARDRAILS, VAULT_POLICIES, VAULT_ROLE_BINDINGS } from '../../../schemas/resources.ts';
import { createVaultPolicyReconciler } from '../../../controller/reconcilers/vaultpolicy.ts';
import {
  createVaultRoleBindingReconciler,
  OWNED_CONDITION,
  POLICY_INDEX,
  policyIndex,
} from '../../../controller/reconcilers/vaultrolebinding.ts';
import { FakeKube, readyOf } from './harness.ts';

let sim: VaultSim;
let client: VaultClient;
let sys: SysApi;

function asRoot(c: VaultClient, token: string): VaultRequester {
  return { request: <T>(req: VaultRequest) => c.request<T>({ ...req, token }) };
}

void before(async () => {
  sim = await VaultSim.start();
  client = createVaultClient({ address: sim.addr, timeoutMs: 2000 });
  sys = createSysApi(asRoot(client, sim.rootToken));
});
void after(async () => {
  client.close();
  await sim.stop();
});

const policy = (
  name: string,
  spec: Record<string, unknown> = { rules: [{ path: 'secret/data/team-a/*', capabilities: ['read'] }] },
  annotations?: Record<string, string>,
) => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: 'team-a', ...(annotations ? { annotations } : {}) },
  spec,
});

void describe('VaultRoleBinding reconciler', () => {
  let kube: FakeKube;
  void beforeEach(() => {
    kube = new FakeKube();
    kube.cacheOf(VAULT_ROLE_BINDINGS).addIndex(POLICY_INDEX, policyIndex);
    sim.clearFaults();
  });
  const binding = (
    name: string,
    policies: string[],
    extra: Record<string, unknown> = {},
    annotations?: Record<string, string>,
  ) => ({
    apiVersion: 'vaultgate.io/v1alpha1',
    kind: 'VaultRoleBinding',
    metadata: { name, namespace: 'team-a', ...(annotations ? { annotations } : {}) },
    spec: { serviceAccounts: ['app'], policies, audience: 'vault', ...extra },
  });

  void test('missing policy → PolicyNotFound; converges when the policy appears (dependents found by index)', async () => {
    const vp = createVaultPolicyReconciler({ sys, namePrefix: 'vaultgate' });
    const vrb = createVaultRoleBindingReconciler({ sys, namePrefix: 'vaultgate' });
    kube.put(VAULT_ROLE_BINDINGS, binding('b1', ['reader']));
    await kube.reconcile(vrb, 'team-a/b1');
    let obj = kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b1');
    assert.equal(readyOf(obj)?.reason, 'PolicyNotFound');
    let role = await sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b1');
    assert.deepEqual(role?.token_policies ?? [], [], 'nothing bound that vaultgate did not write');
    kube.put(VAULT_POLICIES, policy('reader'));
    await kube.reconcile(vp, 'team-a/reader');
    assert.deepEqual(kube.cacheOf(VAULT_ROLE_BINDINGS).keysByIndex(POLICY_INDEX, 'team-a/reader'), ['team-a/b1']);
    await kube.reconcile(vrb, 'team-a/b1');
    obj = kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b1');
    assert.equal(readyOf(obj)?.status, 'True');
    role = await sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b1');
    assert.deepEqual(role?.token_policies, ['vaultgate.team-a.reader']);
    assert.deepEqual(role?.bound_service_account_namespaces, ['team-a']);
    assert.equal(role?.token_ttl, 3600);
    kube.takeWrites();
    sim.resetCounts();
    await kube.reconcile(vrb, 'team-a/b1');
    assert.deepEqual(kube.takeWrites(), []);
    assert.equal(sim.count('write'), 0);
  });

  void test('a pre-existing role is NotOwned until adopted; drift on an owned role is repaired; deletion removes only owned roles', async () => {
    const vrb = createVaultRoleBindingReconciler({ sys, namePrefix: 'vaultgate' });
    await sys.writeKubernetesRole('kubernetes', 'vaultgate.team-a.b2', {
      bound_service_account_names: ['*'],
      bound_service_account_namespaces: ['other'],
      token_policies: ['root-ish'],
    });
    kube.put(VAULT_ROLE_BINDINGS, binding('b2', ['absent']));
    await kube.reconcile(vrb, 'team-a/b2');
    assert.equal(readyOf(kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b2'))?.reason, 'NotOwned');
    assert.deepEqual((await sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'))?.token_policies, ['root-ish']);
    kube.put(VAULT_ROLE_BINDINGS, binding('b2', ['absent'], {}, { 'vaultgate.io/adopt': 'true' }));
    await kube.reconcile(vrb, 'team-a/b2');
    assert.equal(
      readyOf(kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b2'))?.reason,
      'NotOwned',
      'the annotation alone adopts nothing',
    );
    assert.deepEqual((await sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'))?.token_policies, ['root-ish']);
    kube.put(VAULT_GUARDRAILS, {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultGuardrail',
      metadata: { name: 'adopt-ok' },
      spec: { mode: 'enforce', allowAdoption: true },
    });
    await kube.reconcile(vrb, 'team-a/b2');
    const obj = kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b2');
    const owned = (obj?.status as { conditions: Array<{ type: string; reason: string }> }).conditions.find(
      (c) => c.type === OWNED_CONDITION,
    );
    assert.equal(owned?.reason, 'Adopted');
    assert.deepEqual(
      (await sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'))?.bound_service_account_namespaces,
      ['team-a'],
    );
    await sys.writeKubernetesRole('kubernetes', 'vaultgate.team-a.b2', {
      bound_service_account_names: ['app'],
      bound_service_account_namespaces: ['*'],
      token_policies: [],
      audience: 'vault',
      token_ttl: 3600,
      token_max_ttl: 86400,
    });
    await kube.reconcile(vrb, 'team-a/b2');
    assert.deepEqual(
      (await sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'))?.bound_service_account_namespaces,
      ['team-a'],
    );
    assert.ok(kube.events.some((e) => e.reason === 'DriftRepaired'));
    kube.remove(VAULT_ROLE_BINDINGS, 'team-a/b2');
    await kube.reconcile(vrb, 'team-a/b2');
    assert.equal(await sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'), undefined);
  });

  void test('the ownership claim survives a crash between claim and role write', async () => {
    const vrb = createVaultRoleBindingReconciler({ sys, namePrefix: 'vaultgate' });
    kube.put(VAULT_ROLE_BINDINGS, binding('b3', ['absent']));
    const clear = sim.inject({
      path: 'auth/kubernetes/role/vaultgate.team-a.b3',
      method: 'POST',
      status: 400,
      errors: ['injected'],
    });
    await assert.rejects(kube.reconcile(vrb, 'team-a/b3'));
    clear();
    // A fresh reconciler (process restart) trusts the claim stored in status.
    await kube.reconcile(createVaultRoleBindingReconciler({ sys, namePrefix: 'vaultgate' }), 'team-a/b3');
    assert.equal(readyOf(kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b3'))?.reason, 'PolicyNotFound');
    assert.ok(await sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b3'));
  });
});
