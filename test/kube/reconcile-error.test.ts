// The error type a reconcile throws on purpose: its retry rule, and which of them the runtime does not retry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKOFF, isTerminal, NEVER, ReconcileError, retryAfter } from '../../kube/reconcile-error.ts';
import { KubeApiError } from '../../kube/errors.ts';

test('a ReconcileError retries with backoff unless it says otherwise', () => {
  const e = new ReconcileError('VaultUnavailable', 'kv.read: Vault unreachable (ECONNREFUSED)');
  assert.deepEqual(e.retry, BACKOFF);
  assert.equal(e.reason, 'VaultUnavailable');
  assert.ok(e instanceof Error);
});

test('only a ReconcileError whose retry is never is terminal', () => {
  const cases: Array<[unknown, boolean]> = [
    [new ReconcileError('InvalidSpec', 'spec.x: required', NEVER), true],
    [new ReconcileError('SecretMissing', 'target Secret s does not exist', retryAfter(30_000)), false],
    [new ReconcileError('VaultUnavailable', 'unreachable'), false],
    [new KubeApiError(422, 'Invalid', 'spec.x: Invalid value'), false],
    [Object.assign(new Error('x'), { name: 'TerminalError', reason: 'InvalidSpec' }), false],
  ];
  for (const [err, terminal] of cases) assert.equal(isTerminal(err), terminal, String(err));
});
