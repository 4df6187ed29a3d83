import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError } from '../../kube/errors.ts';
import { RuntimeMetrics } from '../../kube/metrics.ts';

async function value(m: RuntimeMetrics, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = (await m.registry.getMetricsAsJSON()).find((x) => x.name === name);
  return metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

test("a work queue's depth is exported from the start (0), then follows the queue", async () => {
  const m = new RuntimeMetrics();
  const q = m.queueMetrics('secretstore');
  assert.equal(await value(m, 'workqueue_depth', { name: 'secretstore' }), 0);
  q.depth(3);
  q.added();
  q.retried();
  assert.equal(await value(m, 'workqueue_depth', { name: 'secretstore' }), 3);
  assert.equal(await value(m, 'workqueue_adds_total', { name: 'secretstore' }), 1);
  assert.equal(await value(m, 'workqueue_retries_total', { name: 'secretstore' }), 1);
});

test('informer events are counted by type; restarts by reason; SYNCED sets the synced gauge', async () => {
  const m = new RuntimeMetrics();
  const err = new KubeApiError(500, 'InternalError', 'boom');
  m.observeInformer('v1/secrets', { type: 'CONNECT', resourceVersion: '1' });
  m.observeInformer('v1/secrets', { type: 'RELIST_410', resourceVersion: '1' });
  m.observeInformer('v1/secrets', { type: 'WATCH_ERROR', error: err });
  m.observeInformer('v1/secrets', { type: 'WATCHDOG_RESTART', quietMs: 1 });
  m.observeInformer('v1/secrets', { type: 'LIST_ERROR', error: err });
  m.observeInformer('v1/secrets', { type: 'WATCH_CLOSED', events: 0 });
  assert.equal(await value(m, 'vaultgate_informer_synced', { resource: 'v1/secrets' }), undefined);
  m.observeInformer('v1/secrets', { type: 'SYNCED' });
  const r = { resource: 'v1/secrets' };
  assert.equal(await value(m, 'vaultgate_informer_events_total', { ...r, type: 'CONNECT' }), 1);
  for (const reason of ['gone', 'error', 'watchdog', 'list_error'])
    assert.equal(await value(m, 'vaultgate_informer_restarts_total', { ...r, reason }), 1, reason);
  assert.equal((await m.registry.getSingleMetric('vaultgate_informer_restarts_total')?.get())?.values.length, 4);
  assert.equal(await value(m, 'vaultgate_informer_synced', r), 1);
});

test("metric names are controller-runtime's where the meaning is the same (what existing dashboards chart)", async () => {
  const names = (await new RuntimeMetrics().registry.getMetricsAsJSON()).map((x) => x.name);
  for (const n of [
    'controller_runtime_reconcile_total',
    'controller_runtime_reconcile_errors_total',
    'controller_runtime_reconcile_time_seconds',
    'workqueue_depth',
    'leader_election_master_status',
  ])
    assert.ok(names.includes(n), n);
});
