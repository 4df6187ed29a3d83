// The rollout planner as a table: one row per situation a workload can be in when a reconcile looks at it,
// then the sequences a user notices (two changes in one window → one restart; the cool-down).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatRecord,
  parseRecord,
  planRollout,
  type PlanInput,
  type RolloutPlan,
} from '../../../controller/rollouts/plan.ts';

const T = Date.parse('2030-01-01T00:00:00Z');
const policy = { coalesceMs: 10_000, cooldownMs: 60_000, maxConcurrent: 2 };
const steady = { state: 'complete' as const, paused: false, recorded: { db: 'h1' } };
const base: PlanInput = { workload: steady, current: { db: 'h1' }, missing: [], rollingInNamespace: 0, now: T, policy };

const rows: { name: string; input: Partial<PlanInput>; want: RolloutPlan }[] = [
  { name: 'unchanged data: nothing', input: {}, want: { action: 'none', reason: 'Unchanged' } },
  {
    name: 'unchanged data while its own rollout runs: nothing',
    input: { workload: { ...steady, state: 'rolling' } },
    want: { action: 'none', reason: 'Unchanged' },
  },
  {
    name: 'target workload missing: nothing (settled() says missing)',
    input: { workload: undefined, current: { db: 'h2' } },
    want: { action: 'none', reason: 'WorkloadMissing' },
  },
  { name: 'no Secret consumed: nothing', input: { current: {} }, want: { action: 'none', reason: 'NoSecrets' } },
  {
    name: 'first sight: recorded, no restart',
    input: { workload: { ...steady, recorded: undefined } },
    want: { action: 'record', record: { db: 'h1' } },
  },
  {
    name: 'a newly consumed Secret: recorded, no restart',
    input: { current: { db: 'h1', tls: 't1' } },
    want: { action: 'record', record: { db: 'h1', tls: 't1' } },
  },
  {
    name: 'a Secret no longer consumed: dropped, no restart',
    input: { workload: { ...steady, recorded: { db: 'h1', old: 'o1' } } },
    want: { action: 'record', record: { db: 'h1' } },
  },
  {
    name: 'first sight before its Secret exists: nothing written (no empty record)',
    input: { workload: { ...steady, recorded: undefined }, current: {}, missing: ['db'] },
    want: { action: 'none', reason: 'Unchanged' },
  },
  {
    name: 'a consumed Secret missing now: its record kept, no restart',
    input: { current: {}, missing: ['db'] },
    want: { action: 'none', reason: 'Unchanged' },
  },
  {
    name: 'changed, window already open long enough: one restart',
    input: { current: { db: 'h2' }, pendingSince: T - 10_000, pendingStates: 1 },
    want: { action: 'restart', record: { db: 'h2' }, changed: ['db'], coalesced: 0 },
  },
  {
    name: 'changed, seen now: waits for the coalescing window',
    input: { current: { db: 'h2' } },
    want: { action: 'wait', reason: 'Coalescing', retryAfterMs: 10_000, changed: ['db'] },
  },
  {
    name: 'changed twice in the window: one restart, one coalesced',
    input: { current: { db: 'h3' }, pendingSince: T - 10_000, pendingStates: 2 },
    want: { action: 'restart', record: { db: 'h3' }, changed: ['db'], coalesced: 1 },
  },
  {
    name: 'changed within the cool-down: waits until it ends',
    input: { current: { db: 'h2' }, pendingSince: T - 20_000, workload: { ...steady, restartedAt: T - 45_000 } },
    want: { action: 'wait', reason: 'CoolingDown', retryAfterMs: 15_000, changed: ['db'] },
  },
  {
    name: 'changed after the cool-down: restart',
    input: { current: { db: 'h2' }, pendingSince: T - 20_000, workload: { ...steady, restartedAt: T - 60_000 } },
    want: { action: 'restart', record: { db: 'h2' }, changed: ['db'], coalesced: 0 },
  },
  {
    name: 'cap reached in the namespace: waits',
    input: { current: { db: 'h2' }, pendingSince: T - 10_000, rollingInNamespace: 2 },
    want: { action: 'wait', reason: 'ConcurrencyLimit', retryAfterMs: 5_000, changed: ['db'] },
  },
  {
    name: 'below the cap: restart',
    input: { current: { db: 'h2' }, pendingSince: T - 10_000, rollingInNamespace: 1 },
    want: { action: 'restart', record: { db: 'h2' }, changed: ['db'], coalesced: 0 },
  },
  {
    name: 'paused Deployment: an Event, not an error, no patch',
    input: { current: { db: 'h2' }, pendingSince: T - 10_000, workload: { ...steady, paused: true } },
    want: { action: 'paused', changed: ['db'] },
  },
  {
    name: 'rollout in progress: waits for it',
    input: { current: { db: 'h2' }, pendingSince: T - 10_000, workload: { ...steady, state: 'rolling' } },
    want: { action: 'wait', reason: 'RolloutInProgress', retryAfterMs: 30_000, changed: ['db'] },
  },
  {
    name: 'pods unready with the template rolled out (their credential died): restarted, no rollout to wait for',
    input: { current: { db: 'h2' }, pendingSince: T - 10_000, workload: { ...steady, state: 'unready' } },
    want: { action: 'restart', record: { db: 'h2' }, changed: ['db'], coalesced: 0 },
  },
  {
    name: 'stalled rollout (progress deadline exceeded) does not hold the restart',
    input: { current: { db: 'h2' }, pendingSince: T - 10_000, workload: { ...steady, state: 'stalled' } },
    want: { action: 'restart', record: { db: 'h2' }, changed: ['db'], coalesced: 0 },
  },
  {
    name: "one Secret changed, another missing: restart keeps the missing one's record",
    input: {
      workload: { ...steady, recorded: { db: 'h1', tls: 't1' } },
      current: { db: 'h2' },
      missing: ['tls'],
      pendingSince: T - 10_000,
    },
    want: { action: 'restart', record: { db: 'h2', tls: 't1' }, changed: ['db'], coalesced: 0 },
  },
  {
    name: 'a missing Secret back with other data: a change',
    input: {
      workload: { ...steady, recorded: { db: 'h1', tls: 't1' } },
      current: { db: 'h1', tls: 't2' },
      pendingSince: T - 10_000,
    },
    want: { action: 'restart', record: { db: 'h1', tls: 't2' }, changed: ['tls'], coalesced: 0 },
  },
];

