// Kubernetes Event recorder (events.k8s.io/v1). Repeats of the same (object, type, reason, note) within
// the aggregation window become one Event whose `series.count` grows, as client-go's events broadcaster:
// a reconcile failing every few seconds shows as one Event with a count, not hundreds of objects.
// Series updates are sent at most every `seriesUpdateMs`; counts in between are kept in memory.
// Notes are scrubbed of credential-looking text and capped at 1 KiB (the apiserver's limit).
import { randomBytes } from 'node:crypto';
import type { Logger } from '../observability/log.ts';
import { silentLogger } from '../observability/log.ts';
import type { KubeClient } from './kube-client.ts';
import type { KubeObject } from './objects.ts';
import { redactSecrets } from './redact.ts';
import { EVENTS } from './resources.ts';
import { systemClock, type Clock } from './clock.ts';

export interface EventInput {
  type: 'Normal' | 'Warning';
  /** CamelCase machine-readable reason, e.g. `PolicyWritten`, `VaultUnavailable`. */
  reason: string;
  /** Human-readable; must never contain secret values. */
  note: string;
  /** What was being done, e.g. `Reconcile`, `Delete`. Default `Reconcile`. */
  action?: string;
}

/** Record Events about an object. Never throws and never blocks the reconcile on the apiserver. */
export interface EventRecorder {
  record(regarding: KubeObject, event: EventInput): void;
}

/** A recorder that drops everything (tests, dry runs). */
export const nullRecorder: EventRecorder = { record: () => undefined };

export interface KubeEventRecorderOptions {
  client: KubeClient;
  /** `reportingController`, e.g. `vaultgate.io/controller`. */
  controller: string;
  /** `reportingInstance`: the pod name. */
  instance: string;
  log?: Logger;
  clock?: Clock;
  /** Repeats within this window join the same series (client-go: 10 min... for isomorphic events). */
  aggregationWindowMs?: number;
  seriesUpdateMs?: number;
  /** Bound on remembered series (oldest forgotten first). */
  maxTracked?: number;
}

interface Series {
  name: string;
  namespace: string;
  count: number;
  sentCount: number;
  firstMs: number;
  lastMs: number;
  lastSentMs: number;
}

const MAX_NOTE = 1024;

function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class KubeEventRecorder implements EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly pending = new Set<Promise<void>>();
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly windowMs: number;
  private readonly seriesUpdateMs: number;
  private readonly maxTracked: number;

  constructor(private readonly opts: KubeEventRecorderOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger;
    this.windowMs = opts.aggregationWindowMs ?? 10 * 60_000;
    this.seriesUpdateMs = opts.seriesUpdateMs ?? 30_000;
    this.maxTracked = opts.maxTracked ?? 4096;
  }

  record(regarding: KubeObject, input: EventInput): void {
    const note = redactSecrets(input.note).slice(0, MAX_NOTE);
    const meta = regarding.metadata;
    const namespace = meta.namespace || 'default';
    const key = JSON.stringify([
      regarding.apiVersion,
      regarding.kind,
      meta.namespace,
      meta.name,
      meta.uid,
      input.type,
      input.reason,
      note,
    ]);
    const now = this.clock.now();
    const existing = this.series.get(key);
    if (existing && now - existing.lastMs <= this.windowMs) {
      existing.count++;
      existing.lastMs = now;
      this.series.delete(key); // re-insert: the Map's order is the LRU order
      this.series.set(key, existing);
      if (now - existing.lastSentMs >= this.seriesUpdateMs) this.track(this.sendSeries(existing));
      return;
    }
    const s: Series = {
      name: `${meta.name}.${now.toString(16)}${randomBytes(2).toString('hex')}`,
      namespace,
      count: 1,
      sentCount: 1,
      firstMs: now,
      lastMs: now,
      lastSentMs: now,
    };
    this.series.set(key, s);
    while (this.series.size > this.maxTracked) this.series.delete(this.series.keys().next().value!);
    const body: KubeObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: s.name, namespace },
      eventTime: microTime(now),
      reportingController: this.opts.controller,
      reportingInstance: this.opts.instance,
      action: input.action ?? 'Reconcile',
      reason: input.reason,
      note,
      type: input.type,
      regarding: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
    };
    this.track(this.opts.client.create(EVENTS, body).then(() => undefined));
  }

  /** Wait for Event writes in flight (shutdown, tests). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private sendSeries(s: Series): Promise<void> {
    s.lastSentMs = this.clock.now();
    s.sentCount = s.count;
    const patch = { series: { count: s.count, lastObservedTime: microTime(s.lastMs) } };
    return this.opts.client.patch(EVENTS, s.name, s.namespace, patch, 'merge').then(() => undefined);
  }

  private track(p: Promise<void>): void {
    const tracked = p
      .catch((err: unknown) => {
        this.log.debug({ err: { reason: (err as { reason?: string }).reason } }, 'event write failed');
      })
      .finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }
}
