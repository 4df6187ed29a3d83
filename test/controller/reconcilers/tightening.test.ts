// Issue #12 item 3: tightening takes access back. When the controller's re-check refuses an object whose
// Vault policy or role it already wrote (guardrail tightened, relaxation withdrawn, maxTokenTTL lowered),
// the Vault object vaultgate owns is removed, Ready=False says what is in force, the drift re-check keeps
// running, and a Vault object vaultgate did not write is never touched.
import { test, describe, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { NAMESPACES } from '../../../kube/resources.ts';
import { VAULT_GUARDRAILS, VAULT_POLICIES, VAULT_ROLE_BINDINGS } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import type { VaultWriteInput } from '../../../trail/events.ts';
import {
  createVaultPolicyReconciler,
  OWNED_CONDITION as POLICY_OWNED,
} from '../../../controller/reconcilers/vaultpolicy.ts';
import {
  createVaultRoleBindingReconciler,
  OWNED_CONDITION as ROLE_OWNED,
} from '../../../controller/reconcilers/vaultrolebinding.ts';
import { FakeKube, readyOf } from './harness.ts';
import { guardrail, vaultObjectKube, vaultPolicy, vaultRoleBinding, vaultWorld } from './vault-object-world.ts';

const vault = vaultWorld();

const NS = 'team-t';
const namespace = (labels: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: NS, labels },
});
/** The cluster admin's relaxation for namespaces labelled vaultgate.io/tier=trusted: the shared KV tree too. */
const sharedTree = (extra: Record<string, unknown> = {}) =>
  guardrail('trusted', {
    namespaceSelector: { matchLabels: { 'vaultgate.io/tier': 'trusted' } },
    mode: 'enforce',
    relaxFloor: ['namespace-subtree'],
    allowedPaths: ['secret/data/{{namespace}}/*', 'secret/data/shared/*'],
    ...extra,
  });
const policy = (name: string, path: string, annotations?: Record<string, string>) =>
  vaultPolicy(name, { rules: [{ path, capabilities: ['read'] }] }, annotations, NS);
const binding = (name: string, extra: Record<string, unknown> = {}, annotations?: Record<string, string>) =>
  vaultRoleBinding(
    name,
    { serviceAccounts: ['app'], policies: ['absent'], audience: 'vault', tokenTTL: '1h', tokenMaxTTL: '4h', ...extra },
    annotations,
    NS,
  );
const conditionOf = (o: KubeObject | undefined, type: string) =>
  (
    o?.status as { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } | undefined
  )?.conditions?.find((c) => c.type === type);

