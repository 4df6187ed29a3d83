// The rollout coordinator, keyed by workload: one controller per apps/v1 kind whose reconcile observes a
// workload and the Secrets that objects naming it (rollout sources) write, asks the planner (plan.ts)
// and acts: records, restarts with one merge patch, or waits. Level-triggered: everything it compares is
// on the workload (the per-Secret HMAC record, the restart time) and in the Secrets; the HMAC key persists
// (hmac.ts), so a controller restart restarts nothing. Its memory (coalescing windows, rollouts in
// flight, rollout start times for the duration metric) only ever delays or measures.
//
// settled() is the question the credential lifecycle asks before revoking what a Secret held before:
// do all the targets run with the Secret's current data, fully rolled out?
import { Counter, Histogram, type Registry } from 'prom-client';
import type { ControllerBuilder } from '../../kube/builder.ts';
import type { KubeClient } from '../../kube/kube-client.ts';
import type { Manager } from '../../kube/manager.ts';
import { objectKey, splitKey, type KubeObject } from '../../kube/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Result } from '../../kube/reconciler.ts';
import { SECRETS, type ResourceRef } from '../../kube/resources.ts';
import {
  isPaused,
  rolloutState,
  WORKLOAD_KINDS,
  WORKLOAD_RESOURCES,
  workloadKey,
  type WorkloadKind,
  type WorkloadRef,
} from '../../kube/workloads.ts';
import type { Store } from '../../kube/cache.ts';
import { secretHmac, templateHmac, type HmacKeyring } from './hmac.ts';
import type { CachedSecret } from '../../kube/cache-transform.ts';
import {
  DEFAULT_ROLLOUT_POLICY,
  formatRecord,
  parseRecord,
  planRollout,
  RECORD_ANNOTATION,
  RESTARTED_AT_ANNOTATION,
  TEMPLATE_ANNOTATION,
  type RolloutPlan,
  type RolloutPolicy,
} from './plan.ts';

/** An object that names workloads to restart when the Secret it writes changes (same namespace only). */
export interface RolloutSource {
  resource: ResourceRef;
  targets(obj: KubeObject): WorkloadRef[];
  /** The Secret it writes, in its namespace; undefined when it writes none. */
  secretName(obj: KubeObject): string | undefined;
  /** Its Secrets are in the controller's Secret cache (else read with a GET). */
  cachedSecrets: boolean;
}

/** What settled() answers for a Secret and its targets. */
export type SettledState = 'settled' | 'rolling' | 'paused' | 'missing';

const TARGET_INDEX = 'rollout-target';
const SECRET_INDEX = 'rollout-secret';

/** Bound on the Secret HMAC memo. */
const MAX_MEMO = 10_000;

export interface RolloutCoordinatorOptions {
  client: KubeClient;
  keyring: HmacKeyring;
  sources: readonly RolloutSource[];
  /** The label selector every declaration of the Secret informer uses (they share one). */
  secretSelector?: string;
  policy?: Partial<RolloutPolicy>;
  registry?: Registry;
  now?: () => number;
}

interface Pending {
  since: number;
  states: Set<string>;
}
interface Named {
  src: RolloutSource;
  obj: KubeObject;
}

export class RolloutCoordinator {
  readonly policy: RolloutPolicy;
  private manager?: Manager;
  private readonly now: () => number;
  /** Coalescing windows: workloadKey → when its change was first seen and the distinct states since. */
  private readonly pending = new Map<string, Pending>();
  /** Restarts patched whose new generation the cache has not shown yet (counted against the cap). */
  private readonly inFlight = new Map<string, { namespace: string; generation: number }>();
  /** Secret → its HMAC at a resourceVersion (bounded: cleared when full). */
  private readonly secretHmacs = new Map<string, { resourceVersion: string; hmac: string }>();
  /** Restarts this process made, for the duration metric. */
  private readonly started = new Map<string, number>();
  private readonly metrics: {
    restarts: Counter<'namespace' | 'kind'>;
    coalesced: Counter<'namespace' | 'kind'>;
    duration: Histogram<'kind'>;
  };

