import { test, describe, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { VAULT_GUARDRAILS, VAULT_POLICIES, VAULT_ROLE_BINDINGS } from '../../../schemas/resources.ts';
import { createVaultPolicyReconciler } from '../../../controller/reconcilers/vaultpolicy.ts';
import {
  createVaultRoleBindingReconciler,
  OWNED_CONDITION,
  POLICY_INDEX,
} from '../../../controller/reconcilers/vaultrolebinding.ts';
import { type FakeKube, readyOf } from './harness.ts';
import {
  ADOPTION_CONSENT,
  vaultObjectKube,
  vaultPolicy as policy,
  vaultRoleBinding,
  vaultWorld,
} from './vault-object-world.ts';

const vault = vaultWorld();

void describe('VaultRoleBinding reconciler', () => {
  let kube: FakeKube;
  void beforeEach(() => {
    kube = vaultObjectKube();
    vault.sim.clearFaults();
  });
  const binding = (
    name: string,
    policies: string[],
    extra: Record<string, unknown> = {},
    annotations?: Record<string, string>,
  ) => vaultRoleBinding(name, { serviceAccounts: ['app'], policies, audience: 'vault', ...extra }, annotations);

  void test('missing policy → PolicyNotFound; converges when the policy appears (dependents found by index)', async () => {
    const vp = createVaultPolicyReconciler({ sys: vault.sys, namePrefix: 'vaultgate' });
    const vrb = createVaultRoleBindingReconciler({ sys: vault.sys, namePrefix: 'vaultgate' });
    kube.put(VAULT_ROLE_BINDINGS, binding('b1', ['reader']));
    await kube.reconcile(vrb, 'team-a/b1');
    let obj = kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b1');
    assert.equal(readyOf(obj)?.reason, 'PolicyNotFound');
    let role = await vault.sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b1');
    assert.deepEqual(role?.token_policies ?? [], [], 'nothing bound that vaultgate did not write');
    kube.put(VAULT_POLICIES, policy('reader'));
    await kube.reconcile(vp, 'team-a/reader');
    assert.deepEqual(kube.cacheOf(VAULT_ROLE_BINDINGS).keysByIndex(POLICY_INDEX, 'team-a/reader'), ['team-a/b1']);
    await kube.reconcile(vrb, 'team-a/b1');
    obj = kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b1');
    assert.equal(readyOf(obj)?.status, 'True');
    role = await vault.sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b1');
    assert.deepEqual(role?.token_policies, ['vaultgate.team-a.reader']);
    assert.deepEqual(role?.bound_service_account_namespaces, ['team-a']);
    assert.equal(role?.token_ttl, 3600);
    kube.takeWrites();
    vault.sim.resetCounts();
    await kube.reconcile(vrb, 'team-a/b1');
    assert.deepEqual(kube.takeWrites(), []);
    assert.equal(vault.sim.count('write'), 0);
  });

  void test('a pre-existing role is NotOwned until adopted; drift on an owned role is repaired; deletion removes only owned roles', async () => {
    const vrb = createVaultRoleBindingReconciler({ sys: vault.sys, namePrefix: 'vaultgate' });
    await vault.sys.writeKubernetesRole('kubernetes', 'vaultgate.team-a.b2', {
      bound_service_account_names: ['*'],
      bound_service_account_namespaces: ['other'],
      token_policies: ['root-ish'],
    });
    kube.put(VAULT_ROLE_BINDINGS, binding('b2', ['absent']));
    await kube.reconcile(vrb, 'team-a/b2');
    assert.equal(readyOf(kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b2'))?.reason, 'NotOwned');
    assert.deepEqual((await vault.sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'))?.token_policies, [
      'root-ish',
    ]);
    kube.put(VAULT_ROLE_BINDINGS, binding('b2', ['absent'], {}, { 'vaultgate.io/adopt': 'true' }));
    await kube.reconcile(vrb, 'team-a/b2');
    assert.equal(
      readyOf(kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b2'))?.reason,
      'NotOwned',
      'the annotation alone adopts nothing',
    );
    assert.deepEqual((await vault.sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'))?.token_policies, [
      'root-ish',
    ]);
    kube.put(VAULT_GUARDRAILS, ADOPTION_CONSENT);
    await kube.reconcile(vrb, 'team-a/b2');
    const obj = kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b2');
    const owned = (obj?.status as { conditions: Array<{ type: string; reason: string }> }).conditions.find(
      (c) => c.type === OWNED_CONDITION,
    );
    assert.equal(owned?.reason, 'Adopted');
    assert.deepEqual(
      (await vault.sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'))?.bound_service_account_namespaces,
      ['team-a'],
    );
    await vault.sys.writeKubernetesRole('kubernetes', 'vaultgate.team-a.b2', {
      bound_service_account_names: ['app'],
      bound_service_account_namespaces: ['*'],
      token_policies: [],
      audience: 'vault',
      token_ttl: 3600,
      token_max_ttl: 86400,
    });
    await kube.reconcile(vrb, 'team-a/b2');
    assert.deepEqual(
      (await vault.sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'))?.bound_service_account_namespaces,
      ['team-a'],
    );
    assert.ok(kube.events.some((e) => e.reason === 'DriftRepaired'));
    kube.remove(VAULT_ROLE_BINDINGS, 'team-a/b2');
    await kube.reconcile(vrb, 'team-a/b2');
    assert.equal(await vault.sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b2'), undefined);
  });

  void test('the ownership claim survives a crash between claim and role write', async () => {
    const vrb = createVaultRoleBindingReconciler({ sys: vault.sys, namePrefix: 'vaultgate' });
    kube.put(VAULT_ROLE_BINDINGS, binding('b3', ['absent']));
    const clear = vault.sim.inject({
      path: 'auth/kubernetes/role/vaultgate.team-a.b3',
      method: 'POST',
      status: 400,
      errors: ['injected'],
    });
    await assert.rejects(kube.reconcile(vrb, 'team-a/b3'));
    clear();
    // A fresh reconciler (process restart) trusts the claim stored in status.
    await kube.reconcile(createVaultRoleBindingReconciler({ sys: vault.sys, namePrefix: 'vaultgate' }), 'team-a/b3');
    assert.equal(readyOf(kube.getObj(VAULT_ROLE_BINDINGS, 'team-a/b3'))?.reason, 'PolicyNotFound');
    assert.ok(await vault.sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.b3'));
  });
});
