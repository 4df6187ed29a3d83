// Tenant templates rendered off the event loop (issue #20): a small pool of worker threads
// (eso/render-worker.ts), each with a V8 heap limit (resourceLimits), running one render at a time under
// a wall-clock deadline. A worker that overruns its deadline or its heap is terminated and replaced; the
// render fails with a value-free error naming the field (`spec.target.template.data["x"]: template
// rendering exceeded 2s`), which the reconciler returns to the work queue (retried with backoff). The
// event loop that renews the Lease, answers /healthz and reconciles other namespaces only posts messages.
//
// Fairness: a namespace has at most `perNamespace` renders in flight (default 1) and the pool has `size`
// workers (default 2), so while one namespace's hostile template holds a worker for its deadline, the
// other worker serves everyone else. Costly functions are charged to the namespace that asked:
// derivePassword's new keys against the namespace's budget (NamespaceKeyBudgets), counted by the worker
// in shared memory as they are derived, so a render cut short is charged too.
//
// Cost: a round trip is tens of microseconds more than rendering in process (`npm run bench -- render`);
// a target without a template (a copy of the provider data) is never sent to a worker.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ExternalSecretTarget } from '../../schemas/types.ts';
import { desiredSecret, type DesiredSecret, type SourceMetadata } from '../../eso/target.ts';
import type { TemplateSources } from '../../eso/target-template.ts';
import {
  desiredFromOutcome,
  hasTemplate,
  runSecretRenderJob,
  secretRenderJob,
  type RenderOutcome,
  type SecretRenderJob,
} from '../../eso/render-job.ts';
import { RENDER_WORKER_ROLE, SHARED_BYTES, sharedDerived, sharedField } from '../../eso/render-worker.ts';
import { TemplateError } from '../../golang/template/index.ts';
import { NamespaceKeyBudgets, withDeriveBudget } from '../../golang/sprig/index.ts';

/** Renders the Secret an ExternalSecret (or a PushSecret's template) should produce. */
export interface SecretRenderer {
  desiredSecret(
    namespace: string,
    target: ExternalSecretTarget | undefined,
    providerData: Map<string, Buffer>,
    source?: SourceMetadata,
    sources?: TemplateSources,
  ): Promise<DesiredSecret>;
}

/**
 * A render stopped by the pool's limits (deadline, heap, a worker that died). Its message names the
 * field and the limit, never a value. The reconciler retries it with the work queue's backoff.
 */
export class RenderLimitError extends TemplateError {}

const NO_SOURCES: TemplateSources = { configMap: () => undefined, secret: () => undefined };

/** Rendering on the calling thread (tests, tools): the same job, the same per-namespace budgets, no deadline. */
export function inProcessRenderer(budgets = new NamespaceKeyBudgets()): SecretRenderer {
  return {
    desiredSecret: (namespace, target, providerData, source = {}, sources = NO_SOURCES) =>
      new Promise((resolve) => {
        // Inside the executor: a throw rejects the promise.
        resolve(
          hasTemplate(target)
            ? withDeriveBudget(budgets.forNamespace(namespace), () =>
                desiredSecret(target, providerData, source, sources),
              )
            : desiredSecret(target, providerData, source, sources),
        );
      }),
  };
}

export interface RenderPoolOptions {
  /** Worker threads (default 2). */
  size?: number;
  /** Wall-clock deadline of one render, from the moment a worker takes it (default 2000 ms). */
  deadlineMs?: number;
  /** V8 old-generation heap of each worker, MiB (default 64). */
  heapMb?: number;
  /** Renders of one namespace in flight at once (default 1). */
  perNamespace?: number;
  /** derivePassword's new-key budgets (default: a fresh NamespaceKeyBudgets). */
  budgets?: NamespaceKeyBudgets;
}

interface Pending {
  job: SecretRenderJob;
  resolve: (o: RenderOutcome) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  shared: SharedArrayBuffer;
  ready: boolean;
  current?: Pending & { id: number; timer: NodeJS.Timeout };
  /** Set when the pool ended this worker on purpose (deadline, close): its exit is not a crash. */
  ended?: boolean;
}

export interface RenderPoolStats {
  renders: number;
  deadlines: number;
  heapLimits: number;
  crashes: number;
  replaced: number;
}

