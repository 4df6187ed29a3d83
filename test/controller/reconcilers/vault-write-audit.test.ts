// Every Vault write the controller makes reaches the audit observer (which feeds the signed trail):
// create, drift repair with the access it takes back, role writes, deletes; never the content itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VAULT_POLICIES, VAULT_ROLE_BINDINGS } from '../../../schemas/resources.ts';
import { createVaultPolicyReconciler } from '../../../controller/reconcilers/vaultpolicy.ts';
import { createVaultRoleBindingReconciler } from '../../../controller/reconcilers/vaultrolebinding.ts';
import { auditVaultWrite, type VaultWriteInput } from '../../../trail/events.ts';
import { vaultObjectKube, vaultPolicy, vaultRoleBinding, vaultWorld } from './vault-object-world.ts';

const vault = vaultWorld();

test('policy create, drift repair and delete, and a role write, each produce one audit record without content', async () => {
  const writes: VaultWriteInput[] = [];
  const kube = vaultObjectKube();
  const policies = createVaultPolicyReconciler({
    sys: vault.sys,
    namePrefix: 'vaultgate',
    onVaultWrite: (w) => writes.push(w),
  });
  const roles = createVaultRoleBindingReconciler({
    sys: vault.sys,
    namePrefix: 'vaultgate',
    onVaultWrite: (w) => writes.push(w),
  });

  kube.put(
    VAULT_POLICIES,
    vaultPolicy('app', { rules: [{ path: 'secret/data/team-a/app/*', capabilities: ['read'] }] }),
  );
  await kube.reconcile(policies, 'team-a/app');
  assert.deepEqual(
    writes.map((w) => [w.action, w.object, w.vaultName]),
    [['create', 'policy', 'vaultgate.team-a.app']],
  );
  assert.equal(writes[0]!.owner?.kind, 'VaultPolicy');

  // Someone widens the policy in Vault; the repair is recorded with what it takes back.
  const original = (await vault.sys.readPolicy('vaultgate.team-a.app'))!;
  await vault.sys.writePolicy('vaultgate.team-a.app', original.replace('"read"', '"read", "delete"'));
  await kube.reconcile(policies, 'team-a/app');
  const repair = writes[1]!;
  assert.equal(repair.action, 'repair');
  assert.match(repair.change ?? '', /takes back \+delete on secret\/data\/team-a\/app\/\*/);

  kube.put(VAULT_ROLE_BINDINGS, vaultRoleBinding('app', { serviceAccounts: ['app'], policies: ['app'] }));
  await kube.reconcile(roles, 'team-a/app');
  assert.deepEqual(
    writes.slice(2).map((w) => [w.action, w.object, w.mount]),
    [['create', 'role', 'kubernetes']],
  );

  kube.remove(VAULT_POLICIES, 'team-a/app');
  await kube.reconcile(policies, 'team-a/app');
  assert.equal(writes.at(-1)?.action, 'delete');
  assert.equal(await vault.sys.readPolicy('vaultgate.team-a.app'), undefined);

  // The audit event keeps a hash of what was written, never the policy text or role body.
  for (const w of writes) {
    const event = JSON.stringify(auditVaultWrite(w));
    assert.doesNotMatch(event, /capabilities|bound_service_account/);
    if (w.content !== undefined) assert.match(event, /"contentSha256":"[0-9a-f]{64}"/);
  }
});
