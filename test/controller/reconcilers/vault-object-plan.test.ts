// The decisions VaultPolicy and VaultRoleBinding planning share: whose a Vault object is, what a write
// or delete reports, and what Ready says when Vault fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADOPT_ANNOTATION,
  deleteStep,
  failedReady,
  leaveForeign,
  notOwnedMessage,
  refusalEvents,
  refusedPlan,
  revokedCondition,
  revokeStep,
  vaultFailure,
  wantsAdoption,
  wasRevoked,
  whose,
  writeStep,
} from '../../../controller/reconcilers/vault-object-plan.ts';

test("whose: ours by mark or record; someone else's is adoptable only with annotation and consent", () => {
  const o = { exists: true, ours: false, annotated: false, consent: false };
  assert.equal(whose({ ...o, exists: false }), 'nobody');
  assert.equal(whose({ ...o, ours: true }), 'ours');
  assert.equal(whose(o), 'foreign');
  assert.equal(whose({ ...o, annotated: true }), 'foreign', 'the annotation alone adopts nothing');
  assert.equal(whose({ ...o, consent: true }), 'foreign');
  assert.equal(whose({ ...o, annotated: true, consent: true }), 'adoptable');
});

test('adoption is asked for with the annotation set to "true" exactly; the message says what is missing', () => {
  const obj = (v?: string) => ({
    apiVersion: 'v',
    kind: 'VaultPolicy',
    metadata: { name: 'p', ...(v === undefined ? {} : { annotations: { [ADOPT_ANNOTATION]: v } }) },
  });
  assert.ok(wantsAdoption(obj('true')));
  assert.ok(!wantsAdoption(obj('yes')));
  assert.ok(!wantsAdoption(obj()));
  assert.match(
    notOwnedMessage('policy x', 'VaultPolicy', 'team-a', false),
    /annotate the VaultPolicy with vaultgate\.io\/adopt/,
  );
  assert.match(
    notOwnedMessage('policy x', 'VaultPolicy', 'team-a', true),
    /is annotated .*also needs the cluster admin's consent: an enforce VaultGuardrail selecting namespace "team-a"/,
  );
});

test('each write kind reports its Event and audit action; a drift repair is a Warning', () => {
  assert.deepEqual(writeStep('op', 'repair', 'drift', { a: 1 }, 'widened'), {
    op: 'op',
    event: { type: 'Warning', reason: 'DriftRepaired', note: 'drift' },
    audit: { action: 'repair', reason: 'drift', content: { a: 1 }, change: 'widened' },
  });
  assert.equal(writeStep('op', 'create', 'n', {}).event?.reason, 'Created');
  assert.equal(writeStep('op', 'adopt', 'n', {}).audit?.action, 'adopt');
  const del = deleteStep('op', { type: 'Normal', reason: 'Deleted', note: 'gone' });
  assert.equal(del.event?.action, 'Delete');
  assert.deepEqual(del.audit, { action: 'delete', reason: 'gone' });
});

test('a refusal raises one Warning Event, not one per re-check', () => {
  const ready = { status: 'False' as const, reason: 'GuardrailViolation', message: 'sys/* is forbidden' };
  assert.equal(refusalEvents(undefined, ready).length, 1);
  assert.deepEqual(refusalEvents({ reason: ready.reason, message: ready.message }, ready), []);
  assert.equal(refusalEvents({ reason: ready.reason, message: 'older text' }, ready).length, 1);
});

test("someone else's object is left alone: Ready NotOwned saying what adoption needs, one Warning", () => {
  const plan = leaveForeign('Vault role r', 'VaultRoleBinding', { namespace: 'team-a', annotated: false }, { m: 1 });
  assert.equal(plan.decision, 'leave-foreign');
  assert.deepEqual(plan.steps, []);
  assert.deepEqual(plan.status?.ready, {
    status: 'False',
    reason: 'NotOwned',
    message: notOwnedMessage('Vault role r', 'VaultRoleBinding', 'team-a', false),
  });
  assert.deepEqual(plan.status?.extra, { m: 1 });
  assert.deepEqual(plan.events, [{ type: 'Warning', reason: 'NotOwned', note: plan.status?.ready.message }]);
  assert.ok(!('extra' in (leaveForeign('p', 'VaultPolicy', { namespace: 'a', annotated: true }).status ?? {})));
});

test('a refused spec: ours is taken back (revoke, a Warning AccessRevoked delete), else refuse; Revoked is remembered', () => {
  const refusal = { reason: 'GuardrailViolation', message: 'sys/* is forbidden' };
  const step = revokeStep('delete', 'removed p', 'takes back read on sys/*');
  assert.deepEqual(step, {
    op: 'delete',
    event: { type: 'Warning', reason: 'AccessRevoked', note: 'removed p', action: 'Delete' },
    audit: { action: 'delete', reason: 'removed p', change: 'takes back read on sys/*' },
  });
  const gone = revokedCondition('VaultPolicyOwned', 'Vault policy p');
  assert.deepEqual(
    [gone.status, gone.reason, gone.message],
    ['False', 'Revoked', 'vaultgate removed the Vault policy p it had written, because the spec is refused'],
  );
  assert.ok(wasRevoked({ status: gone.status, reason: gone.reason }));
  assert.ok(!wasRevoked({ status: 'True', reason: 'Revoked' }) && !wasRevoked(undefined));
  const revoke = refusedPlan({
    refusal,
    message: 'removed',
    ours: true,
    revoke: [step],
    conditions: [gone],
    before: undefined,
  });
  assert.equal(revoke.decision, 'revoke');
  assert.deepEqual(revoke.steps, [step]);
  assert.deepEqual(revoke.status, {
    ready: { status: 'False', reason: refusal.reason, message: 'removed' },
    conditions: [gone],
  });
  assert.deepEqual(revoke.events, [{ type: 'Warning', reason: refusal.reason, note: 'removed' }]);
  const again = refusedPlan({
    refusal,
    message: 'removed',
    ours: false,
    revoke: [],
    conditions: [gone],
    before: { reason: refusal.reason, message: 'removed' },
  });
  assert.equal(again.decision, 'refuse');
  assert.deepEqual(again.events, [], 'no second Warning while Ready stays the same');
});

test('Ready on a Vault failure: syncing, deleting, or refused (what we wrote may still be in force)', () => {
  assert.deepEqual(failedReady(vaultFailure('policy', {}, 'vg.a.p'), 'VaultUnavailable', 'sealed'), {
    status: 'False',
    reason: 'VaultUnavailable',
    message: 'cannot sync Vault policy vg.a.p: sealed',
  });
  assert.match(
    failedReady(vaultFailure('role', 'deleting', 'r'), 'VaultUnavailable', 'timeout').message,
    /^deleting: cannot remove Vault role r yet \(timeout\); retrying$/,
  );
  const refused = vaultFailure(
    'policy',
    { refused: { reason: 'GuardrailViolation', message: 'sys/* forbidden' } },
    'p',
  );
  const r = failedReady(refused, 'VaultUnavailable', 'sealed');
  assert.equal(r.reason, 'GuardrailViolation', "the refusal's reason, not the error's");
  assert.match(r.message, /^sys\/\* forbidden; the Vault policy p vaultgate wrote earlier may still be in force/);
});
