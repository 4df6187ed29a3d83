// A render worker (worker_threads): runs SecretRenderJobs (eso/render-job.ts) sent by the controller's
// render pool (controller/reconcilers/render-pool.ts), one at a time, and answers each with its outcome. While a
// job runs it keeps two things in memory the pool shares with it (a SharedArrayBuffer), so the pool can
// read them after terminating a worker that overran its deadline: the field path of the template being
// rendered (to name it in the error) and how many new derivePassword keys it has derived (charged to the
// namespace even when the render never finishes).
import { parentPort, workerData } from 'node:worker_threads';
import { runSecretRenderJob, type SecretRenderJob } from './render-job.ts';
import { observeTemplateFields } from './target-template.ts';
import { allowanceBudget } from '../golang/sprig/index.ts';

/** Layout of the shared buffer: [0] new keys derived by the job under way, [1] field length, then the field (UTF-8). */
export const SHARED_BYTES = 1024;
export const FIELD_OFFSET = 8;
export const RENDER_WORKER_ROLE = 'vaultgate-render-worker';

export interface RenderRequest {
  id: number;
  job: SecretRenderJob;
}

/** The field path a worker last wrote into `shared` (empty before any). */
export function sharedField(shared: SharedArrayBuffer): string {
  const head = new Int32Array(shared, 0, 2);
  const len = Atomics.load(head, 1);
  return Buffer.from(new Uint8Array(shared, FIELD_OFFSET, Math.min(len, SHARED_BYTES - FIELD_OFFSET))).toString('utf8');
}

/** New derivePassword keys the worker's job under way has derived. */
export function sharedDerived(shared: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(shared, 0, 2), 0);
}

function serve(): void {
  const port = parentPort!;
  const shared = (workerData as { shared: SharedArrayBuffer }).shared;
  const head = new Int32Array(shared, 0, 2);
  const fieldBytes = new Uint8Array(shared, FIELD_OFFSET, SHARED_BYTES - FIELD_OFFSET);
  observeTemplateFields((where) => {
    const { written } = new TextEncoder().encodeInto(where, fieldBytes);
    Atomics.store(head, 1, written);
  });
  port.on('message', ({ id, job }: RenderRequest) => {
    Atomics.store(head, 0, 0);
    Atomics.store(head, 1, 0);
    // Every new key is counted in shared memory as it is derived (the pool reads it if this render is cut short).
    const allowance = allowanceBudget(job.namespace, job.deriveAllowance);
    const outcome = runSecretRenderJob(job, {
      namespace: job.namespace,
      perMinute: allowance.perMinute,
      take: (now) => {
        const ok = allowance.take(now);
        if (ok) Atomics.add(head, 0, 1);
        return ok;
      },
    });
    port.postMessage({ id, outcome });
  });
  port.postMessage({ ready: true });
}

if (parentPort && (workerData as { role?: string } | null)?.role === RENDER_WORKER_ROLE) serve();
