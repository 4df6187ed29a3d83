// The rollout opt-in annotation on an ExternalSecret: kind/name pairs, parsed once for admission and
// the rollout coordinator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { externalSecretRolloutTargets, ROLLOUT_TARGETS_ANNOTATION } from '../../eso/rollout-targets.ts';

const es = (value?: string) => ({
  metadata: value === undefined ? {} : { annotations: { [ROLLOUT_TARGETS_ANNOTATION]: value } },
});

test('no annotation: nothing to restart; a list: its workloads; a bad entry: a problem, not a guess', () => {
  assert.deepEqual(externalSecretRolloutTargets(es()), { refs: [], problems: [] });
  const parsed = externalSecretRolloutTargets(es('deployment/app,statefulset/db'));
  assert.deepEqual(parsed.problems, []);
  assert.equal(parsed.refs.length, 2);
  assert.ok(externalSecretRolloutTargets(es('pod/x')).problems.length > 0);
});
