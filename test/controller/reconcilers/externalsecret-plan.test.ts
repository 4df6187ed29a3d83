// The ExternalSecret planner, one row per decision: what it does to the target Secret, the Ready condition,
// the Event, and when it looks again, from what the reconciler observed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  GENERATOR_REVOKE_ATTEMPTS,
  generatorLookAgainMs,
  planExternalSecret,
  planGeneratorCredential,
  planGeneratorLeases,
  planStepFailure,
  type GeneratorCredentialObserved,
  type GeneratorCredentialStep,
  type EsDesired,
  type EsObserved,
  type EsPlan,
  type EsSettings,
  type GeneratorLeasesObserved,
  type GeneratorLeasesPlan,
  type GeneratorStateFacts,
  type TargetSecret,
} from '../../../controller/reconcilers/externalsecret-plan.ts';
import type { ErrorOutcome } from '../../../controller/reconcilers/error-policy.ts';

const S: EsSettings = {
  missingTargetRetryMs: 30_000,
  coalesceWindowMs: 30_000,
  refreshWindowFraction: 0.2,
  maxRefreshWindowMs: 900_000,
};
const D: EsDesired = {
  namespace: 'team-a',
  targetName: 'db',
  creationPolicy: 'Owner',
  deletionPolicy: 'Retain',
  intervalMs: 3_600_000,
  adopt: false,
};
const OURS: TargetSecret = {
  createdByUs: true,
  controlledByUs: true,
  controlledByOther: false,
  valid: true,
  editedByHand: false,
};
const FOREIGN: TargetSecret = {
  createdByUs: false,
  controlledByUs: false,
  controlledByOther: false,
  valid: false,
  editedByHand: false,
};
const RV = '3-abc';
const due = (over: Partial<EsObserved['refresh']> = {}): EsObserved['refresh'] => ({
  due: true,
  readyThisGeneration: false,
  currentRv: RV,
  generation: 3,
  ...over,
});
const O: EsObserved = { anotherControllersStore: false, refresh: due() };
const fetched = (over: Partial<EsObserved> = {}): EsObserved => ({
  ...O,
  target: OURS,
  provider: { keys: 2, missing: 0 },
  rendered: { matches: false },
  ...over,
});
const vaultDown: ErrorOutcome = {
  reason: 'VaultUnavailable',
  message: 'kv.read: Vault unreachable (ECONNREFUSED)',
  retry: { kind: 'backoff' },
};
const badTemplate: ErrorOutcome = {
  reason: 'SecretSyncedError',
  message: 'template: data.x:1: function "nope" not defined',
  retry: { kind: 'never' },
};
const synced = (message = 'secret synced', reason = 'SecretSynced'): EsPlan['status'] => ({
  ready: { status: 'True', reason, message },
  refreshed: true,
});
const failed = (reason: string, message: string): Pick<EsPlan, 'status' | 'events' | 'steps'> => ({
  steps: [],
  status: { ready: { status: 'False', reason, message }, refreshed: false },
  events: [{ type: 'Warning', reason: 'UpdateFailed', note: message }],
});