/** How a worker starts: the .ts module through tsx in a source checkout, else the bundle's own entry. */
function workerScript(): { script: string | URL; eval: boolean } {
  const source = new URL('../../eso/render-worker.ts', import.meta.url);
  if (existsSync(fileURLToPath(source))) {
    const tsx = import.meta.resolve('tsx/esm/api');
    return {
      script: `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source.href)}); })`,
      eval: true,
    };
  }
  // The production bundle (cli/build.ts): its entry starts the worker module when it runs as one (cli/main.ts).
  return { script: pathToFileURL(process.argv[1] ?? ''), eval: false };
}

export class RenderPool implements SecretRenderer {
  readonly #size: number;
  readonly #deadlineMs: number;
  readonly #heapMb: number;
  readonly #perNamespace: number;
  readonly #budgets: NamespaceKeyBudgets;
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  readonly #inFlight = new Map<string, number>();
  #nextId = 1;
  #closed = false;
  #bootFailures = 0;
  readonly stats: RenderPoolStats = { renders: 0, deadlines: 0, heapLimits: 0, crashes: 0, replaced: 0 };

  constructor(opts: RenderPoolOptions = {}) {
    this.#size = Math.max(1, opts.size ?? 2);
    this.#deadlineMs = opts.deadlineMs ?? 2000;
    this.#heapMb = opts.heapMb ?? 64;
    this.#perNamespace = Math.max(1, opts.perNamespace ?? 1);
    this.#budgets = opts.budgets ?? new NamespaceKeyBudgets();
  }

  /** Workers start with the first render that needs one (a controller whose targets have no template starts none). */
  #start(): void {
    if (this.#slots.length === 0 && !this.#closed) for (let i = 0; i < this.#size; i++) this.#slots.push(this.#spawn());
  }