void describe('controller/rollouts/plan: planRollout', () => {
  for (const row of rows) {
    void test(row.name, () => {
      assert.deepEqual(planRollout({ ...base, ...row.input }), row.want);
    });
  }

  // The coordinator's loop, reduced: it keeps the window's start and the distinct states, and applies a
  // restart's record and time to the workload.
  function run(
    events: { at: number; db: string }[],
    until: number,
    tick = 1_000,
  ): { restarts: { at: number; coalesced: number }[] } {
    let workload: NonNullable<PlanInput['workload']> = { ...steady };
    let current = { db: 'h1' };
    let pending: { since: number; states: Set<string> } | undefined;
    const restarts: { at: number; coalesced: number }[] = [];
    for (let now = T; now <= until; now += tick) {
      for (const e of events) if (e.at === now) current = { db: e.db };
      const states = pending ? new Set([...pending.states, current.db]) : undefined;
      const p = planRollout({
        ...base,
        workload,
        current,
        now,
        ...(pending ? { pendingSince: pending.since, pendingStates: states!.size } : {}),
      });
      if (p.action === 'wait')
        pending = { since: pending?.since ?? now, states: new Set([...(pending?.states ?? []), current.db]) };
      else pending = undefined;
      if (p.action === 'restart') {
        restarts.push({ at: now, coalesced: p.coalesced });
        workload = { ...workload, recorded: p.record, restartedAt: now };
      }
    }
    return { restarts };
  }

  void test('two changes in the coalescing window (even in one second): one restart carrying the last data', () => {
    const { restarts } = run(
      [
        { at: T + 1_000, db: 'h2' },
        { at: T + 3_000, db: 'h3' },
      ],
      T + 120_000,
    );
    assert.deepEqual(restarts, [{ at: T + 11_000, coalesced: 1 }]);
  });

  void test('a change during the cool-down restarts once, when it ends; unchanged data never again', () => {
    const { restarts } = run(
      [
        { at: T + 1_000, db: 'h2' },
        { at: T + 30_000, db: 'h3' },
      ],
      T + 300_000,
    );
    assert.deepEqual(
      restarts.map((r) => r.at),
      [T + 11_000, T + 71_000],
    );
  });

  void test('data changed and changed back before the window closed: no restart', () => {
    const { restarts } = run(
      [
        { at: T + 1_000, db: 'h2' },
        { at: T + 2_000, db: 'h1' },
      ],
      T + 120_000,
    );
    assert.deepEqual(restarts, []);
  });
});

void describe('controller/rollouts/plan: the record annotation', () => {
  void test('written sorted, read back; anything but a map of strings reads as absent (adopted afresh)', () => {
    assert.equal(formatRecord({ b: '2', a: '1' }), '{"a":"1","b":"2"}');
    assert.deepEqual(parseRecord(formatRecord({ b: '2', a: '1' })), { a: '1', b: '2' });
    for (const bad of [undefined, '', 'x', '[]', 'null', '{"a":1}', `{"a":"${'x'.repeat(70_000)}"}`])
      assert.equal(parseRecord(bad), undefined, String(bad).slice(0, 20));
  });
});
