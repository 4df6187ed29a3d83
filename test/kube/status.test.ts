import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setCondition } from '../../kube/conditions.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { applyStatus } from '../../kube/status.ts';
import { VAULT_POLICIES } from '../../schemas/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

const policy = (name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: 'default', ...extra },
  spec: { policy: 'p' },
});

test('a status write that changes nothing is skipped', async () => {
  const kube = new FakeKubeClient();
  const obj = await kube.create(VAULT_POLICIES, policy('s'));
  const status = {
    observedGeneration: 1,
    conditions: setCondition(
      [],
      { type: 'Ready', status: 'True', reason: 'Synced', message: '' },
      1,
      '2026-01-01T00:00:00Z',
    ),
  };
  const first = await applyStatus(kube, VAULT_POLICIES, obj, status);
  assert.equal(first.written, true);
  const second = await applyStatus(kube, VAULT_POLICIES, first.obj!, status);
  assert.equal(second.written, false);
  assert.equal(kube.calls.filter((c) => c.verb === 'apply').length, 1);
  const stored = await kube.get(VAULT_POLICIES, 's', 'default');
  assert.ok(stored?.metadata.managedFields?.some((m) => m.manager === 'vaultgate' && m.subresource === 'status'));
});
