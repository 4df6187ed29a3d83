import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isReady, setCondition } from '../../kube/conditions.ts';

test('lastTransitionTime moves only when the status changes', () => {
  const t1 = '2026-01-01T00:00:00Z';
  let conds = setCondition(
    undefined,
    { type: 'Ready', status: 'False', reason: 'VaultUnavailable', message: 'connection refused' },
    1,
    t1,
  );
  conds = setCondition(
    conds,
    { type: 'Ready', status: 'False', reason: 'PolicyInvalid', message: 'other' },
    2,
    '2026-01-01T00:05:00Z',
  );
  assert.equal(conds[0]?.lastTransitionTime, t1, 'same status: time kept, reason/message/generation updated');
  assert.equal(conds[0]?.reason, 'PolicyInvalid');
  assert.equal(conds[0]?.observedGeneration, 2);
  conds = setCondition(
    conds,
    { type: 'Ready', status: 'True', reason: 'Synced', message: '' },
    2,
    new Date('2026-01-01T00:10:00.123Z'),
  );
  assert.equal(conds[0]?.lastTransitionTime, '2026-01-01T00:10:00Z');
  assert.equal(conds.length, 1);
});

test('isReady needs Ready=True for the current generation', () => {
  const conds = setCondition([], { type: 'Ready', status: 'True', reason: 'Synced', message: '' }, 3, new Date());
  assert.equal(isReady(conds), true);
  assert.equal(isReady(conds, 3), true);
  assert.equal(isReady(conds, 4), false, 'a Ready from an older spec does not count');
  assert.equal(
    isReady(setCondition(conds, { type: 'Ready', status: 'Unknown', reason: 'Reconciling', message: '' }, 3)),
    false,
  );
});

test('condition messages are scrubbed of tokens and reasons must be CamelCase', () => {
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLXZhbHVl';
  const conds = setCondition(
    [],
    {
      type: 'Ready',
      status: 'False',
      reason: 'LoginFailed',
      message: `login with ${jwt} and hvs.CAESIabcdefghijklmnopqrstuvwx failed`,
    },
    1,
  );
  assert.ok(!conds[0]?.message.includes('eyJ') && !conds[0]?.message.includes('hvs.'), conds[0]?.message);
  assert.throws(() => setCondition([], { type: 'Ready', status: 'False', reason: 'not camel case', message: '' }, 1));
});