const rows: Array<{ what: string; d?: Partial<EsDesired>; o: EsObserved; plan: EsPlan }> = [
  {
    what: "a store of another controller class: another controller's ExternalSecret, untouched",
    o: { ...O, anotherControllersStore: true, target: FOREIGN },
    plan: { decision: 'skip', steps: [], events: [], then: 'done' },
  },
  {
    what: 'refused by admission: Ready False, not retried',
    d: { refused: 'refused: spec.data[0].remoteRef.key: ... (rule eso.es.key)' },
    o: O,
    plan: {
      decision: 'refuse',
      ...failed('SecretSyncedError', 'refused: spec.data[0].remoteRef.key: ... (rule eso.es.key)'),
      then: 'done',
    },
  },
  {
    what: 'a target someone else created: left untouched (SecretNotOwned) before Vault is read',
    o: { ...O, target: FOREIGN },
    plan: {
      decision: 'leave-foreign',
      ...failed(
        'SecretNotOwned',
        'Secret team-a/db already exists and was not created by vaultgate for this ExternalSecret (no owner reference to it, no reconcile.external-secrets.io/created-by or vaultgate.io/created-for label naming it); it is left untouched. To let this ExternalSecret take it over (its other keys are removed, and it is deleted with the ExternalSecret), annotate the ExternalSecret vaultgate.io/adopt-secret: "true"; to add keys to it instead, use creationPolicy Merge',
      ),
      then: { kind: 'never' },
    },
  },
  {
    what: 'in sync and not due: nothing until the next refresh',
    o: { ...O, target: OURS, refresh: due({ due: false, readyThisGeneration: true, nextMs: 1000 }) },
    plan: { decision: 'not-due', steps: [], events: [], then: 'next' },
  },
  {
    what: 'not due, but the target was edited (not valid): read',
    o: { ...O, target: { ...OURS, valid: false }, refresh: due({ due: false, readyThisGeneration: true }) },
    plan: { decision: 'read', steps: [{ read: { maxAgeMs: 30_000 } }], events: [], then: 'done' },
  },
  {
    what: 'a new or changed spec: read, sharing reads of the coalesce window',
    o: O,
    plan: { decision: 'read', steps: [{ read: { maxAgeMs: 30_000 } }], events: [], then: 'done' },
  },
  {
    what: 'a periodic refresh: read, sharing reads of the jitter window',
    o: { ...O, target: OURS, refresh: due({ syncedRv: RV }) },
    plan: { decision: 'read', steps: [{ read: { maxAgeMs: 720_000 } }], events: [], then: 'done' },
  },
  {
    what: 'a force-sync: a fresh read, shared only with the same request',
    o: { ...O, target: OURS, refresh: due({ syncedRv: '3-old', forceSyncValue: 'now' }) },
    plan: {
      decision: 'read',
      steps: [{ read: { maxAgeMs: 0, shareTag: 'external-secrets.io/force-sync=now' } }],
      events: [],
      then: 'done',
    },
  },
  {
    what: 'Vault failed: Ready False, the Secret untouched, retried with backoff',
    o: { ...O, target: OURS, provider: { failed: vaultDown } },
    plan: { decision: 'failed', ...failed('SecretSyncedError', vaultDown.message), then: { kind: 'backoff' } },
  },
  {
    what: 'a templateFrom source missing: waited for, at most a minute',
    o: {
      ...O,
      target: OURS,
      provider: { keys: 1, missing: 0 },
      rendered: {
        failed: { ...badTemplate, message: 'templateFrom[0]: ConfigMap tpl not found' },
        templateSourceMissing: true,
      },
    },
    plan: {
      decision: 'failed',
      ...failed('TemplateSourceNotFound', 'templateFrom[0]: ConfigMap tpl not found'),
      then: { kind: 'after', ms: 60_000 },
    },
  },
  {
    what: 'a template that fails: not retried before the next refresh',
    o: { ...O, target: OURS, provider: { keys: 1, missing: 0 }, rendered: { failed: badTemplate } },
    plan: { decision: 'failed', ...failed('SecretSyncedError', badTemplate.message), then: { kind: 'never' } },
  },
  {
    what: 'no data, deletionPolicy Delete, our Owner Secret: deleted',
    d: { deletionPolicy: 'Delete' },
    o: { ...O, target: OURS, provider: { keys: 0, missing: 1 } },
    plan: {
      decision: 'delete',
      steps: ['delete-secret'],
      status: synced('secret deleted: the provider has no data (deletionPolicy Delete)', 'SecretDeleted'),
      events: [
        {
          type: 'Normal',
          reason: 'Deleted',
          note: 'deleted Secret db: the provider has no data any more (deletionPolicy Delete)',
        },
      ],
      then: 'schedule',
    },
  },
  {
    what: 'no data, deletionPolicy Delete, a Secret we do not control: nothing deleted',
    d: { deletionPolicy: 'Delete', creationPolicy: 'Orphan' },
    o: { ...O, target: { ...OURS, controlledByUs: false }, provider: { keys: 0, missing: 0 } },
    plan: {
      decision: 'delete',
      steps: [],
      status: synced('secret deleted: the provider has no data (deletionPolicy Delete)', 'SecretDeleted'),
      events: [],
      then: 'schedule',
    },
  },
  {
    what: 'no data, deletionPolicy Retain: the Secret is kept',
    o: { ...O, target: OURS, provider: { keys: 0, missing: 0 } },
    plan: {
      decision: 'keep',
      steps: [],
      status: synced('the provider returned no data; the existing Secret is kept (deletionPolicy Retain)'),
      events: [],
      then: 'schedule',
    },
  },
  {
    what: 'data read: render it',
    o: { ...O, target: OURS, provider: { keys: 2, missing: 0 } },
    plan: { decision: 'render', steps: ['render'], events: [], then: 'done' },
  },
  {
    what: 'creationPolicy None: synced, nothing written',
    d: { creationPolicy: 'None' },
    o: fetched({ target: undefined }),
    plan: {
      decision: 'synced-none',
      steps: [],
      status: synced('secret synced (creationPolicy None: no Secret is written)'),
      events: [],
      then: 'schedule',
    },
  },
  {
    what: 'Merge without a target: SecretMissing, retried after the Merge delay',
    d: { creationPolicy: 'Merge' },
    o: fetched({ target: undefined }),
    plan: {
      decision: 'target-missing',
      ...failed(
        'SecretMissing',
        'target Secret db does not exist; creationPolicy Merge only adds keys to an existing Secret',
      ),
      then: { kind: 'after', ms: 30_000 },
    },
  },
  {
    what: 'a target controlled by another owner: not taken over',
    o: fetched({ target: { ...OURS, controlledByUs: false, controlledByOther: true } }),
    plan: {
      decision: 'controlled-by-other',
      ...failed('SecretSyncedError', 'Secret db is controlled by another owner; vaultgate does not take it over'),
      then: { kind: 'never' },
    },
  },
  {
    what: 'the target already is the rendered Secret: no write (finalizers only)',
    o: fetched({ rendered: { matches: true } }),
    plan: { decision: 'noop', steps: ['add-template-finalizers'], status: synced(), events: [], then: 'schedule' },
  },
  {
    what: 'no target: created',
    o: fetched({ target: undefined }),
    plan: {
      decision: 'create',
      steps: [{ write: 'Owner', create: true }, 'add-template-finalizers'],
      status: synced(),
      events: [],
      then: 'schedule',
    },
  },
  {
    what: 'our target, out of date: updated, no Event',
    o: fetched(),
    plan: {
      decision: 'update',
      steps: [{ write: 'Owner', create: false }, 'add-template-finalizers'],
      status: synced(),
      events: [],
      then: 'schedule',
    },
  },
  {
    what: 'our target, edited by hand: repaired, with an Event',
    o: fetched({ target: { ...OURS, valid: false, editedByHand: true } }),
    plan: {
      decision: 'update',
      steps: [{ write: 'Owner', create: false }, 'add-template-finalizers'],
      status: synced(),
      events: [
        {
          type: 'Normal',
          reason: 'Repaired',
          note: 'Secret db was changed outside vaultgate; its data was restored from the provider',
        },
      ],
      then: 'schedule',
    },
  },
  {
    what: 'a foreign target with the adopt annotation: adopted',
    d: { adopt: true },
    o: fetched({ target: FOREIGN }),
    plan: {
      decision: 'adopt',
      steps: [{ write: 'Owner', create: false }, 'add-template-finalizers'],
      status: synced(),
      events: [],
      then: 'schedule',
    },
  },
  {
    what: "Merge into someone else's Secret",
    d: { creationPolicy: 'Merge' },
    o: fetched({ target: FOREIGN }),
    plan: {
      decision: 'merge',
      steps: [{ write: 'Merge', create: false }, 'add-template-finalizers'],
      status: synced(),
      events: [],
      then: 'schedule',
    },
  },
  {
    what: 'CreateOrMerge without a target: created as Orphan',
    d: { creationPolicy: 'CreateOrMerge' },
    o: fetched({ target: undefined }),
    plan: {
      decision: 'create',
      steps: [{ write: 'Orphan', create: true }, 'add-template-finalizers'],
      status: synced(),
      events: [],
      then: 'schedule',
    },
  },
  {
    what: 'CreateOrMerge with a target: merged',
    d: { creationPolicy: 'CreateOrMerge' },
    o: fetched({ target: FOREIGN }),
    plan: {
      decision: 'merge',
      steps: [{ write: 'Merge', create: false }, 'add-template-finalizers'],
      status: synced(),
      events: [],
      then: 'schedule',
    },
  },
];

