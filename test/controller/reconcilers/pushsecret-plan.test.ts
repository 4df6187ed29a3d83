// The PushSecret planner, one row per decision: which branch a reconcile takes, what one push writes to
// its remote secret, when a failure runs again, and the status each outcome writes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { PushSecretData } from '../../../schemas/types.ts';
import { ReconcileError } from '../../../kube/reconcile-error.ts';
import {
  failedStatus,
  planPushSecret,
  planRemotePush,
  pushRetry,
  syncedStatus,
  wantsFinalizer,
  type PushObserved,
} from '../../../controller/reconcilers/pushsecret-plan.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const HOUR = 3_600_000;
const synced = { syncedResourceVersion: '1-abc', refreshTime: '2026-01-01T11:30:00Z' };

function observed(o: Partial<PushObserved> = {}): PushObserved {
  return {
    storesForeign: false,
    deleting: false,
    resourceVersion: '1-abc',
    status: synced,
    refreshMs: HOUR,
    now: NOW,
    ...o,
  };
}

void describe('planPushSecret: one row per decision', () => {
  const storesError = new ReconcileError('Errored', 'could not get SecretStore "vault": not found');
  const rows: Array<{ name: string; o: Partial<PushObserved>; want: Record<string, unknown> }> = [
    {
      name: 'fail: its stores cannot be resolved (even while deleting)',
      o: { storesError, deleting: true },
      want: { decision: 'fail', error: storesError },
    },
    {
      name: 'refuse: admission refuses the spec even while its store is missing (the refusal, not the absence, is the news)',
      o: { storesError, denials: 'spec.data: refused' },
      want: { decision: 'refuse', error: new ReconcileError('InvalidSpec', 'refused: spec.data: refused') },
    },
    {
      name: "ignore: every store is another controller's",
      o: { storesForeign: true, deleting: true },
      want: { decision: 'ignore' },
    },
    {
      name: 'cleanup: being deleted (admission is not asked)',
      o: { deleting: true, denials: 'spec.data: refused' },
      want: { decision: 'cleanup' },
    },
    {
      name: 'wait: synced, the refresh not due: look again when it is (+5 s)',
      o: {},
      want: { decision: 'wait', requeueAfterMs: 30 * 60_000 + 5000 },
    },
    {
      name: 'wait: refreshInterval "0s" and synced: never again until a change',
      o: { refreshMs: 0 },
      want: { decision: 'wait' },
    },
    { name: 'sync: never synced', o: { status: {} }, want: { decision: 'sync' } },
    { name: 'sync: the spec or its metadata changed', o: { resourceVersion: '2-abc' }, want: { decision: 'sync' } },
    {
      name: 'sync: the refresh interval passed',
      o: { status: { ...synced, refreshTime: '2026-01-01T10:59:00Z' } },
      want: { decision: 'sync' },
    },
  ];
  for (const row of rows) {
    void test(row.name, () => {
      assert.deepEqual(planPushSecret(observed(row.o)), row.want);
    });
  }

  void test("refuse: admission's re-check refuses it: InvalidSpec naming the findings, nothing pushed", () => {
    const plan = planPushSecret(
      observed({
        status: {},
        denials: 'spec.data[0].match.remoteRef.remoteKey: outside the namespace (rule eso.ps.vault-path)',
      }),
    );
    assert.equal(plan.decision, 'refuse');
    assert.ok(
      plan.decision === 'refuse' &&
        plan.error.reason === 'InvalidSpec' &&
        /^refused: spec\.data\[0\]/.test(plan.error.message),
    );
  });

  void test('the finalizer follows deletionPolicy (Delete: on; None or unset: off)', () => {
    assert.deepEqual(
      [wantsFinalizer('Delete'), wantsFinalizer('None'), wantsFinalizer(undefined)],
      [true, false, false],
    );
  });

  void test('a retry: backoff for a Vault outage or a render limit; else the next refresh, at most 5 min, 1 min for "0s"', () => {
    assert.deepEqual(pushRetry(true, HOUR), { kind: 'backoff' });
    assert.deepEqual(pushRetry(false, HOUR), { kind: 'after', ms: 300_000 });
    assert.deepEqual(pushRetry(false, 30_000), { kind: 'after', ms: 30_000 });
    assert.deepEqual(pushRetry(false, 0), { kind: 'after', ms: 60_000 });
  });
});