void describe('VaultPolicy: a refused spec takes its Vault policy back', () => {
  let kube: FakeKube;
  let writes: VaultWriteInput[];
  const reconciler = () =>
    createVaultPolicyReconciler({ sys: vault.sys, namePrefix: 'vaultgate', onVaultWrite: (w) => writes.push(w) });
  void beforeEach(() => {
    kube = new FakeKube();
    writes = [];
    vault.sim.clearFaults();
    kube.put(NAMESPACES, namespace({ 'vaultgate.io/tier': 'trusted' }));
    kube.put(VAULT_GUARDRAILS, sharedTree());
  });

  void test('relaxation withdrawn by relabelling the namespace: the policy is removed, Ready says so, re-checks continue, idempotent', async () => {
    const r = reconciler();
    kube.put(VAULT_POLICIES, policy('shared', 'secret/data/shared/*'));
    await kube.reconcile(r, `${NS}/shared`);
    assert.equal(readyOf(kube.getObj(VAULT_POLICIES, `${NS}/shared`))?.status, 'True');
    assert.ok(await vault.sys.readPolicy(`vaultgate.${NS}.shared`));

    kube.put(NAMESPACES, namespace({})); // the label that picked the relaxing guardrail is gone
    const res = await kube.reconcile(r, `${NS}/shared`);
    assert.equal(await vault.sys.readPolicy(`vaultgate.${NS}.shared`), undefined, 'access taken back in Vault');
    assert.ok(res.requeueAfterMs && res.requeueAfterMs > 0, 'drift re-check keeps running');
    const obj = kube.getObj(VAULT_POLICIES, `${NS}/shared`);
    const ready = readyOf(obj);
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'GuardrailViolation');
    assert.match(
      ready?.message ?? '',
      /^the Vault policy vaultgate\.team-t\.shared was removed because the spec is refused: spec\.rules\[0\]\.path: "secret\/data\/shared\/\*" is forbidden by the built-in guardrail defaults: .* \(rule guardrail\.allowed-path\)\. Nothing from this VaultPolicy is in force in Vault/,
    );
    assert.deepEqual(
      [conditionOf(obj, POLICY_OWNED)?.status, conditionOf(obj, POLICY_OWNED)?.reason],
      ['False', 'Revoked'],
    );
    assert.ok(kube.events.some((e) => e.reason === 'AccessRevoked' && e.type === 'Warning'));
    assert.deepEqual(writes.map((w) => [w.action, w.vaultName]).slice(-1), [['delete', 'vaultgate.team-t.shared']]);

    // Level-triggered: a second run changes nothing and keeps saying what is in force.
    kube.takeWrites();
    vault.sim.resetCounts();
    const events = kube.events.length;
    const again = await kube.reconcile(r, `${NS}/shared`);
    assert.ok(again.requeueAfterMs && again.requeueAfterMs > 0);
    assert.deepEqual(kube.takeWrites(), []);
    assert.equal(vault.sim.count('write') + vault.sim.count('delete'), 0);
    assert.equal(kube.events.length, events, 'no repeated event');
    assert.equal(readyOf(kube.getObj(VAULT_POLICIES, `${NS}/shared`))?.message, ready?.message);

    // Drift repair of a refused object: our policy written back out of band is removed again.
    await vault.sys.writePolicy(
      `vaultgate.${NS}.shared`,
      (writes.find((w) => w.action === 'create') as { content?: string } | undefined)?.content ??
        '# managed-by: vaultgate\n',
    );
    assert.ok(await vault.sys.readPolicy(`vaultgate.${NS}.shared`));
    await kube.reconcile(r, `${NS}/shared`);
    assert.equal(await vault.sys.readPolicy(`vaultgate.${NS}.shared`), undefined, 'removed again on the re-check');

    // The label comes back: the policy is written again.
    kube.put(NAMESPACES, namespace({ 'vaultgate.io/tier': 'trusted' }));
    await kube.reconcile(r, `${NS}/shared`);
    assert.match((await vault.sys.readPolicy(`vaultgate.${NS}.shared`)) ?? '', /secret\/data\/shared/);
    const back = kube.getObj(VAULT_POLICIES, `${NS}/shared`);
    assert.equal(readyOf(back)?.status, 'True');
    assert.equal(conditionOf(back, POLICY_OWNED)?.status, 'True');
  });

  void test('guardrail tightened (forbiddenCapabilities): removed', async () => {
    const r = reconciler();
    kube.put(VAULT_POLICIES, policy('own', `secret/data/${NS}/app`));
    await kube.reconcile(r, `${NS}/own`);
    assert.ok(await vault.sys.readPolicy(`vaultgate.${NS}.own`));
    kube.put(VAULT_GUARDRAILS, guardrail('no-read', { mode: 'enforce', forbiddenCapabilities: ['read'] }));
    await kube.reconcile(r, `${NS}/own`);
    assert.equal(await vault.sys.readPolicy(`vaultgate.${NS}.own`), undefined);
    assert.match(
      readyOf(kube.getObj(VAULT_POLICIES, `${NS}/own`))?.message ?? '',
      /was removed because the spec is refused: .*"read" is forbidden by guardrail "no-read" \(rule guardrail\.forbidden-capability\)/,
    );
  });

  void test('a Vault policy vaultgate did not write is never removed, even when the spec is refused', async () => {
    const r = reconciler();
    const foreign = 'path "secret/data/shared/*" { capabilities = ["read"] }\n';
    await vault.sys.writePolicy(`vaultgate.${NS}.other`, foreign);
    kube.put(NAMESPACES, namespace({}));
    kube.put(VAULT_POLICIES, policy('other', 'secret/data/shared/*'));
    const res = await kube.reconcile(r, `${NS}/other`);
    assert.equal(await vault.sys.readPolicy(`vaultgate.${NS}.other`), foreign);
    assert.ok(res.requeueAfterMs);
    assert.match(
      readyOf(kube.getObj(VAULT_POLICIES, `${NS}/other`))?.message ?? '',
      /exists but was not written by vaultgate for this object; it is left untouched/,
    );
  });

  void test('Vault unavailable while taking back: the status says the old policy may still be in force, and it retries', async () => {
    const r = reconciler();
    kube.put(VAULT_POLICIES, policy('retry', 'secret/data/shared/*'));
    await kube.reconcile(r, `${NS}/retry`);
    kube.put(NAMESPACES, namespace({}));
    const clear = vault.sim.inject({ path: 'sys/policies/acl/*', status: 503, errors: ['Vault is sealed'] });
    await assert.rejects(kube.reconcile(r, `${NS}/retry`));
    assert.match(
      readyOf(kube.getObj(VAULT_POLICIES, `${NS}/retry`))?.message ?? '',
      /may still be in force: cannot remove it yet/,
    );
    clear();
    await kube.reconcile(r, `${NS}/retry`);
    assert.equal(await vault.sys.readPolicy(`vaultgate.${NS}.retry`), undefined);
  });
});

