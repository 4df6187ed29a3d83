// The VaultPolicy planner, one row per decision: what it writes or deletes in Vault, what Ready and
// VaultPolicyOwned say, and which Events and audit records it implies.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { renderPolicy } from '../../../policy/render.ts';
import {
  OWNED_CONDITION,
  planVaultPolicy,
  planVaultPolicyCleanup,
  policyVaultFailure,
  type PolicyDesired,
  type PolicyObserved,
  type PolicyPlan,
} from '../../../controller/reconcilers/vaultpolicy-plan.ts';
import { failedReady } from '../../../controller/reconcilers/vault-object-plan.ts';

const owner = { namespace: 'team-a', name: 'reader', uid: 'uid-1' };
const NAME = 'vaultgate.team-a.reader';
const rendered = renderPolicy([{ path: 'secret/data/team-a/*', capabilities: ['read'] }], owner);
const wider = renderPolicy([{ path: 'secret/data/team-a/*', capabilities: ['read', 'delete'] }], owner);
const earlier = renderPolicy([{ path: 'secret/data/team-a/*', capabilities: ['read', 'delete'] }], {
  ...owner,
  uid: 'uid-0',
});
const headerless = 'path "secret/data/team-a/*" {\n  capabilities = ["read", "delete"]\n}\n';
const apply: PolicyDesired = { rendered };
const refused: PolicyDesired = {
  refused: { reason: 'GuardrailViolation', message: 'spec.rules[0].path: outside the namespace (rule guardrail.path)' },
};

function observed(o: Partial<PolicyObserved> = {}): PolicyObserved {
  return {
    name: NAME,
    namespace: 'team-a',
    header: 'foreign',
    annotated: false,
    consent: false,
    syncedBefore: false,
    ...o,
  };
}

/** The plan as a row: steps (op, Event reason, audit action), Ready reason, VaultPolicyOwned, Events after status. */
function summary(p: PolicyPlan): Record<string, unknown> {
  const owned = p.status?.conditions.find((c) => c.type === OWNED_CONDITION);
  return {
    decision: p.decision,
    steps: p.steps.map(
      (s) => `${s.op === 'delete' ? 'delete' : 'write'}/${s.event?.reason ?? '-'}/${s.audit?.action ?? '-'}`,
    ),
    ready: p.status ? `${p.status.ready.status}/${p.status.ready.reason}` : undefined,
    owned: owned ? `${owned.status}/${owned.reason}` : undefined,
    events: p.events.map((e) => e.reason),
  };
}

const rows: Array<{ name: string; desired: PolicyDesired; o: Partial<PolicyObserved>; want: Record<string, unknown> }> =
  [
    {
      name: 'create: nothing at our name',
      desired: apply,
      o: {},
      want: {
        decision: 'create',
        steps: ['write/Created/create'],
        ready: 'True/Synced',
        owned: 'True/Written',
        events: [],
      },
    },
    {
      name: 'noop: ours and equal',
      desired: apply,
      o: { stored: rendered, header: 'owned', syncedBefore: true },
      want: { decision: 'noop', steps: [], ready: 'True/Synced', owned: 'True/Written', events: [] },
    },
    {
      name: 'update: ours, the spec changed',
      desired: apply,
      o: { stored: wider, header: 'owned' },
      want: {
        decision: 'update',
        steps: ['write/Updated/update'],
        ready: 'True/Synced',
        owned: 'True/Written',
        events: [],
      },
    },
    {
      name: 'update: written for an earlier object of this name (rewritten, never deleted)',
      desired: apply,
      o: { stored: earlier, header: 'owned-previous', syncedBefore: true },
      want: {
        decision: 'update',
        steps: ['write/Updated/update'],
        ready: 'True/Synced',
        owned: 'True/Written',
        events: [],
      },
    },
    {
      name: 'repair: ours, this generation was synced, changed outside vaultgate',
      desired: apply,
      o: { stored: wider, header: 'owned', syncedBefore: true, owned: { status: 'True', reason: 'Written' } },
      want: {
        decision: 'repair',
        steps: ['write/DriftRepaired/repair'],
        ready: 'True/Synced',
        owned: 'True/Written',
        events: [],
      },
    },
    {
      name: 'repair: our claim in status, the header removed in Vault',
      desired: apply,
      o: { stored: headerless, owned: { status: 'True', reason: 'Written' } },
      want: {
        decision: 'repair',
        steps: ['write/DriftRepaired/repair'],
        ready: 'True/Synced',
        owned: 'True/Written',
        events: [],
      },
    },
    {
      name: "adopt: someone else's, annotated, the cluster admin consents",
      desired: apply,
      o: { stored: headerless, annotated: true, consent: true },
      want: {
        decision: 'adopt',
        steps: ['write/Adopted/adopt'],
        ready: 'True/Synced',
        owned: 'True/Written',
        events: [],
      },
    },
    {
      name: "leave foreign: someone else's, not annotated",
      desired: apply,
      o: { stored: headerless, consent: true },
      want: { decision: 'leave-foreign', steps: [], ready: 'False/NotOwned', owned: undefined, events: ['NotOwned'] },
    },
    {
      name: 'leave foreign: annotated, but no consent',
      desired: apply,
      o: { stored: headerless, annotated: true },
      want: { decision: 'leave-foreign', steps: [], ready: 'False/NotOwned', owned: undefined, events: ['NotOwned'] },
    },
    {
      name: 'revoke: refused, ours in Vault (header)',
      desired: refused,
      o: { stored: rendered, header: 'owned' },
      want: {
        decision: 'revoke',
        steps: ['delete/AccessRevoked/delete'],
        ready: 'False/GuardrailViolation',
        owned: 'False/Revoked',
        events: ['GuardrailViolation'],
      },
    },
    {
      name: 'revoke: refused, ours by our claim (header removed)',
      desired: refused,
      o: { stored: headerless, owned: { status: 'True', reason: 'Written' } },
      want: {
        decision: 'revoke',
        steps: ['delete/AccessRevoked/delete'],
        ready: 'False/GuardrailViolation',
        owned: 'False/Revoked',
        events: ['GuardrailViolation'],
      },
    },
    {
      name: "refuse: refused, someone else's policy left untouched",
      desired: refused,
      o: { stored: headerless },
      want: {
        decision: 'refuse',
        steps: [],
        ready: 'False/GuardrailViolation',
        owned: undefined,
        events: ['GuardrailViolation'],
      },
    },
    {
      name: 'refuse: refused, nothing in Vault',
      desired: refused,
      o: {},
      want: {
        decision: 'refuse',
        steps: [],
        ready: 'False/GuardrailViolation',
        owned: undefined,
        events: ['GuardrailViolation'],
      },
    },
    {
      name: 'refuse: refused again after a revoke: still Revoked, no second removal',
      desired: refused,
      o: { owned: { status: 'False', reason: 'Revoked' } },
      want: {
        decision: 'refuse',
        steps: [],
        ready: 'False/GuardrailViolation',
        owned: 'False/Revoked',
        events: ['GuardrailViolation'],
      },
    },
  ];