for (const row of rows) {
  test(`plan: ${row.what}`, () => {
    const d = { ...D, ...row.d };
    assert.deepEqual(planExternalSecret(d, row.o, S), row.plan);
    assert.deepEqual(planExternalSecret(d, row.o, S), row.plan, 'the same observations give the same plan');
  });
}

const conflict: ErrorOutcome = {
  reason: 'KubernetesConflict',
  message: 'the object has been modified',
  retry: { kind: 'backoff' },
};
const invalid: ErrorOutcome = {
  reason: 'KubernetesInvalid',
  message: 'Secret "db" is invalid: data[a b]: Invalid value',
  retry: { kind: 'backoff' },
};
const stepRows: Array<{
  what: string;
  d?: Partial<EsDesired>;
  step: Parameters<typeof planStepFailure>[1];
  exists: boolean;
  f: Parameters<typeof planStepFailure>[3];
  plan: EsPlan;
}> = [
  {
    what: 'a create answered AlreadyExists: someone else created it, left untouched',
    step: { write: 'Owner', create: true },
    exists: false,
    f: { failed: conflict, notFound: false, alreadyExists: true },
    plan: {
      decision: 'write-failed',
      ...failed(
        'SecretNotOwned',
        'Secret team-a/db was created by someone else while this ExternalSecret was creating it; it is left untouched',
      ),
      then: { kind: 'after', ms: 30_000 },
    },
  },
  {
    what: 'a Merge target gone while writing: SecretMissing',
    d: { creationPolicy: 'Merge' },
    step: { write: 'Merge', create: false },
    exists: true,
    f: { failed: conflict, notFound: true, alreadyExists: false },
    plan: {
      decision: 'write-failed',
      ...failed('SecretMissing', 'target Secret db disappeared'),
      then: { kind: 'after', ms: 30_000 },
    },
  },
  {
    what: "any other write failure (the apiserver's Invalid): ESO's reason SecretSyncedError, the message says what, retried after the Merge delay",
    step: { write: 'Owner', create: false },
    exists: true,
    f: { failed: invalid, notFound: false, alreadyExists: false },
    plan: {
      decision: 'write-failed',
      ...failed('SecretSyncedError', 'cannot write Secret db: Secret "db" is invalid: data[a b]: Invalid value'),
      then: { kind: 'after', ms: 30_000 },
    },
  },
  {
    what: 'adding finalizers failed: as a write',
    step: 'add-template-finalizers',
    exists: true,
    f: { failed: conflict, notFound: false, alreadyExists: false },
    plan: {
      decision: 'write-failed',
      ...failed('SecretSyncedError', 'cannot write Secret db: the object has been modified'),
      then: { kind: 'after', ms: 30_000 },
    },
  },
  {
    what: 'deleting the target failed: as a failed read',
    step: 'delete-secret',
    exists: true,
    f: { failed: conflict, notFound: false, alreadyExists: false },
    plan: {
      decision: 'failed',
      ...failed('SecretSyncedError', 'the object has been modified'),
      then: { kind: 'backoff' },
    },
  },
];