  constructor(private readonly opts: RolloutCoordinatorOptions) {
    this.policy = { ...DEFAULT_ROLLOUT_POLICY, ...opts.policy };
    this.now = opts.now ?? Date.now;
    const registers = opts.registry ? [opts.registry] : [];
    this.metrics = {
      restarts: new Counter({
        name: 'vaultgate_rollout_restarts_total',
        help: 'Workloads restarted because the data of a Secret they consume changed.',
        labelNames: ['namespace', 'kind'] as const,
        registers,
      }),
      coalesced: new Counter({
        name: 'vaultgate_rollout_coalesced_total',
        help: 'Secret changes folded into a restart already due (restarts saved).',
        labelNames: ['namespace', 'kind'] as const,
        registers,
      }),
      duration: new Histogram({
        name: 'vaultgate_rollout_duration_seconds',
        help: 'From the restart patch to the rollout complete (observed generation, every replica updated and ready).',
        labelNames: ['kind'] as const,
        buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800],
        registers,
      }),
    };
  }

  /** Declare the three workload controllers and the source indexes. Call after the sources' own controllers. */
  register(manager: Manager, workers = 2): void {
    this.manager = manager;
    for (const src of this.opts.sources) {
      manager.addIndex(src.resource, TARGET_INDEX, (o) =>
        src.targets(o).map((t) => workloadKey(t.kind, o.metadata.namespace ?? '', t.name)),
      );
      manager.addIndex(src.resource, SECRET_INDEX, (o) => {
        const name = src.secretName(o);
        return name ? [`${o.metadata.namespace}/${name}`] : [];
      });
    }
    for (const kind of WORKLOAD_KINDS) {
      const builder: ControllerBuilder = manager
        .controller(`rollout-${kind.toLowerCase()}`)
        .for(WORKLOAD_RESOURCES[kind]);
      builder.watches(
        SECRETS,
        (s) => this.workloadsOfSecret(kind, objectKey(s)),
        this.opts.secretSelector ? { labelSelector: this.opts.secretSelector } : {},
      );
      for (const src of this.opts.sources) {
        builder.watches(src.resource, (o) =>
          src
            .targets(o)
            .filter((t) => t.kind === kind)
            .map((t) => `${o.metadata.namespace}/${t.name}`),
        );
      }
      builder.workers(workers).complete((key, ctx) => this.reconcile(kind, key, ctx));
    }
  }

  /**
   * Do all `targets` (in `namespace`) run with the current data of Secret `secretName`, fully rolled out?
   * `missing`: the Secret or a target does not exist; `paused`: a paused Deployment has not rolled it;
   * `rolling`: a restart is due, waiting (coalescing, cool-down, cap) or in progress. No targets: settled.
   */
  async settled(namespace: string, targets: readonly WorkloadRef[], secretName: string): Promise<SettledState> {
    if (targets.length === 0) return 'settled';
    const hmac = await this.secretHmacOf(namespace, secretName, false, await this.opts.keyring.key());
    if (hmac === undefined) return 'missing';
    let answer: SettledState = 'settled';
    for (const t of targets) {
      const w = this.workloads(t.kind).get(`${namespace}/${t.name}`);
      if (!w) return 'missing';
      const recorded = parseRecord(w.metadata.annotations?.[RECORD_ANNOTATION])?.[secretName];
      if (recorded === hmac && rolloutState(t.kind, w) === 'complete') continue;
      if (isPaused(t.kind, w)) answer = 'paused';
      else if (answer === 'settled') answer = 'rolling';
    }
    return answer;
  }

  private async reconcile(kind: WorkloadKind, key: string, ctx: ReconcileContext): Promise<Result> {
    const { namespace = '', name } = splitKey(key);
    const wkey = workloadKey(kind, namespace, name);
    const workload = ctx.cache(WORKLOAD_RESOURCES[kind]).get(key);
    if (!workload) {
      this.forget(wkey);
      return DONE;
    }
    const sources = this.sourcesOf(wkey);
    if (sources.length === 0) {
      this.forget(wkey);
      return DONE;
    }
    // Observe: each consumed Secret's data, through the one key.
    const hmacKey = await this.opts.keyring.key();
    const current: Record<string, string> = {};
    const missing: string[] = [];
    for (const { name: secretName, cached } of uniqueSecrets(sources)) {
      const h = await this.secretHmacOf(namespace, secretName, cached, hmacKey);
      if (h === undefined) missing.push(secretName);
      else current[secretName] = h;
    }
    const combined = templateHmac(hmacKey, current);
    // No await from here to the reservation below: the cap is checked and taken in one step.
    const latest = ctx.cache(WORKLOAD_RESOURCES[kind]).get(key) ?? workload;
    const state = rolloutState(kind, latest);
    this.landed(wkey, latest);
    this.measure(kind, wkey, state);
    const pending = this.pending.get(wkey);
    const restartedAt = Date.parse(latest.metadata.annotations?.[RESTARTED_AT_ANNOTATION] ?? '');
    const plan = planRollout({
      workload: {
        state,
        paused: isPaused(kind, latest),
        recorded: parseRecord(latest.metadata.annotations?.[RECORD_ANNOTATION]),
        ...(Number.isNaN(restartedAt) ? {} : { restartedAt }),
      },
      current,
      missing,
      ...(pending
        ? { pendingSince: pending.since, pendingStates: pending.states.size + (pending.states.has(combined) ? 0 : 1) }
        : {}),
      rollingInNamespace: this.rollingIn(namespace, wkey),
      now: this.now(),
      policy: this.policy,
    });
    return this.act(
      kind,
      wkey,
      latest,
      plan,
      combined,
      ctx,
      sources.map((s) => s.obj),
    );
  }

  private async act(
    kind: WorkloadKind,
    wkey: string,
    workload: KubeObject,
    plan: RolloutPlan,
    combined: string,
    ctx: ReconcileContext,
    sources: KubeObject[],
  ): Promise<Result> {
    switch (plan.action) {
      case 'none':
        this.pending.delete(wkey);
        return DONE;
      case 'record':
        this.pending.delete(wkey);
        await patchWorkload(ctx.client, kind, workload, { [RECORD_ANNOTATION]: formatRecord(plan.record) });
        return DONE;
      case 'paused': {
        const note = `${kind} is paused: the restart for changed Secret(s) ${plan.changed.join(', ')} waits until it is resumed`;
        for (const o of [workload, ...sources])
          ctx.events.record(o, { type: 'Warning', reason: 'RolloutPaused', note });
        return DONE;
      }
      case 'wait':
        return this.defer(wkey, plan, combined, ctx);
      case 'restart': {
        await this.restart(kind, wkey, workload, plan, combined, ctx.client);
        const note = `${kind} ${workload.metadata.name} restarted: Secret(s) ${plan.changed.join(', ')} changed${plan.coalesced > 0 ? ` (${plan.coalesced + 1} changes in one restart)` : ''}`;
        for (const o of [workload, ...sources])
          ctx.events.record(o, { type: 'Normal', reason: 'RolloutRestarted', note });
        return DONE;
      }
    }
  }

  /** Not yet: `combined` joins the states this window coalesces, and the workload is looked at again later. */
  private defer(
    wkey: string,
    plan: Extract<RolloutPlan, { action: 'wait' }>,
    combined: string,
    ctx: ReconcileContext,
  ): Result {
    const p = this.pending.get(wkey) ?? { since: this.now(), states: new Set<string>() };
    p.states.add(combined);
    this.pending.set(wkey, p);
    ctx.log.debug({ workload: wkey, reason: plan.reason, retryAfterMs: plan.retryAfterMs }, 'rollout restart deferred');
    return requeueAfter(Math.max(1, plan.retryAfterMs));
  }

  /** One merge patch: the pod template's HMAC (the rollout), the record and the restart time, together. */
  private async restart(
    kind: WorkloadKind,
    wkey: string,
    workload: KubeObject,
    plan: Extract<RolloutPlan, { action: 'restart' }>,
    combined: string,
    client: KubeClient,
  ): Promise<void> {
    const namespace = workload.metadata.namespace ?? '';
    this.inFlight.set(wkey, { namespace, generation: workload.metadata.generation ?? 0 });
    try {
      await patchWorkload(
        client,
        kind,
        workload,
        {
          [RECORD_ANNOTATION]: formatRecord(plan.record),
          [RESTARTED_AT_ANNOTATION]: new Date(this.now()).toISOString(),
        },
        { template: { metadata: { annotations: { [TEMPLATE_ANNOTATION]: combined } } } },
      );
    } catch (err) {
      this.inFlight.delete(wkey);
      throw err;
    }
    this.pending.delete(wkey);
    this.started.set(wkey, this.now());
    const labels = { namespace, kind };
    this.metrics.restarts.inc(labels);
    if (plan.coalesced > 0) this.metrics.coalesced.inc(labels, plan.coalesced);
  }

  /** Workloads of this namespace rolling after a vaultgate restart, besides `except` (stalled ones do not hold the cap). */
  private rollingIn(namespace: string, except: string): number {
    let count = 0;
    const seen = new Set<string>();
    for (const kind of WORKLOAD_KINDS) {
      for (const w of this.workloads(kind).list(namespace)) {
        const k = workloadKey(kind, namespace, w.metadata.name);
        if (k === except || w.metadata.annotations?.[RESTARTED_AT_ANNOTATION] === undefined) continue;
        this.landed(k, w);
        if (rolloutState(kind, w) === 'rolling' || this.inFlight.has(k)) {
          count++;
          seen.add(k);
        }
      }
    }
    for (const [k, f] of this.inFlight) if (f.namespace === namespace && k !== except && !seen.has(k)) count++;
    return count;
  }

  /** A restart is in flight until the cache shows the generation it made. */
  private landed(wkey: string, w: KubeObject): void {
    const flight = this.inFlight.get(wkey);
    if (flight && (w.metadata.generation ?? 0) > flight.generation) this.inFlight.delete(wkey);
  }

  private measure(kind: WorkloadKind, wkey: string, state: string): void {
    const since = this.started.get(wkey);
    if (since === undefined || this.inFlight.has(wkey) || state !== 'complete') return;
    this.started.delete(wkey);
    this.metrics.duration.observe({ kind }, (this.now() - since) / 1000);
  }

  private forget(wkey: string): void {
    this.pending.delete(wkey);
    this.inFlight.delete(wkey);
    this.started.delete(wkey);
  }

  /** Source objects naming this workload. */
  private sourcesOf(wkey: string): Named[] {
    return this.opts.sources.flatMap((src) =>
      this.mgr()
        .cache(src.resource)
        .byIndex(TARGET_INDEX, wkey)
        .map((obj) => ({ src, obj })),
    );
  }

  private workloadsOfSecret(kind: WorkloadKind, secretKey: string): string[] {
    const out = new Set<string>();
    for (const src of this.opts.sources) {
      for (const o of this.mgr().cache(src.resource).byIndex(SECRET_INDEX, secretKey)) {
        for (const t of src.targets(o)) if (t.kind === kind) out.add(`${o.metadata.namespace}/${t.name}`);
      }
    }
    return [...out];
  }

  private workloads(kind: WorkloadKind): Store {
    return this.mgr().cache(WORKLOAD_RESOURCES[kind]);
  }

  /**
   * The HMAC of a Secret's data, or undefined when it does not exist. The Secret cache may hold digests
   * instead of values (kube/cache-transform.ts): the values are then read with a GET, once per
   * resourceVersion the cache shows (a workload's status events do not read Secrets again).
   */
  private async secretHmacOf(
    namespace: string,
    name: string,
    cached: boolean,
    key: Buffer,
  ): Promise<string | undefined> {
    const k = `${namespace}/${name}`;
    const hit = this.mgr().cache<CachedSecret>(SECRETS).get(k);
    if (!hit && cached) return undefined;
    if (hit?.data && !hit.dataDigest) return secretHmac(key, { name, data: hit.data });
    const memo = this.secretHmacs.get(k);
    if (hit && memo && memo.resourceVersion === hit.metadata.resourceVersion) return memo.hmac;
    const fresh = await this.opts.client.get<CachedSecret>(SECRETS, name, namespace);
    if (!fresh) return undefined;
    const hmac = secretHmac(key, { name, data: fresh.data ?? {} });
    if (this.secretHmacs.size >= MAX_MEMO) this.secretHmacs.clear();
    this.secretHmacs.set(k, { resourceVersion: fresh.metadata.resourceVersion ?? '', hmac });
    return hmac;
  }

  private mgr(): Manager {
    if (!this.manager) throw new Error('rollout coordinator: register() was not called');
    return this.manager;
  }
}

/** A merge patch of the workload at the resourceVersion it was seen at: a stale cache gets 409 and a fresh look, never a second restart. */
function patchWorkload(
  client: KubeClient,
  kind: WorkloadKind,
  workload: KubeObject,
  annotations: Record<string, string>,
  spec?: object,
): Promise<unknown> {
  const { name, namespace = '', resourceVersion } = workload.metadata;
  return client.patch(
    WORKLOAD_RESOURCES[kind],
    name,
    namespace,
    { metadata: { resourceVersion, annotations }, ...(spec ? { spec } : {}) },
    'merge',
  );
}

/** Each Secret the sources write, once (read with a GET if any source's Secrets are not cached). */
function uniqueSecrets(sources: readonly Named[]): { name: string; cached: boolean }[] {
  const out = new Map<string, boolean>();
  for (const { src, obj } of sources) {
    const name = src.secretName(obj);
    if (name !== undefined) out.set(name, (out.get(name) ?? true) && src.cachedSecrets);
  }
  return [...out].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, cached]) => ({ name, cached }));
}
