// `vaultgate plan`: unified diffs against nothing (offline) and against Vault's current state, deletes
// only of what vaultgate wrote, and the widening summary for admission warnings.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  computePlan,
  renderDesiredPolicy,
  renderPlan,
  summariseWidening,
  vaultFindings,
  type VaultCurrent,
} from '../../../audit/plan/plan.ts';
import { desiredState, type KubeObj } from '../../../audit/access/model.ts';

const vp = (
  ns: string,
  name: string,
  rules: Array<{ path: string; capabilities: string[] }>,
  uid = 'uid-1',
): KubeObj => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: ns, uid },
  spec: { rules },
});
const vrb = (
  ns: string,
  name: string,
  serviceAccounts: string[],
  policies: string[],
  extra: Record<string, unknown> = {},
): KubeObj => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultRoleBinding',
  metadata: { name, namespace: ns },
  spec: { serviceAccounts, policies, ...extra },
});

const objects = [
  vp('pay', 'db', [{ path: 'secret/data/{{namespace}}/db', capabilities: ['read'] }]),
  vrb('pay', 'api', ['api'], ['db'], { tokenTTL: '30m', audience: 'vault' }),
];
const state = desiredState(objects);

void describe('offline', () => {
  void test('every object is a create, diffed against /dev/null, with {{namespace}} expanded and the ownership header', () => {
    const plan = computePlan(state);
    assert.equal(plan.compared, false);
    assert.deepEqual(
      plan.items.map((i) => [i.action, i.path]),
      [
        ['create', 'sys/policies/acl/vaultgate.pay.db'],
        ['create', 'auth/kubernetes/role/vaultgate.pay.api'],
      ],
    );
    const diff = plan.items[0]!.diff;
    assert.match(diff, /^--- \/dev\/null\n\+\+\+ desired\/sys\/policies\/acl\/vaultgate\.pay\.db\n@@ -0,0 \+1,\d+ @@/);
    assert.match(diff, /\+# managed-by: vaultgate/);
    assert.match(diff, /\+path "secret\/data\/pay\/db" \{/);
    const role = plan.items[1]!.diff;
    assert.match(role, /\+  "token_ttl": 1800\n/);
    assert.match(role, /\+  "audience": "vault",/);
    assert.match(role, /"vaultgate\.pay\.db"/);
    assert.match(renderPlan(plan), /Plan: 2 to create, 0 to update, 0 to delete, 0 unchanged\./);
  });
});

void describe('against Vault', () => {
  const desiredText = renderDesiredPolicy(state.policies[0]!);
  const roleNow = {
    bound_service_account_names: ['api'],
    bound_service_account_namespaces: ['pay'],
    token_policies: ['vaultgate.pay.db'],
    token_ttl: 1800,
    token_max_ttl: 86400,
    audience: 'vault',
    alias_name_source: 'serviceaccount_uid',
  };

  void test('an identical Vault is unchanged (extra role fields Vault returns are ignored)', () => {
    const current: VaultCurrent = {
      policies: new Map([['vaultgate.pay.db', desiredText]]),
      roles: new Map([
        ['kubernetes/vaultgate.pay.api', { mount: 'kubernetes', name: 'vaultgate.pay.api', role: roleNow }],
      ]),
    };
    const plan = computePlan(state, current);
    assert.deepEqual(plan.counts, { create: 0, update: 0, delete: 0, unchanged: 2, skip: 0, refused: 0 });
    assert.deepEqual(vaultFindings(plan), []);
  });

  void test("a manifest without uid reuses the uid from Vault's header (no spurious diff)", () => {
    const noUid = desiredState([{ ...objects[0]!, metadata: { name: 'db', namespace: 'pay' } }, objects[1]!]);
    const plan = computePlan(noUid, { policies: new Map([['vaultgate.pay.db', desiredText]]), roles: new Map() });
    assert.equal(plan.items[0]?.action, 'unchanged');
  });

  void test('drift: Vault widened by hand → update with a diff, and a high finding naming what Vault grants beyond the desired state', () => {
    const tampered = desiredText.replace('capabilities = ["read"]', 'capabilities = ["read", "update"]');
    const plan = computePlan(state, { policies: new Map([['vaultgate.pay.db', tampered]]), roles: new Map() });
    const item = plan.items[0]!;
    assert.equal(item.action, 'update');
    assert.match(item.diff, /-  capabilities = \["read", "update"\]\n\+  capabilities = \["read"\]/);
    assert.equal(item.vaultGrantsMore, '+update on secret/data/pay/db');
    const f = vaultFindings(plan).find((x) => x.id === 'vault.drift-policy');
    assert.equal(f?.severity, 'high');
    assert.match(f?.message ?? '', /Vault grants more than desired \(\+update on secret\/data\/pay\/db\)/);
    assert.ok(vaultFindings(plan).some((x) => x.id === 'vault.missing-role'));
  });

  void test('orphans: a vaultgate-written policy without its object is deleted; a foreign one under the prefix is only reported', () => {
    const orphanText = renderDesiredPolicy({ ...state.policies[0]!, name: 'gone', vaultName: 'vaultgate.pay.gone' });
    const current: VaultCurrent = {
      policies: new Map([
        ['vaultgate.pay.db', desiredText],
        ['vaultgate.pay.gone', orphanText],
        ['vaultgate.pay.handmade', 'path "x" { capabilities = ["read"] }'],
        ['other-policy', 'path "y" {}'],
      ]),
      roles: new Map([
        ['kubernetes/vaultgate.old.role', { mount: 'kubernetes', name: 'vaultgate.old.role', role: roleNow }],
        ['kubernetes/someone-else', { mount: 'kubernetes', name: 'someone-else', role: roleNow }],
      ]),
    };
    const plan = computePlan(state, current);
    const by = (name: string) => plan.items.find((i) => i.vaultName === name);
    assert.equal(by('vaultgate.pay.gone')?.action, 'delete');
    assert.match(by('vaultgate.pay.gone')?.diff ?? '', /\+\+\+ \/dev\/null/);
    assert.equal(by('vaultgate.pay.handmade')?.action, 'skip');
    assert.equal(by('other-policy'), undefined, 'outside the prefix: not ours to plan');
    assert.equal(by('vaultgate.old.role')?.action, 'delete');
    assert.equal(by('someone-else'), undefined);
    const ids = vaultFindings(plan)
      .map((f) => `${f.id} ${f.object}`)
      .sort();
    assert.ok(ids.includes('vault.orphan-policy Vault policy vaultgate.pay.gone'));
    assert.ok(ids.includes('vault.orphan-policy Vault policy vaultgate.pay.handmade'));
    assert.ok(ids.includes('vault.orphan-role Vault role kubernetes/vaultgate.old.role'));
  });

  void test('a desired policy whose name is taken by a foreign policy is skipped, never overwritten', () => {
    const plan = computePlan(state, {
      policies: new Map([['vaultgate.pay.db', 'path "secret/*" { capabilities = ["read"] }']]),
      roles: new Map(),
    });
    assert.equal(plan.items[0]?.action, 'skip');
    assert.match(plan.items[0]?.reason ?? '', /not written by vaultgate/);
  });
});

void describe('summariseWidening', () => {
  const r = (path: string, ...capabilities: string[]) => ({ path, capabilities });
  void test('a new capability on a path: "+read on secret/data/x/*"', () => {
    assert.equal(
      summariseWidening([r('secret/data/x/a', 'read')], [r('secret/data/x/a', 'read'), r('secret/data/x/*', 'read')]),
      'widens access: +read on secret/data/x/*',
    );
  });
  void test('several capabilities and a removed deny', () => {
    assert.equal(
      summariseWidening(
        [r('secret/data/x/*', 'read'), r('secret/data/x/admin', 'deny')],
        [r('secret/data/x/*', 'read', 'update', 'delete')],
      ),
      'widens access: +update +delete on secret/data/x/*; -deny on secret/data/x/admin',
    );
  });
  void test('narrowing or equal access: undefined', () => {
    assert.equal(summariseWidening([r('secret/data/x/*', 'read', 'list')], [r('secret/data/x/a', 'read')]), undefined);
    assert.equal(summariseWidening([r('secret/data/x/*', 'read')], [r('secret/data/x/*', 'read')]), undefined);
  });
  void test('works on VaultPolicy objects, expanding {{namespace}} (raw text too)', () => {
    const before = vp('team', 'p', [{ path: 'secret/data/{{namespace}}/a', capabilities: ['read'] }]);
    const after: KubeObj = {
      ...before,
      spec: { policy: 'path "secret/data/team/a" { capabilities = ["read", "patch"] }' },
    };
    assert.equal(summariseWidening(before, after), 'widens access: +patch on secret/data/team/a');
    assert.equal(summariseWidening(undefined, before), 'widens access: +read on secret/data/team/a');
  });
});