for (const row of stepRows) {
  test(`step failure: ${row.what}`, () => {
    assert.deepEqual(planStepFailure({ ...D, ...row.d }, row.step, row.exists, row.f, S), row.plan);
  });
}

// The generators' leases around a sync (ESO's VaultDynamicSecret generator): when the finalizer is on,
// which kept leases are revoked, and when a failed revocation stops holding the deletion.
const L: GeneratorLeasesObserved = {
  deleting: false,
  serving: true,
  finalizer: true,
  leased: [0],
  syncDue: false,
  retries: 0,
};
const state = (index: number, leaseIds = [`db/creds/app/L${index}`]): GeneratorStateFacts => ({
  name: `esgen-uid-${index}`,
  index,
  leaseIds,
});
const leasePlan = (p: Partial<GeneratorLeasesPlan>): GeneratorLeasesPlan => ({
  list: false,
  finalizer: true,
  revoke: [],
  again: false,
  onRevokeFailure: 'retry',
  ...p,
});
const leaseRows: Array<{ what: string; o: Partial<GeneratorLeasesObserved>; plan: GeneratorLeasesPlan }> = [
  {
    what: 'a generator named, no finalizer yet: it goes on (before the sync mints), nothing listed',
    o: { finalizer: false, syncDue: true },
    plan: leasePlan({}),
  },
  {
    what: 'no generator, no finalizer (every other ExternalSecret): none wanted, nothing listed',
    o: { finalizer: false, leased: [] },
    plan: leasePlan({ finalizer: false }),
  },
  {
    what: 'finalizer on, generator named, no sync due: nothing listed (no Secret LIST at each renewal)',
    o: {},
    plan: leasePlan({}),
  },
  {
    what: 'finalizer on, a sync due (a spec change): the state Secrets are listed',
    o: { syncDue: true },
    plan: leasePlan({ list: true }),
  },
  {
    what: 'the entry still names the generator: its state is kept',
    o: { syncDue: true, states: [state(0)] },
    plan: leasePlan({}),
  },
  {
    what: 'dataFrom[1] no longer names a generator: its leases revoked after the sync, the finalizer stays for dataFrom[0]',
    o: { syncDue: true, states: [state(0), state(1)] },
    plan: leasePlan({ revoke: [state(1)] }),
  },
  {
    what: 'the generatorRef removed: listed even when no sync is due',
    o: { leased: [] },
    plan: leasePlan({ list: true }),
  },
  {
    what: 'the generatorRef removed: its lease revoked, the finalizer kept until that is done, then looked at again',
    o: { leased: [], states: [state(0)] },
    plan: leasePlan({ revoke: [state(0)], again: true }),
  },
  {
    what: 'the generatorRef removed, nothing left to revoke: the finalizer comes off',
    o: { leased: [], states: [] },
    plan: leasePlan({ finalizer: false }),
  },
  {
    what: 'refused by admission (or another controller store): leases kept as they are, the finalizer too',
    o: { serving: false, leased: [], syncDue: true },
    plan: leasePlan({}),
  },
  {
    what: 'deleted without our finalizer: nothing to revoke (the state Secrets go with it)',
    o: { deleting: true, finalizer: false },
    plan: leasePlan({ finalizer: false }),
  },
  {
    what: 'deleted: the state Secrets are listed',
    o: { deleting: true },
    plan: leasePlan({ list: true }),
  },
  {
    what: 'deleted: every kept lease revoked (current and replaced ones), not a state with none',
    o: { deleting: true, states: [state(0, ['L2', 'L1']), state(1, [])] },
    plan: leasePlan({ revoke: [state(0, ['L2', 'L1'])] }),
  },
  {
    what: 'deleted, revocation failed 12 times: retried once more',
    o: { deleting: true, states: [state(0)], retries: GENERATOR_REVOKE_ATTEMPTS - 2 },
    plan: leasePlan({ revoke: [state(0)] }),
  },
  {
    what: 'deleted, the last attempt: a failure gives up (Warning Event), the deletion goes on',
    o: { deleting: true, states: [state(0)], retries: GENERATOR_REVOKE_ATTEMPTS - 1 },
    plan: leasePlan({ revoke: [state(0)], onRevokeFailure: 'give-up' }),
  },
];
for (const row of leaseRows) {
  test(`generator leases: ${row.what}`, () => {
    assert.deepEqual(planGeneratorLeases({ ...L, ...row.o }), row.plan);
  });
}

