// A controller's idle workers each wait on its stop signal (WorkQueue.get): with the default 16 workers
// that is 16 'abort' listeners, which made Node print "MaxListenersExceededWarning: Possible EventTarget
// memory leak detected. 11 abort listeners added to [AbortSignal]" in the controller's log at every start.
// The count is bounded by the workers: a warning must come only past that bound (a real leak).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Manager } from '../../kube/manager.ts';
import { DONE } from '../../kube/reconciler.ts';
import { WorkQueue } from '../../kube/workqueue.ts';
import { VAULT_POLICIES } from '../../schemas/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';
import { until, vp } from './fixtures.ts';

const WORKERS = 16;

describe('controller workers', () => {
  test('16 idle workers wait on the stop signal without a MaxListenersExceededWarning, and 400 reconciles leave 16 listeners', async (t) => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    t.after(() => process.off('warning', onWarning));
    // The signals the workers wait on (WorkQueue.get's argument), and the most listeners one ever had.
    const signals = new Set<AbortSignal>();
    let most = 0;
    // the original, taken before the mock replaces it on the prototype
    const get = Object.getOwnPropertyDescriptor(WorkQueue.prototype, 'get')?.value as WorkQueue['get'];
    t.mock.method(WorkQueue.prototype, 'get', function (this: WorkQueue, signal?: AbortSignal) {
      if (signal) {
        signals.add(signal);
        most = Math.max(most, getEventListeners(signal, 'abort').length + 1);
      }
      return get.call(this, signal);
    });

    const kube = new FakeKubeClient();
    const mgr = new Manager({ client: kube, informer: { resyncMs: 0 } });
    let runs = 0;
    mgr
      .controller('many-workers')
      .for(VAULT_POLICIES)
      .workers(WORKERS)
      .complete(async () => {
        runs++;
        await new Promise((r) => setImmediate(r));
        return DONE;
      });
    await mgr.start();
    await until(() => signals.size === 1, 'the workers waiting');
    const [stop] = signals;
    await until(() => getEventListeners(stop!, 'abort').length === WORKERS, 'every worker idle');

    for (let i = 0; i < 400; i++) await kube.create(VAULT_POLICIES, vp(`p-${i}`));
    await until(() => runs === 400, '400 reconciles');
    const idle = (): boolean => mgr.status().controllers.every((c) => c.queued === 0 && c.inFlight === 0);
    await until(idle, 'every worker idle again');
    await new Promise((r) => setImmediate(r)); // a worker that finished takes its next get; emitWarning's tick
    const afterwards = getEventListeners(stop!, 'abort').length;
    await mgr.stop();

    assert.equal(signals.size, 1, 'one stop signal for the run');
    assert.equal(afterwards, WORKERS, 'one listener per idle worker after 400 reconciles');
    assert.ok(most <= WORKERS, `at most one listener per worker, saw ${most}`);
    assert.deepEqual(warnings, []);
  });
});
