// The VaultRoleBinding planner, one row per decision: the claim written before a role, what it writes or
// deletes on which mount, what Ready, VaultRoleOwned and status.authMount say, and the Events and audit
// records it implies.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { DesiredRole } from '../../../policy/role.ts';
import {
  OWNED_CONDITION,
  planVaultRoleBinding,
  planVaultRoleBindingCleanup,
  roleMountToRead,
  roleVaultFailure,
  type RoleDesired,
  type RoleObserved,
  type RolePlan,
} from '../../../controller/reconcilers/vaultrolebinding-plan.ts';
import { failedReady } from '../../../controller/reconcilers/vault-object-plan.ts';

const NAME = 'vaultgate.team-a.app';
const role: DesiredRole = {
  mount: 'kubernetes',
  body: {
    bound_service_account_names: ['app'],
    bound_service_account_namespaces: ['team-a'],
    token_policies: ['vaultgate.team-a.reader'],
    token_ttl: 3600,
    token_max_ttl: 86400,
    audience: 'vault',
  },
};
const other = { ...role.body, bound_service_account_namespaces: ['*'] };
const apply: RoleDesired = { role, missing: [], notReady: [] };
const refused: RoleDesired = {
  refused: {
    reason: 'GuardrailViolation',
    message: "spec.tokenMaxTTL: above the guardrail's 1h (rule guardrail.max-ttl)",
  },
};
const created = { status: 'True', reason: 'Created' };

function observed(o: Partial<RoleObserved> = {}): RoleObserved {
  return {
    name: NAME,
    namespace: 'team-a',
    specMount: 'kubernetes',
    claimedUnseen: false,
    annotated: false,
    consent: false,
    writtenThisGeneration: false,
    ...o,
  };
}

function opName(op: RolePlan['steps'][number]['op']): string {
  if ('write' in op) return `write@${op.write.mount}`;
  if ('delete' in op) return `delete@${op.delete}`;
  return `claim:${op.claim}`;
}

/** The plan as a row: steps (op, Event reason, audit action), Ready, VaultRoleOwned, authMount, Events after status. */
function summary(p: RolePlan): Record<string, unknown> {
  const owned = p.status?.conditions.find((c) => c.type === OWNED_CONDITION);
  return {
    decision: p.decision,
    steps: p.steps.map((s) => `${opName(s.op)}/${s.event?.reason ?? '-'}/${s.audit?.action ?? '-'}`),
    ready: p.status ? `${p.status.ready.status}/${p.status.ready.reason}` : undefined,
    owned: owned ? `${owned.status}/${owned.reason}` : undefined,
    authMount: p.status?.extra?.authMount,
    events: p.events.map((e) => e.reason),
  };
}