void describe('VaultRoleBinding: a refused spec takes its Vault role back', () => {
  let kube: FakeKube;
  void beforeEach(() => {
    kube = vaultObjectKube();
    vault.sim.clearFaults();
  });

  void test('maxTokenTTL lowered below tokenMaxTTL: the role is removed, Ready says so, re-checks continue; raised again: written again', async () => {
    const r = createVaultRoleBindingReconciler({ sys: vault.sys, namePrefix: 'vaultgate' });
    kube.put(VAULT_GUARDRAILS, guardrail('ttl', { mode: 'enforce', maxTokenTTL: '8h' }));
    kube.put(VAULT_ROLE_BINDINGS, binding('b'));
    await kube.reconcile(r, `${NS}/b`);
    assert.ok(await vault.sys.readKubernetesRole('kubernetes', `vaultgate.${NS}.b`));

    kube.put(VAULT_GUARDRAILS, guardrail('ttl', { mode: 'enforce', maxTokenTTL: '2h' }));
    const res = await kube.reconcile(r, `${NS}/b`);
    assert.equal(await vault.sys.readKubernetesRole('kubernetes', `vaultgate.${NS}.b`), undefined, 'no new logins');
    assert.ok(res.requeueAfterMs && res.requeueAfterMs > 0);
    const obj = kube.getObj(VAULT_ROLE_BINDINGS, `${NS}/b`);
    assert.equal(readyOf(obj)?.reason, 'GuardrailViolation');
    assert.match(
      readyOf(obj)?.message ?? '',
      /^the Vault role vaultgate\.team-t\.b was removed because the spec is refused: spec\.tokenMaxTTL: tokenMaxTTL "4h" is forbidden by guardrail "ttl": it exceeds maxTokenTTL "2h" \(rule guardrail\.max-token-ttl\)/,
    );
    assert.deepEqual(
      [conditionOf(obj, ROLE_OWNED)?.status, conditionOf(obj, ROLE_OWNED)?.reason],
      ['False', 'Revoked'],
    );
    assert.ok(kube.events.some((e) => e.reason === 'AccessRevoked'));

    kube.takeWrites();
    vault.sim.resetCounts();
    await kube.reconcile(r, `${NS}/b`);
    assert.deepEqual(kube.takeWrites(), [], 'idempotent');
    assert.equal(vault.sim.count('write') + vault.sim.count('delete'), 0);

    kube.put(VAULT_GUARDRAILS, guardrail('ttl', { mode: 'enforce', maxTokenTTL: '8h' }));
    await kube.reconcile(r, `${NS}/b`);
    assert.ok(await vault.sys.readKubernetesRole('kubernetes', `vaultgate.${NS}.b`));
    assert.equal(conditionOf(kube.getObj(VAULT_ROLE_BINDINGS, `${NS}/b`), ROLE_OWNED)?.status, 'True');
  });

  void test('a role vaultgate does not own is left in place when the binding is refused', async () => {
    const r = createVaultRoleBindingReconciler({ sys: vault.sys, namePrefix: 'vaultgate' });
    await vault.sys.writeKubernetesRole('kubernetes', `vaultgate.${NS}.theirs`, {
      bound_service_account_names: ['x'],
      bound_service_account_namespaces: ['y'],
      token_policies: ['theirs'],
    });
    kube.put(VAULT_GUARDRAILS, guardrail('ttl', { mode: 'enforce', maxTokenTTL: '2h' }));
    kube.put(VAULT_ROLE_BINDINGS, binding('theirs'));
    await kube.reconcile(r, `${NS}/theirs`);
    assert.deepEqual((await vault.sys.readKubernetesRole('kubernetes', `vaultgate.${NS}.theirs`))?.token_policies, [
      'theirs',
    ]);
    assert.match(readyOf(kube.getObj(VAULT_ROLE_BINDINGS, `${NS}/theirs`))?.message ?? '', /^not written to Vault: /);
  });
});