void describe('planVaultPolicy: one row per decision', () => {
  for (const row of rows) {
    void test(row.name, () => {
      assert.deepEqual(summary(planVaultPolicy(row.desired, observed(row.o))), row.want);
    });
  }

  void test('the same state planned twice gives the same plan', () => {
    const o = observed({ stored: wider, header: 'owned', syncedBefore: true });
    assert.deepEqual(planVaultPolicy(apply, o), planVaultPolicy(apply, o));
  });

  void test('a refusal already reported (same Ready) records no second Event', () => {
    const first = planVaultPolicy(refused, observed());
    const again = planVaultPolicy(
      refused,
      observed({ ready: { reason: first.status!.ready.reason, message: first.status!.ready.message } }),
    );
    assert.deepEqual(again.events, []);
  });

  void test('writes carry the rendered text and what they change in access; a revoke names why in Ready', () => {
    const repair = planVaultPolicy(apply, observed({ stored: wider, header: 'owned', syncedBefore: true }));
    assert.deepEqual(repair.steps[0]?.op, { write: rendered });
    assert.equal(repair.steps[0]?.audit?.content, rendered);
    assert.match(repair.steps[0]?.audit?.change ?? '', /takes back/);
    const revoke = planVaultPolicy(refused, observed({ stored: wider, header: 'owned' }));
    assert.equal(revoke.steps[0]?.audit?.content, undefined);
    assert.match(revoke.status!.ready.message, /was removed because the spec is refused/);
  });
});

void describe('planVaultPolicyCleanup: on deletion', () => {
  const base = { name: NAME, namespace: 'team-a', objectName: 'reader' };
  const cleanupRows: Array<{ name: string; o: Partial<PolicyObserved>; want: Record<string, unknown> }> = [
    {
      name: 'delete: the header names this object',
      o: { stored: rendered, header: 'owned' },
      want: { decision: 'delete', steps: ['delete/Deleted/delete'], ready: undefined, owned: undefined, events: [] },
    },
    {
      name: 'keep: written for an earlier object of this name',
      o: { stored: earlier, header: 'owned-previous' },
      want: { decision: 'keep', steps: [], ready: undefined, owned: undefined, events: ['NotDeleted'] },
    },
    {
      name: "keep: someone else's",
      o: { stored: headerless, header: 'foreign' },
      want: { decision: 'keep', steps: [], ready: undefined, owned: undefined, events: ['NotDeleted'] },
    },
    {
      name: 'keep: nothing in Vault',
      o: { header: 'foreign' },
      want: { decision: 'keep', steps: [], ready: undefined, owned: undefined, events: [] },
    },
  ];
  for (const row of cleanupRows) {
    void test(row.name, () => {
      assert.deepEqual(summary(planVaultPolicyCleanup({ ...base, header: 'foreign', ...row.o })), row.want);
    });
  }
});

void describe('policyVaultFailure: Ready when Vault fails', () => {
  void test("syncing: the error's own reason", () => {
    assert.deepEqual(failedReady(policyVaultFailure(apply, NAME), 'VaultUnavailable', 'Vault is sealed'), {
      status: 'False',
      reason: 'VaultUnavailable',
      message: `cannot sync Vault policy ${NAME}: Vault is sealed`,
    });
  });
  void test("refused: the refusal's reason, and that access may still be in force", () => {
    const ready = failedReady(policyVaultFailure(refused, NAME), 'VaultUnavailable', 'Vault is sealed');
    assert.equal(ready.reason, 'GuardrailViolation');
    assert.match(ready.message, /may still be in force: cannot remove it yet \(Vault is sealed\); retrying$/);
  });
  void test('deleting', () => {
    assert.equal(
      failedReady(policyVaultFailure('deleting', NAME), 'VaultUnavailable', 'Vault is sealed').message,
      `deleting: cannot remove Vault policy ${NAME} yet (Vault is sealed); retrying`,
    );
  });
});
