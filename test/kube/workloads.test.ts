import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isPaused, parseWorkloadRefs, rolloutState } from '../../kube/workloads.ts';
import type { KubeObject } from '../../kube/objects.ts';

const w = (generation: number, spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject => ({
  metadata: { name: 'x', namespace: 'n', generation },
  spec,
  status,
});

void describe('kube/workloads: parseWorkloadRefs', () => {
  void test('kind/name as kubectl writes it, deduplicated', () => {
    assert.deepEqual(parseWorkloadRefs(' deployment/app, statefulset/db ,ds/agent,deploy/app').refs, [
      { kind: 'Deployment', name: 'app' },
      { kind: 'StatefulSet', name: 'db' },
      { kind: 'DaemonSet', name: 'agent' },
    ]);
  });
  void test('another namespace, another kind, a bad name, no kind: each a problem naming the item', () => {
    const { refs, problems } = parseWorkloadRefs('deployment/other/app,job/x,deployment/App_1,app');
    assert.deepEqual(refs, []);
    assert.equal(problems.length, 4);
    assert.match(problems[0]!, /another namespace/);
    assert.match(problems[1]!, /kind "job" is not deployment, statefulset or daemonset/);
    assert.match(problems[2]!, /DNS-1123/);
    assert.match(problems[3]!, /not kind\/name/);
  });
  void test('bounded: more than 32 items is one problem, nothing parsed', () => {
    const { refs, problems } = parseWorkloadRefs(Array.from({ length: 33 }, (_, i) => `deployment/a${i}`).join(','));
    assert.deepEqual([refs.length, problems.length], [0, 1]);
  });
});

void describe('kube/workloads: rolloutState (kubectl rollout status)', () => {
  const done = { observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };
  void test('Deployment', () => {
    assert.equal(rolloutState('Deployment', w(2, { replicas: 2 }, done)), 'complete');
    assert.equal(rolloutState('Deployment', w(3, { replicas: 2 }, done)), 'rolling', 'generation not observed');
    assert.equal(
      rolloutState('Deployment', w(2, { replicas: 2 }, { ...done, replicas: 3 })),
      'rolling',
      'an old pod remains',
    );
    assert.equal(rolloutState('Deployment', w(2, { replicas: 2 }, { ...done, readyReplicas: 1 })), 'rolling');
    assert.equal(rolloutState('Deployment', w(2, { replicas: 2 }, { ...done, availableReplicas: 1 })), 'rolling');
    // Its template rolled out (the Deployment controller keeps NewReplicaSetAvailable), then pods went
    // unready: no rollout in progress. During a rollout the reason is ReplicaSetUpdated: still rolling.
    const progressing = (reason: string) => [{ type: 'Progressing', status: 'True', reason }];
    assert.equal(
      rolloutState(
        'Deployment',
        w(
          2,
          { replicas: 2 },
          { ...done, readyReplicas: 0, availableReplicas: 0, conditions: progressing('NewReplicaSetAvailable') },
        ),
      ),
      'unready',
    );
    assert.equal(
      rolloutState(
        'Deployment',
        w(
          2,
          { replicas: 2 },
          { ...done, readyReplicas: 1, availableReplicas: 1, conditions: progressing('ReplicaSetUpdated') },
        ),
      ),
      'rolling',
      'the last pods of a rollout not ready yet',
    );
    assert.equal(
      rolloutState(
        'Deployment',
        w(
          2,
          { replicas: 2 },
          { ...done, replicas: 3, readyReplicas: 1, conditions: progressing('NewReplicaSetAvailable') },
        ),
      ),
      'rolling',
      'an old pod remains',
    );
    assert.equal(
      rolloutState('Deployment', w(3, { replicas: 2 }, { ...done, conditions: progressing('NewReplicaSetAvailable') })),
      'rolling',
      'a new template not observed yet',
    );
    assert.equal(
      rolloutState(
        'Deployment',
        w(
          2,
          { replicas: 2 },
          {
            ...done,
            updatedReplicas: 1,
            conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
          },
        ),
      ),
      'stalled',
    );
    assert.equal(
      rolloutState(
        'Deployment',
        w(2, {}, { observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 }),
      ),
      'complete',
      'replicas default 1',
    );
    assert.ok(
      isPaused('Deployment', w(2, { paused: true }, done)) && !isPaused('StatefulSet', w(2, { paused: true }, done)),
    );
  });
  void test('StatefulSet: every pod at the update revision', () => {
    const s = {
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      currentRevision: 'r2',
      updateRevision: 'r2',
    };
    assert.equal(rolloutState('StatefulSet', w(1, { replicas: 2 }, s)), 'complete');
    assert.equal(rolloutState('StatefulSet', w(1, { replicas: 2 }, { ...s, currentRevision: 'r1' })), 'rolling');
    assert.equal(
      rolloutState('StatefulSet', w(1, { replicas: 2 }, { ...s, updatedReplicas: 0 })),
      'rolling',
      'OnDelete: pods not deleted yet',
    );
    assert.equal(
      rolloutState('StatefulSet', w(1, { replicas: 2 }, { ...s, readyReplicas: 0 })),
      'unready',
      'rolled out, then its pods went unready: a restart is not held back',
    );
    assert.equal(
      rolloutState('StatefulSet', w(1, { replicas: 2 }, { ...s, readyReplicas: 1, currentRevision: 'r1' })),
      'rolling',
      'an update in progress with a pod not ready yet',
    );
  });
  void test('DaemonSet: every scheduled pod updated, ready and available', () => {
    const d = {
      observedGeneration: 4,
      desiredNumberScheduled: 3,
      updatedNumberScheduled: 3,
      numberReady: 3,
      numberAvailable: 3,
    };
    assert.equal(rolloutState('DaemonSet', w(4, {}, d)), 'complete');
    assert.equal(rolloutState('DaemonSet', w(4, {}, { ...d, updatedNumberScheduled: 2 })), 'rolling');
    assert.equal(rolloutState('DaemonSet', w(5, {}, d)), 'rolling');
    assert.equal(
      rolloutState('DaemonSet', w(4, {}, { ...d, numberReady: 1, numberAvailable: 1 })),
      'unready',
      'every pod updated, then two went unready: a restart is not held back',
    );
    assert.equal(rolloutState('DaemonSet', w(4, {}, { ...d, updatedNumberScheduled: 2, numberReady: 2 })), 'rolling');
  });
});