const rows: Array<{ name: string; desired: RoleDesired; o: Partial<RoleObserved>; want: Record<string, unknown> }> = [
  {
    name: 'create: no role, claimed first, then written',
    desired: apply,
    o: {},
    want: {
      decision: 'create',
      steps: ['claim:Created/-/-', 'write@kubernetes/Created/create'],
      ready: 'True/Synced',
      owned: 'True/Created',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: 'create: ours (claim in status), the role is gone',
    desired: apply,
    o: { owned: created, statusMount: 'kubernetes' },
    want: {
      decision: 'create',
      steps: ['write@kubernetes/Created/create'],
      ready: 'True/Synced',
      owned: 'True/Created',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: 'noop: ours and equal',
    desired: apply,
    o: { owned: created, statusMount: 'kubernetes', actual: role.body, writtenThisGeneration: true },
    want: {
      decision: 'noop',
      steps: [],
      ready: 'True/Synced',
      owned: 'True/Created',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: 'noop: a claim the cache does not show yet counts as ours',
    desired: apply,
    o: { claimedUnseen: true, actual: role.body },
    want: {
      decision: 'noop',
      steps: [],
      ready: 'True/Synced',
      owned: 'True/Created',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: 'update: ours, the spec changed',
    desired: apply,
    o: { owned: created, statusMount: 'kubernetes', actual: other },
    want: {
      decision: 'update',
      steps: ['write@kubernetes/Updated/update'],
      ready: 'True/Synced',
      owned: 'True/Created',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: 'repair: ours, this generation written here, changed outside vaultgate',
    desired: apply,
    o: { owned: created, statusMount: 'kubernetes', actual: other, writtenThisGeneration: true },
    want: {
      decision: 'repair',
      steps: ['write@kubernetes/DriftRepaired/repair'],
      ready: 'True/Synced',
      owned: 'True/Created',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: 'create: the mount moved: ours removed from the old one first, none yet on the new one',
    desired: apply,
    o: { owned: created, statusMount: 'k8s-old' },
    want: {
      decision: 'create',
      steps: ['delete@k8s-old/Moved/delete', 'write@kubernetes/Created/create'],
      ready: 'True/Synced',
      owned: 'True/Created',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: "adopt: someone else's, annotated, consent: claimed Adopted, then rewritten",
    desired: apply,
    o: { actual: other, annotated: true, consent: true },
    want: {
      decision: 'adopt',
      steps: ['claim:Adopted/-/-', 'write@kubernetes/Adopted/adopt'],
      ready: 'True/Synced',
      owned: 'True/Adopted',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: "adopt: someone else's already as the spec says: claimed, nothing written",
    desired: apply,
    o: { actual: role.body, annotated: true, consent: true },
    want: {
      decision: 'adopt',
      steps: ['claim:Adopted/-/-'],
      ready: 'True/Synced',
      owned: 'True/Adopted',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: "leave foreign: someone else's, not annotated",
    desired: apply,
    o: { actual: other, consent: true },
    want: {
      decision: 'leave-foreign',
      steps: [],
      ready: 'False/NotOwned',
      owned: undefined,
      authMount: undefined,
      events: ['NotOwned'],
    },
  },
  {
    name: 'leave foreign: annotated, but no consent',
    desired: apply,
    o: { actual: other, annotated: true },
    want: {
      decision: 'leave-foreign',
      steps: [],
      ready: 'False/NotOwned',
      owned: undefined,
      authMount: undefined,
      events: ['NotOwned'],
    },
  },
  {
    name: 'a referenced VaultPolicy missing: written without it, Ready=False PolicyNotFound',
    desired: { role, missing: ['reader'], notReady: [] },
    o: { owned: created, statusMount: 'kubernetes', actual: role.body },
    want: {
      decision: 'noop',
      steps: [],
      ready: 'False/PolicyNotFound',
      owned: 'True/Created',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: 'a referenced VaultPolicy not Ready: Ready=False PolicyNotReady',
    desired: { role, missing: [], notReady: ['reader'] },
    o: { owned: created, statusMount: 'kubernetes', actual: role.body },
    want: {
      decision: 'noop',
      steps: [],
      ready: 'False/PolicyNotReady',
      owned: 'True/Created',
      authMount: 'kubernetes',
      events: [],
    },
  },
  {
    name: 'revoke: refused, ours in Vault: removed from the mount it was written to',
    desired: refused,
    o: { owned: created, statusMount: 'k8s-old', actual: role.body },
    want: {
      decision: 'revoke',
      steps: ['delete@k8s-old/AccessRevoked/delete'],
      ready: 'False/GuardrailViolation',
      owned: 'False/Revoked',
      authMount: undefined,
      events: ['GuardrailViolation'],
    },
  },
  {
    name: 'revoke: refused, ours claimed but the role is already gone',
    desired: refused,
    o: { owned: created, statusMount: 'kubernetes' },
    want: {
      decision: 'revoke',
      steps: [],
      ready: 'False/GuardrailViolation',
      owned: 'False/Revoked',
      authMount: undefined,
      events: ['GuardrailViolation'],
    },
  },
  {
    name: 'refuse: refused, not ours: nothing touched',
    desired: refused,
    o: {},
    want: {
      decision: 'refuse',
      steps: [],
      ready: 'False/GuardrailViolation',
      owned: undefined,
      authMount: undefined,
      events: ['GuardrailViolation'],
    },
  },
  {
    name: 'refuse: refused again after a revoke: still Revoked',
    desired: refused,
    o: { owned: { status: 'False', reason: 'Revoked' } },
    want: {
      decision: 'refuse',
      steps: [],
      ready: 'False/GuardrailViolation',
      owned: 'False/Revoked',
      authMount: undefined,
      events: ['GuardrailViolation'],
    },
  },
];

void describe('planVaultRoleBinding: one row per decision', () => {
  for (const row of rows) {
    void test(row.name, () => {
      assert.deepEqual(summary(planVaultRoleBinding(row.desired, observed(row.o))), row.want);
    });
  }

  void test('a revoke forgets the claim; a refusal already reported records no second Event', () => {
    const revoke = planVaultRoleBinding(refused, observed({ claimedUnseen: true, actual: role.body }));
    assert.equal(revoke.forgetClaim, true);
    const ready = revoke.status!.ready;
    assert.deepEqual(
      planVaultRoleBinding(
        refused,
        observed({
          owned: { status: 'False', reason: 'Revoked' },
          ready: { reason: ready.reason, message: ready.message },
        }),
      ).events,
      [],
    );
  });

  void test('a drift repair names the fields that changed', () => {
    const plan = planVaultRoleBinding(
      apply,
      observed({ owned: created, statusMount: 'kubernetes', actual: other, writtenThisGeneration: true }),
    );
    assert.match(plan.steps[0]?.event?.note ?? '', /\(bound_service_account_namespaces\); restored$/);
  });
});

void describe('roleMountToRead', () => {
  void test('the desired mount; when refused, where ours is; nothing when refused and not ours', () => {
    assert.equal(roleMountToRead(apply, observed({ statusMount: 'k8s-old' })), 'kubernetes');
    assert.equal(roleMountToRead(refused, observed({ owned: created, statusMount: 'k8s-old/' })), 'k8s-old');
    assert.equal(roleMountToRead(refused, observed()), undefined);
  });
});

void describe('planVaultRoleBindingCleanup: on deletion', () => {
  const base = { name: NAME, namespace: 'team-a', specMount: 'kubernetes', claimedUnseen: false, objectName: 'app' };
  void test('delete: ours, from the mount in status', () => {
    assert.deepEqual(summary(planVaultRoleBindingCleanup({ ...base, owned: created, statusMount: 'k8s-old' })), {
      decision: 'delete',
      steps: ['delete@k8s-old/Deleted/delete'],
      ready: undefined,
      owned: undefined,
      authMount: undefined,
      events: [],
    });
  });
  void test('keep: not ours (no claim), nothing read or deleted', () => {
    assert.deepEqual(summary(planVaultRoleBindingCleanup(base)), {
      decision: 'keep',
      steps: [],
      ready: undefined,
      owned: undefined,
      authMount: undefined,
      events: [],
    });
  });
});

void describe('roleVaultFailure: Ready when Vault fails', () => {
  void test('syncing, refused, deleting', () => {
    assert.deepEqual(failedReady(roleVaultFailure(apply, NAME), 'VaultUnavailable', 'Vault is sealed'), {
      status: 'False',
      reason: 'VaultUnavailable',
      message: `cannot sync Vault role ${NAME}: Vault is sealed`,
    });
    assert.equal(failedReady(roleVaultFailure(refused, NAME), 'VaultUnavailable', 'x').reason, 'GuardrailViolation');
    assert.equal(
      failedReady(roleVaultFailure('deleting', NAME), 'VaultUnavailable', 'x').message,
      `deleting: cannot remove Vault role ${NAME} yet (x); retrying`,
    );
  });
});