void describe('planRemotePush: one row per decision', () => {
  const id = 'team-a/app';
  const whole: PushSecretData = { match: { secretKey: 'creds', remoteRef: { remoteKey: 'team-a/app' } } };
  const prop: PushSecretData = {
    match: { secretKey: 'user', remoteRef: { remoteKey: 'team-a/app', property: 'user' } },
  };
  const ours = { 'managed-by': 'external-secrets', 'vaultgate.io/pushed-by': id };
  const esos = { 'managed-by': 'external-secrets' };
  const value = Buffer.from('{"u":"x"}');

  void test('create: nothing there: data and both markers', () => {
    assert.deepEqual(planRemotePush({}, whole, value, id, false), {
      kind: 'write',
      markers: ours,
      markersAction: 'create',
      body: { u: 'x' },
      writeData: true,
      dataAction: 'create',
    });
  });
  void test('update: ours, another value', () => {
    const plan = planRemotePush({ data: { u: 'old' }, customMetadata: ours }, whole, value, id, false);
    assert.deepEqual(plan, {
      kind: 'write',
      markers: ours,
      markersAction: 'update',
      body: { u: 'x' },
      writeData: true,
      dataAction: 'update',
    });
  });
  void test('update: a property set, the others kept', () => {
    const plan = planRemotePush(
      { data: { user: 'old', pass: 'p' }, customMetadata: ours },
      prop,
      Buffer.from('new'),
      id,
      false,
    );
    assert.ok(plan.kind === 'write' && plan.writeData);
    assert.deepEqual(plan.kind === 'write' && plan.body, { user: 'new', pass: 'p' });
  });
  void test('noop: ours, the value already there', () => {
    assert.deepEqual(planRemotePush({ data: { u: 'x' }, customMetadata: ours }, whole, value, id, false), {
      kind: 'noop',
    });
  });
  void test('adopt: ESO pushed this value: only the marker naming this PushSecret is written', () => {
    assert.deepEqual(
      planRemotePush({ data: { u: 'x' }, customMetadata: { ...esos, team: 't' } }, whole, value, id, false),
      {
        kind: 'write',
        markers: { ...esos, team: 't', 'vaultgate.io/pushed-by': id },
        markersAction: 'update',
        body: { u: 'x' },
        writeData: false,
        dataAction: 'update',
      },
    );
  });
  void test('exists: updatePolicy IfNotExists and a value is there: left as it is', () => {
    assert.deepEqual(planRemotePush({ data: { u: 'old' }, customMetadata: ours }, whole, value, id, true), {
      kind: 'exists',
    });
  });
  void test("leave foreign: a secret without ESO's managed-by marker is never overwritten", () => {
    assert.throws(
      () => planRemotePush({ data: { u: 'theirs' }, customMetadata: {} }, whole, value, id, false),
      /secret not managed by external-secrets/,
    );
  });
});

void describe('PushSecret status', () => {
  void test("Synced: the refresh clock, what was pushed, Ready only (ESO's CRD), its transition time kept while True", () => {
    const before = {
      conditions: [
        {
          type: 'Ready',
          status: 'True' as const,
          reason: 'Synced',
          message: 'x',
          lastTransitionTime: '2025-12-31T00:00:00Z',
        },
        {
          type: 'Other',
          status: 'True' as const,
          reason: 'R',
          message: '',
          lastTransitionTime: '2025-12-31T00:00:00Z',
        },
      ],
    };
    const s = syncedStatus(before, '2-abc', {}, true, NOW);
    assert.equal(s.refreshTime, '2026-01-01T12:00:00Z');
    assert.equal(s.syncedResourceVersion, '2-abc');
    assert.deepEqual(s.conditions, [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Synced',
        message: 'PushSecret synced successfully. Existing secrets in providers unchanged.',
        lastTransitionTime: '2025-12-31T00:00:00Z',
      },
    ]);
  });
  void test('Errored: the message, the last sync kept, what was pushed before the failure recorded', () => {
    const pushed = { 'SecretStore/vault': {} };
    const s = failedStatus({ ...synced, syncedPushSecrets: {} }, 'set secret failed: boom', NOW, pushed);
    assert.equal(s.refreshTime, synced.refreshTime);
    assert.deepEqual(s.syncedPushSecrets, pushed);
    assert.deepEqual(
      s.conditions?.map((c) => [c.status, c.reason, c.message, c.lastTransitionTime]),
      [['False', 'Errored', 'set secret failed: boom', '2026-01-01T12:00:00Z']],
    );
  });
});
