// The reconcilers' shared helpers: the status vaultgate owns (observedGeneration, Ready and extra
// conditions, transition times kept while nothing changes), the ±10% per-object jitter of periodic
// re-checks, the findings text, and the controller's vaultName re-check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildStatus, describeFindings, jittered, assertAdmitted } from '../../../controller/reconcilers/common.ts';
import { isTerminal } from '../../../kube/reconcile-error.ts';
import type { Condition } from '../../../kube/objects.ts';

const T1 = new Date('2026-12-03T08:00:00Z');
const T2 = new Date('2026-12-03T09:00:00Z');

test('buildStatus: observedGeneration, Ready and extra conditions; a transition time moves only on a change', () => {
  const obj = { metadata: { name: 'p', generation: 3 } };
  const s1 = buildStatus(
    obj,
    {
      ready: { status: 'True', reason: 'Synced', message: 'written' },
      extra: { vaultName: 'vaultgate.team-a.p' },
      conditions: [{ type: 'VaultPolicyOwned', status: 'True', reason: 'Created', message: 'ours' }],
    },
    T1,
  );
  assert.equal(s1.observedGeneration, 3);
  assert.equal(s1.vaultName, 'vaultgate.team-a.p');
  const conds = s1.conditions as Condition[];
  assert.deepEqual(
    conds.map((c) => [c.type, c.status, c.reason]),
    [
      ['Ready', 'True', 'Synced'],
      ['VaultPolicyOwned', 'True', 'Created'],
    ],
  );
  const same = buildStatus(
    { ...obj, status: s1 },
    { ready: { status: 'True', reason: 'Synced', message: 'written' } },
    T2,
  );
  const ready = (same.conditions as Condition[]).find((c) => c.type === 'Ready');
  assert.equal(ready?.lastTransitionTime, conds[0]?.lastTransitionTime, 'unchanged Ready keeps its transition time');
  const failed = buildStatus(
    { ...obj, status: s1 },
    { ready: { status: 'False', reason: 'VaultUnavailable', message: 'down' } },
    T2,
  );
  const now = (failed.conditions as Condition[]).find((c) => c.type === 'Ready');
  assert.notEqual(now?.lastTransitionTime, ready?.lastTransitionTime, 'a status change moves the transition time');
});

test('buildStatus without a generation leaves observedGeneration out', () => {
  const s = buildStatus({ metadata: { name: 'p' } }, { ready: { status: 'True', reason: 'Ok', message: '' } }, T1);
  assert.equal('observedGeneration' in s, false);
});

test('jittered: within ±10%, the same for one uid every time, spread across uids', () => {
  const period = 300_000;
  const values = Array.from({ length: 200 }, (_, i) => jittered(period, `uid-${i}`));
  for (const v of values) assert.ok(v >= period * 0.9 && v <= period * 1.1, `${v}`);
  assert.equal(jittered(period, 'uid-7'), jittered(period, 'uid-7'));
  assert.ok(new Set(values).size > 150, 'different objects re-check at different times');
  assert.ok(Math.min(...values) < period * 0.95 && Math.max(...values) > period * 1.05, 'the whole band is used');
});

test('describeFindings: field, message and rule of each, joined', () => {
  assert.equal(
    describeFindings([
      { field: 'spec.rules[0].path', rule: 'guardrail.path', severity: 'deny', message: 'outside the namespace' },
      { field: 'spec.ttl', rule: 'schema.pattern', severity: 'deny', message: 'not a duration' },
    ]),
    'spec.rules[0].path: outside the namespace (rule guardrail.path); spec.ttl: not a duration (rule schema.pattern)',
  );
});

test('assertAdmitted: a vaultName other than the derived one is InvalidSpec, never retried, naming both', () => {
  const obj = { metadata: { name: 'p', namespace: 'team-a' }, spec: { vaultName: 'vaultgate.team-b.p' } };
  assert.throws(
    () => assertAdmitted(obj, 'vaultgate.team-a.p', {} as never),
    (err: unknown) =>
      isTerminal(err) &&
      err.reason === 'InvalidSpec' &&
      /spec\.vaultName "vaultgate\.team-b\.p" must be the derived name "vaultgate\.team-a\.p"/.test(err.message),
  );
});
