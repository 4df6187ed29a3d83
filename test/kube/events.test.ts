import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../kube/clock.ts';
import { KubeApiError } from '../../kube/errors.ts';
import { KubeEventRecorder } from '../../kube/events.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { EVENTS } from '../../kube/resources.ts';
import { VAULT_POLICIES } from '../../schemas/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

const policy = (name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: 'default', ...extra },
  spec: { policy: 'p' },
});

test('repeats become one Event with a growing series count, notes scrubbed', async () => {
  const kube = new FakeKubeClient();
  const clock = new FakeClock();
  const rec = new KubeEventRecorder({
    client: kube,
    controller: 'vaultgate.io/controller',
    instance: 'pod-1',
    clock,
    seriesUpdateMs: 1000,
  });
  const obj = await kube.create(VAULT_POLICIES, policy('ev'));
  const note = 'Vault refused token hvs.CAESIabcdefghijklmnopqrstuvwx';
  for (let i = 0; i < 5; i++) {
    rec.record(obj, { type: 'Warning', reason: 'VaultWriteFailed', note });
    await clock.advance(400);
  }
  await rec.flush();
  const events = (await kube.list(EVENTS, { namespace: 'default' })).items as (KubeObject & {
    note: string;
    series?: { count: number };
    regarding: { name: string };
  })[];
  assert.equal(events.length, 1, 'one Event object for five repeats');
  assert.ok(!events[0]!.note.includes('hvs.'), 'note scrubbed');
  assert.equal(events[0]!.regarding.name, 'ev');
  assert.ok((events[0]!.series?.count ?? 0) >= 3, `series count ${events[0]!.series?.count}`);
  rec.record(obj, { type: 'Normal', reason: 'PolicyWritten', note: 'written' });
  await rec.flush();
  assert.equal(
    (await kube.list(EVENTS, { namespace: 'default' })).items.length,
    2,
    'a different reason is a different Event',
  );
});

test('a failing Event write never throws into the reconcile', async () => {
  const kube = new FakeKubeClient();
  kube.failWith(() => new KubeApiError(500, 'InternalError', 'boom'));
  const rec = new KubeEventRecorder({ client: kube, controller: 'c', instance: 'i' });
  rec.record(policy('x'), { type: 'Normal', reason: 'R', note: 'n' });
  await rec.flush();
});
