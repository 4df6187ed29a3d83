// The VaultGuardrail status planner, as a table: what `kubectl get vaultguardrails` shows (READY, the
// namespace count) and the floor the guardrail leaves in the namespaces it selects.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  GUARDRAIL_REASONS,
  planGuardrailStatus,
  type GuardrailObservation,
  type VaultGuardrailObject,
} from '../../../controller/reconcilers/vaultguardrail.ts';
import { deny } from '../../../webhook/rules/finding.ts';

const NOW = new Date('2026-01-02T03:04:05Z');
const NAMESPACES = [
  { name: 'team-a', labels: { tier: 'prod' } },
  { name: 'team-b', labels: { tier: 'dev' } },
  { name: 'legacy' },
];
const DEFAULT_FLOOR = {
  forbiddenCapabilities: ['sudo'],
  forbiddenPaths: ['sys/*', 'auth/*', '*'],
  allowedPaths: ['secret/data/{{namespace}}/*', 'secret/metadata/{{namespace}}/*'],
};

const guardrail = (spec: Record<string, unknown>, extra: Partial<VaultGuardrailObject> = {}): VaultGuardrailObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultGuardrail',
  metadata: { name: 'g', generation: 3 },
  spec,
  ...extra,
});

interface Case {
  name: string;
  observed: GuardrailObservation;
  selected: number;
  ready: { status: 'True' | 'False'; reason: string; message: RegExp };
  floor?: Record<string, unknown>;
}

const cases: Case[] = [
  {
    name: 'no selector: every watched namespace, the default floor',
    observed: { guardrail: guardrail({}), namespaces: NAMESPACES, denials: [] },
    selected: 3,
    ready: { status: 'True', reason: GUARDRAIL_REASONS.effective, message: /^enforce in 3 namespaces$/ },
    floor: DEFAULT_FLOOR,
  },
  {
    name: 'matchLabels picks the labelled namespace only',
    observed: {
      guardrail: guardrail({ mode: 'warn', namespaceSelector: { matchLabels: { tier: 'prod' } } }),
      namespaces: NAMESPACES,
      denials: [],
    },
    selected: 1,
    ready: { status: 'True', reason: GUARDRAIL_REASONS.effective, message: /^warn in 1 namespace$/ },
    floor: DEFAULT_FLOOR,
  },
  {
    name: 'matchExpressions NotIn counts namespaces without the label',
    observed: {
      guardrail: guardrail({
        namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['prod'] }] },
      }),
      namespaces: NAMESPACES,
      denials: [],
    },
    selected: 2,
    ready: { status: 'True', reason: GUARDRAIL_REASONS.effective, message: /^enforce in 2 namespaces$/ },
  },
  {
    name: "the apiserver's kubernetes.io/metadata.name label selects an unlabelled namespace",
    observed: {
      guardrail: guardrail({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'legacy' } } }),
      namespaces: NAMESPACES,
      denials: [],
    },
    selected: 1,
    ready: { status: 'True', reason: GUARDRAIL_REASONS.effective, message: /^enforce in 1 namespace$/ },
  },
  {
    name: 'a selector matching nothing is effective and says so',
    observed: {
      guardrail: guardrail({ namespaceSelector: { matchLabels: { tier: 'staging' } } }),
      namespaces: NAMESPACES,
      denials: [],
    },
    selected: 0,
    ready: { status: 'True', reason: GUARDRAIL_REASONS.effective, message: /^selects no namespace$/ },
  },
  {
    name: 'enforce relaxFloor lifts those parts of the floor (allowedPaths gone with namespace-subtree)',
    observed: {
      guardrail: guardrail({ relaxFloor: ['sys-paths', 'sudo', 'namespace-subtree'] }),
      namespaces: NAMESPACES,
      denials: [],
    },
    selected: 3,
    ready: {
      status: 'True',
      reason: GUARDRAIL_REASONS.effective,
      message: /floor relaxed there: namespace-subtree, sudo, sys-paths$/,
    },
    floor: { relaxed: ['namespace-subtree', 'sudo', 'sys-paths'], forbiddenPaths: ['auth/*', '*'] },
  },
  {
    name: "an audit guardrail's relaxFloor is not honoured: the floor stays whole",
    observed: { guardrail: guardrail({ mode: 'audit', relaxFloor: ['sudo'] }), namespaces: NAMESPACES, denials: [] },
    selected: 3,
    ready: { status: 'True', reason: GUARDRAIL_REASONS.effective, message: /^audit in 3 namespaces$/ },
    floor: DEFAULT_FLOOR,
  },
  {
    name: 'admission denies the stored guardrail: Ready False naming field and rule',
    observed: {
      guardrail: guardrail({ forbiddenPaths: ['sys/../x'] }),
      namespaces: NAMESPACES,
      denials: [deny('spec.forbiddenPaths[0]', 'vaultguardrail.path-template', '".." is not allowed in a path')],
    },
    selected: 3,
    ready: {
      status: 'False',
      reason: GUARDRAIL_REASONS.invalid,
      message: /^spec\.forbiddenPaths\[0\]: .* \(rule vaultguardrail\.path-template\)$/,
    },
  },
  {
    name: 'no namespace watched yet',
    observed: { guardrail: guardrail({}), namespaces: [], denials: [] },
    selected: 0,
    ready: { status: 'True', reason: GUARDRAIL_REASONS.effective, message: /^selects no namespace$/ },
  },
];

void describe('VaultGuardrail status plan', () => {
  for (const c of cases) {
    void test(c.name, () => {
      const status = planGuardrailStatus(c.observed, NOW);
      assert.equal(status.selectedNamespaces, c.selected);
      assert.equal(status.observedGeneration, 3);
      const ready = status.conditions?.find((x) => x.type === 'Ready');
      assert.ok(ready, 'a Ready condition');
      assert.equal(ready.status, c.ready.status);
      assert.equal(ready.reason, c.ready.reason);
      assert.match(ready.message, c.ready.message);
      assert.equal(ready.observedGeneration, 3);
      if (c.floor) assert.deepEqual(status.floor, c.floor);
    });
  }

  void test('planning again with the same observation yields the same status (no transition, no write)', () => {
    const observed: GuardrailObservation = { guardrail: guardrail({}), namespaces: NAMESPACES, denials: [] };
    const first = planGuardrailStatus(observed, NOW);
    const again = planGuardrailStatus(
      { ...observed, guardrail: guardrail({}, { status: first }) },
      new Date(NOW.getTime() + 60_000),
    );
    assert.deepEqual(again, first);
  });

  void test('a namespace count change keeps lastTransitionTime; Ready turning False moves it', () => {
    const before = planGuardrailStatus({ guardrail: guardrail({}), namespaces: NAMESPACES, denials: [] }, NOW);
    const later = new Date(NOW.getTime() + 60_000);
    const fewer = planGuardrailStatus(
      { guardrail: guardrail({}, { status: before }), namespaces: NAMESPACES.slice(0, 1), denials: [] },
      later,
    );
    assert.equal(fewer.selectedNamespaces, 1);
    assert.equal(fewer.conditions?.[0]?.lastTransitionTime, '2026-01-02T03:04:05Z');
    const denied = planGuardrailStatus(
      {
        guardrail: guardrail({}, { status: before }),
        namespaces: NAMESPACES,
        denials: [deny('spec.mode', 'vaultguardrail.mode', 'bad')],
      },
      later,
    );
    assert.equal(denied.conditions?.[0]?.lastTransitionTime, '2026-01-02T03:05:05Z');
  });
});