  /** Starts the workers and resolves when every one is ready (renders queue meanwhile). */
  async ready(): Promise<void> {
    this.#start();
    while (!this.#closed && this.#slots.some((s) => !s.ready)) await new Promise((r) => setTimeout(r, 10));
  }

  async desiredSecret(
    namespace: string,
    target: ExternalSecretTarget | undefined,
    providerData: Map<string, Buffer>,
    source: SourceMetadata = {},
    sources: TemplateSources = NO_SOURCES,
  ): Promise<DesiredSecret> {
    // No template: a copy of the provider data and the metadata, nothing a tenant wrote runs.
    if (!hasTemplate(target)) return desiredSecret(target, providerData, source, sources);
    const job = secretRenderJob(namespace, target, providerData, source, sources, this.#budgets.remaining(namespace));
    return desiredFromOutcome(await this.run(job));
  }

  /** Run one job on a worker (queued behind others; at most `perNamespace` of its namespace at once). */
  run(job: SecretRenderJob): Promise<RenderOutcome> {
    if (this.#closed) return Promise.reject(new RenderLimitError('the template renderer is shut down'));
    this.#start();
    return new Promise<RenderOutcome>((resolve, reject) => {
      this.#queue.push({ job, resolve, reject });
      this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const p of this.#queue.splice(0)) p.reject(new RenderLimitError('the template renderer is shut down'));
    await Promise.all(
      this.#slots.map(async (s) => {
        s.ended = true;
        if (s.current) {
          clearTimeout(s.current.timer);
          s.current.reject(new RenderLimitError('the template renderer is shut down'));
          s.current = undefined;
        }
        await s.worker.terminate();
      }),
    );
  }

  #spawn(): Slot {
    const { script, eval: isEval } = workerScript();
    const shared = new SharedArrayBuffer(SHARED_BYTES);
    const worker = new Worker(script, {
      eval: isEval,
      workerData: { role: RENDER_WORKER_ROLE, shared },
      resourceLimits: { maxOldGenerationSizeMb: this.#heapMb, maxYoungGenerationSizeMb: 16 },
      // A template never reads the environment (ESO removes env/expandenv); the worker gets none of it.
      env: {},
    });
    worker.unref();
    const slot: Slot = { worker, shared, ready: false };
    worker.on('message', (m: { ready?: true; id?: number; outcome?: RenderOutcome }) => {
      if (m.ready) {
        slot.ready = true;
        this.#pump();
        return;
      }
      const cur = slot.current;
      if (!cur || cur.id !== m.id || !m.outcome) return;
      clearTimeout(cur.timer);
      slot.current = undefined;
      this.#finish(cur.job.namespace, m.outcome.derived);
      this.stats.renders++;
      cur.resolve(m.outcome);
      this.#pump();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      // ERR_WORKER_OUT_OF_MEMORY: the heap limit. The message is Node's own (no template data).
      const heap = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      if (heap) this.stats.heapLimits++;
      else this.stats.crashes++;
      this.#replace(
        slot,
        heap ? `template rendering exceeded its memory limit (${this.#heapMb} MiB)` : 'the template renderer failed',
      );
    });
    worker.on('exit', () => {
      if (!slot.ended) {
        this.stats.crashes++;
        this.#replace(slot, 'the template renderer stopped');
      }
    });
    return slot;
  }

  /** End `slot`'s worker, fail its render with `why` (naming the field), start a new worker in its place. */
  #replace(slot: Slot, why: string): void {
    if (slot.ended) return;
    slot.ended = true;
    const cur = slot.current;
    slot.current = undefined;
    if (cur) {
      clearTimeout(cur.timer);
      this.#finish(cur.job.namespace, sharedDerived(slot.shared));
      const field = sharedField(slot.shared) || 'spec.target.template';
      cur.reject(new RenderLimitError(`${field}: ${why}`));
    }
    void slot.worker.terminate();
    const i = this.#slots.indexOf(slot);
    if (i < 0 || this.#closed) return;
    if (slot.ready) {
      this.#bootFailures = 0;
      this.#slots[i] = this.#spawn();
      this.stats.replaced++;
      this.#pump();
      return;
    }
    // It died before it could serve (a broken build, a heap too small to load the engine): no tight
    // respawn loop; what waits fails now (retried with backoff) and the next worker starts after a delay.
    this.#bootFailures++;
    for (const p of this.#queue.splice(0))
      p.reject(new RenderLimitError('spec.target.template: the template renderer could not start'));
    const delay = Math.min(30_000, 500 * 2 ** Math.min(this.#bootFailures, 6));
    const placeholder: Slot = { ...slot, ended: true };
    this.#slots[i] = placeholder;
    setTimeout(() => {
      if (this.#closed || this.#slots[i] !== placeholder) return;
      this.#slots[i] = this.#spawn();
      this.stats.replaced++;
      this.#pump();
    }, delay).unref();
  }

  #finish(namespace: string, derived: number): void {
    this.#budgets.charge(namespace, derived);
    const n = (this.#inFlight.get(namespace) ?? 1) - 1;
    if (n <= 0) this.#inFlight.delete(namespace);
    else this.#inFlight.set(namespace, n);
  }

  #pump(): void {
    if (this.#closed) return;
    for (const slot of this.#slots) {
      if (!slot.ready || slot.current || slot.ended) continue;
      const i = this.#queue.findIndex((p) => (this.#inFlight.get(p.job.namespace) ?? 0) < this.#perNamespace);
      if (i < 0) return;
      const [p] = this.#queue.splice(i, 1) as [Pending];
      const ns = p.job.namespace;
      this.#inFlight.set(ns, (this.#inFlight.get(ns) ?? 0) + 1);
      // The allowance is what the namespace has left now (an earlier render of it may have spent some).
      // The engine stops itself a little before the pool's deadline (a message, and the worker lives on);
      // the pool's timer is for a worker stuck in one long call.
      const job: SecretRenderJob = {
        ...p.job,
        deriveAllowance: this.#budgets.remaining(ns),
        deadline: { ms: Math.max(1, this.#deadlineMs - ENGINE_MARGIN_MS), label: formatSeconds(this.#deadlineMs) },
      };
      const id = this.#nextId++;
      const timer = setTimeout(() => {
        this.stats.deadlines++;
        this.#replace(slot, `template rendering exceeded ${formatSeconds(this.#deadlineMs)}`);
      }, this.#deadlineMs);
      slot.current = { ...p, job, id, timer };
      slot.worker.postMessage({ id, job });
    }
  }
}

/** How much earlier than the pool's deadline the engine stops a render by itself. */
const ENGINE_MARGIN_MS = 100;

const formatSeconds = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

/** For `vaultgate template` and tests: run a job in process (no worker), as the pool's workers do. */
export { runSecretRenderJob };
