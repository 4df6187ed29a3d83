// The decisions VaultPolicy and VaultRoleBinding planning share: whose a Vault object is, what a write
// or delete reports, and what Ready says when Vault fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADOPT_ANNOTATION,
  deleteStep,
  failedReady,
  notOwnedMessage,
  refusalEvents,
  vaultFailure,
  wantsAdoption,
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
