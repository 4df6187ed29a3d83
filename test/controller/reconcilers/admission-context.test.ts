// The controller re-checks objects with the same inputs admission uses, read from its informer caches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admissionContext } from '../../../controller/reconcilers/admission-context.ts';
import { Cache } from '../../../kube/cache.ts';

test('guardrails, namespace labels and policies come from the caches; an unwatched cache answers "unknown"', () => {
  const namespaces = new Cache();
  namespaces.upsert({ metadata: { name: 'team-a', labels: { tier: 'prod' }, resourceVersion: '1' } });
  const policies = new Cache();
  policies.upsert({ metadata: { name: 'p', namespace: 'team-a', resourceVersion: '1' } });
  const guardrails = new Cache();
  guardrails.upsert({ metadata: { name: 'g', resourceVersion: '1' }, spec: { mode: 'enforce' } });
  const ctx = admissionContext({ guardrails, namespaces, policies, namePrefix: 'vg', controllerClass: 'c' });
  assert.deepEqual(ctx.namespaceLabels('team-a'), { tier: 'prod' });
  assert.equal(ctx.namespaceLabels('gone'), undefined);
  assert.equal(ctx.policyExists?.('team-a', 'p'), true);
  assert.equal(ctx.policyExists?.('team-a', 'q'), false);
  assert.equal(ctx.guardrails.length, 1);
  assert.deepEqual([ctx.namePrefix, ctx.controllerClass], ['vg', 'c']);
  const bare = admissionContext({ namePrefix: 'vg', controllerClass: 'c' });
  assert.equal(bare.policyExists?.('team-a', 'p'), undefined, 'no policy cache: existence unknown, not false');
  assert.deepEqual(bare.guardrails, []);
});
