import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { VaultSim } from '../../sim/vault.ts';
import { createVaultClient } from '../../../vault/client.ts';
import { createSysApi } from '../../../vault/sys.ts';
import type { VaultClient, VaultRequest, VaultRequester, SysApi } from '../../../vault/types.ts';
import { VAULT_GUARDRAILS, VAULT_POLICIES, VAULT_ROLE_BINDINGS } from '../../../schemas/resources.ts';
import { FINALIZER } from '../../../kube/finalizer.ts';
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

void describe('VaultPolicy reconciler', () => {
  let kube: FakeKube;
  const reconcile = () => createVaultPolicyReconciler({ sys, namePrefix: 'vaultgate' });
  void beforeEach(() => {
    kube = new FakeKube();
    sim.clearFaults();
  });

  void test('writes the policy once; a second reconcile makes zero writes (Vault or Kubernetes)', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p1'));
    const res = await kube.reconcile(r, 'team-a/p1');
    assert.ok(res.requeueAfterMs && res.requeueAfterMs > 0, 'periodic drift check scheduled');
    const text = await sys.readPolicy('vaultgate.team-a.p1');
    assert.match(text ?? '', /# managed-by: vaultgate/);
    assert.match(text ?? '', /secret\/data\/team-a\/\*/);
    const obj = kube.getObj(VAULT_POLICIES, 'team-a/p1')!;
    assert.deepEqual(obj.metadata.finalizers, [FINALIZER]);
    assert.equal(readyOf(obj)?.status, 'True');
    assert.equal((obj.status as { vaultName?: string }).vaultName, 'vaultgate.team-a.p1');
    kube.takeWrites();
    sim.resetCounts();
    await kube.reconcile(r, 'team-a/p1');
    assert.deepEqual(kube.takeWrites(), []);
    assert.equal(sim.count('write'), 0);
  });

  void test('crash between the Vault write and the status write converges on the next run', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p2'));
    kube.statusConflicts = 0;
    // Simulate the crash: the status write fails after Vault was written.
    const origApply = kube.apply.bind(kube);
    let failOnce = true;
    kube.apply = async (res, obj, opts) => {
      if (opts?.subresource === 'status' && failOnce) {
        failOnce = false;
        throw new Error('process killed');
      }
      return origApply(res, obj, opts);
    };
    await assert.rejects(kube.reconcile(r, 'team-a/p2'));
    assert.ok(await sys.readPolicy('vaultgate.team-a.p2'));
    sim.resetCounts();
    await kube.reconcile(r, 'team-a/p2');
    assert.equal(sim.count('write'), 0, 'no second Vault write');
    assert.equal(readyOf(kube.getObj(VAULT_POLICIES, 'team-a/p2'))?.status, 'True');
  });

  void test('a 409 on the status write requeues shortly and the retry succeeds', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p3'));
    kube.statusConflicts = 1;
    const first = await kube.reconcile(r, 'team-a/p3');
    assert.ok(first.requeueAfterMs !== undefined && first.requeueAfterMs <= 1000, 'conflict → quick requeue');
    await kube.reconcile(r, 'team-a/p3');
    assert.equal(readyOf(kube.getObj(VAULT_POLICIES, 'team-a/p3'))?.status, 'True');
  });

  void test('out-of-band edits are repaired with a DriftRepaired event; reformatting alone is not drift', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p4'));
    await kube.reconcile(r, 'team-a/p4');
    const original = (await sys.readPolicy('vaultgate.team-a.p4'))!;
    await sys.writePolicy('vaultgate.team-a.p4', original.replace(/\n {2}/g, '\n    '));
    sim.resetCounts();
    await kube.reconcile(r, 'team-a/p4');
    assert.equal(sim.count('write'), 0, 'whitespace-only change left alone');
    await sys.writePolicy('vaultgate.team-a.p4', original.replace('"read"', '"read", "delete"'));
    await kube.reconcile(r, 'team-a/p4');
    assert.equal(await sys.readPolicy('vaultgate.team-a.p4'), original);
    assert.ok(kube.events.some((e) => e.reason === 'DriftRepaired' && e.object === 'team-a/p4'));
  });

  void test('a policy we wrote whose ownership header was stripped in Vault (and widened) is still repaired', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p6'));
    await kube.reconcile(r, 'team-a/p6');
    const original = (await sys.readPolicy('vaultgate.team-a.p6'))!;
    const hijacked = 'path "secret/data/*" { capabilities = ["read", "list"] }\n';
    await sys.writePolicy('vaultgate.team-a.p6', hijacked);
    await kube.reconcile(r, 'team-a/p6');
    assert.equal(
      await sys.readPolicy('vaultgate.team-a.p6'),
      original,
      'restored, not left wider as "someone else\'s"',
    );
    assert.ok(kube.events.some((e) => e.reason === 'DriftRepaired' && e.object === 'team-a/p6'));
    assert.equal(readyOf(kube.getObj(VAULT_POLICIES, 'team-a/p6'))?.status, 'True');
  });

  void test('an unmanaged policy with the same name is never overwritten or deleted; adoption is explicit', async () => {
    const r = reconcile();
    const foreign = 'path "secret/data/team-a/*" { capabilities = ["read", "list"] }\n';
    await sys.writePolicy('vaultgate.team-a.p5', foreign);
    kube.put(VAULT_POLICIES, policy('p5'));
    await kube.reconcile(r, 'team-a/p5');
    assert.equal(await sys.readPolicy('vaultgate.team-a.p5'), foreign);
    const ready = readyOf(kube.getObj(VAULT_POLICIES, 'team-a/p5'));
    assert.equal(ready?.reason, 'NotOwned');
    assert.match(ready?.message ?? '', /vaultgate\.io\/adopt: "true"/);
    kube.remove(VAULT_POLICIES, 'team-a/p5');
    await kube.reconcile(r, 'team-a/p5');
    assert.equal(await sys.readPolicy('vaultgate.team-a.p5'), foreign, 'not deleted');
    assert.equal(kube.getObj(VAULT_POLICIES, 'team-a/p5'), undefined, 'finalizer removed');
    kube.put(VAULT_POLICIES, policy('p5', undefined, { 'vaultgate.io/adopt': 'true' }));
    await kube.reconcile(r, 'team-a/p5');
    assert.equal(await sys.readPolicy('vaultgate.team-a.p5'), foreign, "the tenant's annotation alone adopts nothing");
    assert.match(
      readyOf(kube.getObj(VAULT_POLICIES, 'team-a/p5'))?.message ?? '',
      /adoption also needs the cluster admin's consent: an enforce VaultGuardrail selecting namespace "team-a" with spec\.allowAdoption: true/,
    );
    kube.put(VAULT_GUARDRAILS, {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultGuardrail',
      metadata: { name: 'adopt-ok' },
      spec: { mode: 'enforce', allowAdoption: true },
    });
    await kube.reconcile(r, 'team-a/p5');
    assert.match((await sys.readPolicy('vaultgate.team-a.p5'))!, /# managed-by: vaultgate/);
    assert.ok(kube.events.some((e) => e.reason === 'Adopted'));
  });

  void test('deletion with Vault down keeps the finalizer until Vault answers, then deletes', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p6'));
    await kube.reconcile(r, 'team-a/p6');
    kube.remove(VAULT_POLICIES, 'team-a/p6');
    const clear = sim.inject({ path: 'sys/policies/acl/*', status: 503, errors: ['Vault is sealed'] });
    await assert.rejects(kube.reconcile(r, 'team-a/p6'));
    const stuck = kube.getObj(VAULT_POLICIES, 'team-a/p6');
    assert.deepEqual(stuck?.metadata.finalizers, [FINALIZER]);
    assert.match(readyOf(stuck)?.message ?? '', /deleting: cannot remove Vault policy/);
    clear();
    await kube.reconcile(r, 'team-a/p6');
    assert.equal(kube.getObj(VAULT_POLICIES, 'team-a/p6'), undefined);
    assert.equal(await sys.readPolicy('vaultgate.team-a.p6'), undefined);
  });

  void test('guardrails are re-checked: a forbidden path is never written (GuardrailViolation)', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p7', { rules: [{ path: 'sys/*', capabilities: ['sudo', 'read'] }] }));
    await kube.reconcile(r, 'team-a/p7');
    assert.equal(await sys.readPolicy('vaultgate.team-a.p7'), undefined);
    assert.equal(readyOf(kube.getObj(VAULT_POLICIES, 'team-a/p7'))?.reason, 'GuardrailViolation');
  });

  void test('raw policy text is parsed and re-rendered', async () => {
    const r = reconcile();
    kube.put(
      VAULT_POLICIES,
      policy('p8', { policy: 'path "secret/data/team-a/app" {\n  capabilities = ["read"]\n}\n' }),
    );
    await kube.reconcile(r, 'team-a/p8');
    assert.match(
      (await sys.readPolicy('vaultgate.team-a.p8'))!,
      /# managed-by: vaultgate[\s\S]*path "secret\/data\/team-a\/app"/,
    );
  });
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
