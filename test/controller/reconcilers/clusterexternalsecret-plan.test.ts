// The ClusterExternalSecret planner, one row per decision: which ExternalSecrets it deletes and applies,
// and what each selected namespace reports, from what the reconciler observed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  planClusterExternalSecret,
  type CesDesired,
  type CesObserved,
  type CesPlan,
} from '../../../controller/reconcilers/clusterexternalsecret-plan.ts';
import { ALREADY_EXISTS } from '../../../eso/cluster-external-secret.ts';

const D: CesDesired = { esName: 'db', namespaces: ['team-a', 'team-b'], refreshMs: 3_600_000 };
const O: CesObserved = {
  anotherControllersStore: false,
  controlled: [],
  selected: [{ namespace: 'team-a' }, { namespace: 'team-b' }],
};
const sync = (over: Partial<CesPlan>): CesPlan => ({
  decision: 'sync',
  deletes: [],
  namespaces: [],
  events: [],
  requeueAfterMs: 3_600_000,
  ...over,
});

const rows: Array<{ what: string; d?: Partial<CesDesired>; o: CesObserved; plan: CesPlan }> = [
  {
    what: "a store of another controller class: another controller's, untouched",
    o: { ...O, anotherControllersStore: true, controlled: [{ namespace: 'team-c', name: 'db' }] },
    plan: { decision: 'skip', deletes: [], namespaces: [], events: [] },
  },
  {
    what: 'refused by admission: Ready False and an Event, nothing created or deleted',
    d: { refused: 'refused: spec.namespaces: ... (rule eso.ces.x)' },
    o: { ...O, controlled: [{ namespace: 'team-c', name: 'db' }] },
    plan: {
      decision: 'refuse',
      deletes: [],
      namespaces: [],
      refusedMessage: 'refused: spec.namespaces: ... (rule eso.ces.x)',
      events: [{ type: 'Warning', reason: 'InvalidSpec', note: 'refused: spec.namespaces: ... (rule eso.ces.x)' }],
    },
  },
  {
    what: 'nothing there yet: created in every selected namespace',
    o: O,
    plan: sync({
      namespaces: [
        { namespace: 'team-a', apply: true },
        { namespace: 'team-b', apply: true },
      ],
    }),
  },
  {
    what: 'ours and up to date: nothing written, provisioned',
    o: {
      ...O,
      selected: [
        { namespace: 'team-a', existing: { controlledByUs: true, upToDate: true } },
        { namespace: 'team-b', existing: { controlledByUs: true, upToDate: false } },
      ],
    },
    plan: sync({
      namespaces: [
        { namespace: 'team-a', apply: false },
        { namespace: 'team-b', apply: true },
      ],
    }),
  },
  {
    what: "an ExternalSecret of that name that is not ours: left alone, the namespace failed (ESO's rule)",
    o: {
      ...O,
      selected: [
        { namespace: 'team-a', existing: { controlledByUs: false, upToDate: false } },
        { namespace: 'team-b' },
      ],
    },
    plan: sync({
      namespaces: [
        { namespace: 'team-a', apply: false, error: ALREADY_EXISTS },
        { namespace: 'team-b', apply: true },
      ],
    }),
  },
  {
    what: "refused by a namespace's own admission: not written there, the namespace failed",
    o: {
      ...O,
      selected: [
        { namespace: 'team-a', denied: 'spec.secretStoreRef: ... (rule guardrail.x)' },
        { namespace: 'team-b' },
      ],
    },
    plan: sync({
      namespaces: [
        {
          namespace: 'team-a',
          apply: false,
          error: 'refused in namespace team-a: spec.secretStoreRef: ... (rule guardrail.x)',
        },
        { namespace: 'team-b', apply: true },
      ],
    }),
  },
  {
    what: 'ours in a namespace no longer selected, or under an old name: deleted (uid precondition)',
    o: {
      ...O,
      controlled: [
        { namespace: 'team-a', name: 'db', uid: 'u1' },
        { namespace: 'team-c', name: 'db', uid: 'u2' },
        { namespace: 'team-b', name: 'old', uid: 'u3' },
      ],
      selected: [{ namespace: 'team-a', existing: { controlledByUs: true, upToDate: true } }, { namespace: 'team-b' }],
    },
    plan: sync({
      deletes: [
        { namespace: 'team-c', name: 'db', uid: 'u2' },
        { namespace: 'team-b', name: 'old', uid: 'u3' },
      ],
      namespaces: [
        { namespace: 'team-a', apply: false },
        { namespace: 'team-b', apply: true },
      ],
    }),
  },
  {
    what: 'no namespace selected: every one of ours deleted',
    d: { namespaces: [] },
    o: { ...O, controlled: [{ namespace: 'team-a', name: 'db', uid: 'u1' }], selected: [] },
    plan: sync({ deletes: [{ namespace: 'team-a', name: 'db', uid: 'u1' }] }),
  },
];

for (const row of rows) {
  test(`plan: ${row.what}`, () => {
    assert.deepEqual(planClusterExternalSecret({ ...D, ...row.d }, row.o), row.plan);
  });
}