// A VaultDynamicSecret generator's credential at a sync (`generate`) and between syncs (`maintain`): minted
// only at a sync, renewed at either, a replaced lease retired (unless Vault lost it), the Event it implies.
const T0 = Date.parse('2026-12-03T08:00:00Z');
const LEASE = { id: 'L1', durationSeconds: 60, renewable: true, issuedAt: T0, expiresAt: T0 + 60_000, source: 's' };
const C: GeneratorCredentialObserved = {
  mode: 'generate',
  now: T0,
  generator: { index: 0, label: 'VaultDynamicSecret db' },
  source: 's',
  kept: { lease: LEASE, previous: [] },
  stored: true,
};
const issued = (reason?: string): GeneratorCredentialStep & { op: 'mint' } => ({
  op: 'mint',
  reason: reason ?? 'Initial',
  retire: reason !== undefined && reason !== 'LeaseLost',
  event: {
    type: 'Normal',
    reason: reason ? 'CredentialRotated' : 'CredentialIssued',
    note: `spec.dataFrom[0]: generator VaultDynamicSecret db issued a new leased credential${reason ? ` (${reason})` : ''}`,
  },
});
const credentialRows: Array<{ what: string; o: Partial<GeneratorCredentialObserved>; step: GeneratorCredentialStep }> =
  [
    {
      what: 'first sync (no state Secret): minted, CredentialIssued',
      o: { kept: { previous: [] }, stored: false },
      step: issued(),
    },
    {
      what: 'no state Secret between syncs: nothing minted, no sync asked (the first sync mints)',
      o: { mode: 'maintain', kept: { previous: [] }, stored: false },
      step: { op: 'leave-to-sync', syncNeeded: false },
    },
    { what: 'a sync 5 s after issue: the kept credential, as it is', o: { now: T0 + 5_000 }, step: { op: 'keep' } },
    {
      what: 'a sync past the renewal point: renewed for the lease plus 2 min, not minted',
      o: { now: T0 + 47_000 },
      step: { op: 'renew', incrementSeconds: 180 },
    },
    {
      what: 'between syncs past the renewal point: renewed too',
      o: { mode: 'maintain', now: T0 + 47_000 },
      step: { op: 'renew', incrementSeconds: 180 },
    },
    {
      what: 'the generator changed (provider, path, parameters): minted, the old lease retired, CredentialRotated',
      o: { now: T0 + 10_000, source: 'other' },
      step: issued('SpecChanged'),
    },
    {
      what: 'the generator changed, between syncs: the sync is asked for (it mints)',
      o: { mode: 'maintain', now: T0 + 10_000, source: 'other' },
      step: { op: 'leave-to-sync', syncNeeded: true },
    },
    {
      what: 'the lease expired unrenewed: minted, the lost lease not retired (nothing to revoke)',
      o: { now: T0 + 61_000 },
      step: issued('LeaseLost'),
    },
  ];
for (const row of credentialRows) {
  test(`generator credential: ${row.what}`, () => {
    assert.deepEqual(planGeneratorCredential({ ...C, ...row.o }).step, row.step);
  });
}

test('generator credential: looked at again as planned, or as the rewritten leases are (a replacement due: in 1 s)', () => {
  const known = { ...C, now: T0 + 30_000, kept: { lease: { ...LEASE, maxExpiresAt: T0 + 600_000 }, previous: [] } };
  const planned = planGeneratorCredential(known).lifecycle;
  const wait = generatorLookAgainMs(known, planned);
  assert.ok(wait !== undefined && wait >= 10_000 && wait <= 16_300, `${wait}`);
  assert.equal(generatorLookAgainMs(known, planned, { lease: { ...LEASE, expiresAt: T0 }, previous: [] }), 1_000);
});
