import { test, describe, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { VAULT_GUARDRAILS, VAULT_POLICIES } from '../../../schemas/resources.ts';
import { FINALIZER } from '../../../kube/finalizer.ts';
import { createVaultPolicyReconciler } from '../../../controller/reconcilers/vaultpolicy.ts';
import { FakeKube, readyOf } from './harness.ts';
import { ADOPTION_CONSENT, vaultPolicy as policy, vaultWorld } from './vault-object-world.ts';

const vault = vaultWorld();

void describe('VaultPolicy reconciler', () => {
  let kube: FakeKube;
  const reconcile = () => createVaultPolicyReconciler({ sys: vault.sys, namePrefix: 'vaultgate' });
  void beforeEach(() => {
    kube = new FakeKube();
    vault.sim.clearFaults();
  });

  void test('writes the policy once; a second reconcile makes zero writes (Vault or Kubernetes)', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p1'));
    const res = await kube.reconcile(r, 'team-a/p1');
    assert.ok(res.requeueAfterMs && res.requeueAfterMs > 0, 'periodic drift check scheduled');
    const text = await vault.sys.readPolicy('vaultgate.team-a.p1');
    assert.match(text ?? '', /# managed-by: vaultgate/);
    assert.match(text ?? '', /secret\/data\/team-a\/\*/);
    const obj = kube.getObj(VAULT_POLICIES, 'team-a/p1')!;
    assert.deepEqual(obj.metadata.finalizers, [FINALIZER]);
    assert.equal(readyOf(obj)?.status, 'True');
    assert.equal((obj.status as { vaultName?: string }).vaultName, 'vaultgate.team-a.p1');
    kube.takeWrites();
    vault.sim.resetCounts();
    await kube.reconcile(r, 'team-a/p1');
    assert.deepEqual(kube.takeWrites(), []);
    assert.equal(vault.sim.count('write'), 0);
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
    assert.ok(await vault.sys.readPolicy('vaultgate.team-a.p2'));
    vault.sim.resetCounts();
    await kube.reconcile(r, 'team-a/p2');
    assert.equal(vault.sim.count('write'), 0, 'no second Vault write');
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
    const original = (await vault.sys.readPolicy('vaultgate.team-a.p4'))!;
    await vault.sys.writePolicy('vaultgate.team-a.p4', original.replace(/\n {2}/g, '\n    '));
    vault.sim.resetCounts();
    await kube.reconcile(r, 'team-a/p4');
    assert.equal(vault.sim.count('write'), 0, 'whitespace-only change left alone');
    await vault.sys.writePolicy('vaultgate.team-a.p4', original.replace('"read"', '"read", "delete"'));
    await kube.reconcile(r, 'team-a/p4');
    assert.equal(await vault.sys.readPolicy('vaultgate.team-a.p4'), original);
    assert.ok(kube.events.some((e) => e.reason === 'DriftRepaired' && e.object === 'team-a/p4'));
  });

  void test('a policy we wrote whose ownership header was stripped in Vault (and widened) is still repaired', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p6'));
    await kube.reconcile(r, 'team-a/p6');
    const original = (await vault.sys.readPolicy('vaultgate.team-a.p6'))!;
    const hijacked = 'path "secret/data/*" { capabilities = ["read", "list"] }\n';
    await vault.sys.writePolicy('vaultgate.team-a.p6', hijacked);
    await kube.reconcile(r, 'team-a/p6');
    assert.equal(
      await vault.sys.readPolicy('vaultgate.team-a.p6'),
      original,
      'restored, not left wider as "someone else\'s"',
    );
    assert.ok(kube.events.some((e) => e.reason === 'DriftRepaired' && e.object === 'team-a/p6'));
    assert.equal(readyOf(kube.getObj(VAULT_POLICIES, 'team-a/p6'))?.status, 'True');
  });

  void test('an unmanaged policy with the same name is never overwritten or deleted; adoption is explicit', async () => {
    const r = reconcile();
    const foreign = 'path "secret/data/team-a/*" { capabilities = ["read", "list"] }\n';
    await vault.sys.writePolicy('vaultgate.team-a.p5', foreign);
    kube.put(VAULT_POLICIES, policy('p5'));
    await kube.reconcile(r, 'team-a/p5');
    assert.equal(await vault.sys.readPolicy('vaultgate.team-a.p5'), foreign);
    const ready = readyOf(kube.getObj(VAULT_POLICIES, 'team-a/p5'));
    assert.equal(ready?.reason, 'NotOwned');
    assert.match(ready?.message ?? '', /vaultgate\.io\/adopt: "true"/);
    kube.remove(VAULT_POLICIES, 'team-a/p5');
    await kube.reconcile(r, 'team-a/p5');
    assert.equal(await vault.sys.readPolicy('vaultgate.team-a.p5'), foreign, 'not deleted');
    assert.equal(kube.getObj(VAULT_POLICIES, 'team-a/p5'), undefined, 'finalizer removed');
    kube.put(VAULT_POLICIES, policy('p5', undefined, { 'vaultgate.io/adopt': 'true' }));
    await kube.reconcile(r, 'team-a/p5');
    assert.equal(
      await vault.sys.readPolicy('vaultgate.team-a.p5'),
      foreign,
      "the tenant's annotation alone adopts nothing",
    );
    assert.match(
      readyOf(kube.getObj(VAULT_POLICIES, 'team-a/p5'))?.message ?? '',
      /adoption also needs the cluster admin's consent: an enforce VaultGuardrail selecting namespace "team-a" with spec\.allowAdoption: true/,
    );
    kube.put(VAULT_GUARDRAILS, ADOPTION_CONSENT);
    await kube.reconcile(r, 'team-a/p5');
    assert.match((await vault.sys.readPolicy('vaultgate.team-a.p5'))!, /# managed-by: vaultgate/);
    assert.ok(kube.events.some((e) => e.reason === 'Adopted'));
  });

  void test('deletion with Vault down keeps the finalizer until Vault answers, then deletes', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p6'));
    await kube.reconcile(r, 'team-a/p6');
    kube.remove(VAULT_POLICIES, 'team-a/p6');
    const clear = vault.sim.inject({ path: 'sys/policies/acl/*', status: 503, errors: ['Vault is sealed'] });
    await assert.rejects(kube.reconcile(r, 'team-a/p6'));
    const stuck = kube.getObj(VAULT_POLICIES, 'team-a/p6');
    assert.deepEqual(stuck?.metadata.finalizers, [FINALIZER]);
    assert.match(readyOf(stuck)?.message ?? '', /deleting: cannot remove Vault policy/);
    clear();
    await kube.reconcile(r, 'team-a/p6');
    assert.equal(kube.getObj(VAULT_POLICIES, 'team-a/p6'), undefined);
    assert.equal(await vault.sys.readPolicy('vaultgate.team-a.p6'), undefined);
  });

  void test('guardrails are re-checked: a forbidden path is never written (GuardrailViolation)', async () => {
    const r = reconcile();
    kube.put(VAULT_POLICIES, policy('p7', { rules: [{ path: 'sys/*', capabilities: ['sudo', 'read'] }] }));
    await kube.reconcile(r, 'team-a/p7');
    assert.equal(await vault.sys.readPolicy('vaultgate.team-a.p7'), undefined);
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
      (await vault.sys.readPolicy('vaultgate.team-a.p8'))!,
      /# managed-by: vaultgate[\s\S]*path "secret\/data\/team-a\/app"/,
    );
  });
});
