// The ExternalSecret opt-in for rollout restarts at admission: a list of this namespace's workloads, or a
// refusal naming the field and the rule.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../../webhook/admission/kinds.ts';
import { denials, findings } from '../../../eso/helpers.ts';

const FIELD = 'metadata.annotations[vaultgate.io/rollout-restart-targets]';
const es = (targets: string | undefined, creationPolicy?: string): KubeObject => ({
  apiVersion: 'external-secrets.io/v1',
  kind: 'ExternalSecret',
  metadata: {
    name: 'app',
    namespace: 'team-a',
    ...(targets !== undefined ? { annotations: { 'vaultgate.io/rollout-restart-targets': targets } } : {}),
  },
  spec: {
    secretStoreRef: { name: 'vault', kind: 'SecretStore' },
    target: { name: 'app', ...(creationPolicy ? { creationPolicy } : {}) },
    data: [{ secretKey: 'password', remoteRef: { key: 'team-a/db', property: 'password' } }],
  },
});

void describe('webhook/rules/eso/rollout-targets', () => {
  void test('workloads of the namespace are accepted', () => {
    assert.deepEqual(findings(es('deployment/app, statefulset/db,daemonset/agent', 'Merge'), undefined, 'team-a'), []);
    assert.deepEqual(findings(es(undefined), undefined, 'team-a'), []);
  });

  void test('another namespace, another kind, a bad name: denied with the field and the rule', () => {
    for (const [value, message] of [
      ['deployment/team-b/app', /names another namespace/],
      ['cronjob/nightly', /kind "cronjob" is not deployment, statefulset or daemonset/],
      ['deployment/App', /DNS-1123/],
      ['app', /is not kind\/name/],
      [' , ', /names no workload/],
    ] as const) {
      const d = denials(findings(es(value), undefined, 'team-a'));
      assert.deepEqual(
        d.map((f) => [f.field, f.rule]),
        [[FIELD, 'eso.es.rollout-targets']],
        value,
      );
      assert.match(d[0]!.message, message);
    }
  });

  void test('creationPolicy None writes no Secret: the opt-in is refused', () => {
    assert.match(
      denials(findings(es('deployment/app', 'None'), undefined, 'team-a'))[0]!.message,
      /creationPolicy None/,
    );
  });
});