void describe("adoption needs the cluster admin's consent", () => {
  void test('annotation alone, or consent from a warn guardrail: NotOwned; an enforce guardrail with allowAdoption: adopted', async () => {
    const kube = vaultObjectKube();
    const vp = createVaultPolicyReconciler({ sys: vault.sys, namePrefix: 'vaultgate' });
    const vrb = createVaultRoleBindingReconciler({ sys: vault.sys, namePrefix: 'vaultgate' });
    const foreignPolicy = `path "secret/data/${NS}/*" { capabilities = ["read", "list"] }\n`;
    await vault.sys.writePolicy(`vaultgate.${NS}.adoptme`, foreignPolicy);
    await vault.sys.writeKubernetesRole('kubernetes', `vaultgate.${NS}.adoptme`, {
      bound_service_account_names: ['*'],
      bound_service_account_namespaces: ['other'],
      token_policies: ['root-ish'],
    });
    const adopt = { 'vaultgate.io/adopt': 'true' };
    kube.put(VAULT_POLICIES, policy('adoptme', `secret/data/${NS}/*`, adopt));
    kube.put(VAULT_ROLE_BINDINGS, binding('adoptme', {}, adopt));

    for (const consent of [undefined, guardrail('soft', { mode: 'warn', allowAdoption: true })]) {
      if (consent) kube.put(VAULT_GUARDRAILS, consent);
      await kube.reconcile(vp, `${NS}/adoptme`);
      await kube.reconcile(vrb, `${NS}/adoptme`);
      assert.equal(await vault.sys.readPolicy(`vaultgate.${NS}.adoptme`), foreignPolicy);
      assert.deepEqual((await vault.sys.readKubernetesRole('kubernetes', `vaultgate.${NS}.adoptme`))?.token_policies, [
        'root-ish',
      ]);
      for (const o of [
        kube.getObj(VAULT_POLICIES, `${NS}/adoptme`),
        kube.getObj(VAULT_ROLE_BINDINGS, `${NS}/adoptme`),
      ]) {
        assert.equal(readyOf(o)?.reason, 'NotOwned');
        assert.match(
          readyOf(o)?.message ?? '',
          /adoption also needs the cluster admin's consent: an enforce VaultGuardrail selecting namespace "team-t" with spec\.allowAdoption: true/,
        );
      }
    }
    kube.put(VAULT_GUARDRAILS, guardrail('soft', { mode: 'enforce', allowAdoption: true }));
    await kube.reconcile(vp, `${NS}/adoptme`);
    await kube.reconcile(vrb, `${NS}/adoptme`);
    assert.match((await vault.sys.readPolicy(`vaultgate.${NS}.adoptme`)) ?? '', /# managed-by: vaultgate/);
    assert.deepEqual(
      (await vault.sys.readKubernetesRole('kubernetes', `vaultgate.${NS}.adoptme`))?.bound_service_account_namespaces,
      [NS],
    );
    assert.ok(kube.events.some((e) => e.reason === 'Adopted'));
  });
});
