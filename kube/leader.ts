// Lease-based leader election on coordination.k8s.io/v1, as client-go's tools/leaderelection with
// controller-runtime's defaults (lease 15 s, renew deadline 10 s, retry 2 s):
// - acquire: create the Lease on 404; otherwise take it over only when its holder is empty or has not
//   renewed for a lease duration *as observed locally* (client-go compares against the local time it last
//   saw the record change, so clock skew between pods doesn't matter); writes carry resourceVersion, and a
//   409 means another candidate won the race;
// - renew every retry period; when no renewal succeeded within the renew deadline (or another holder shows
//   up) leadership is lost at once: onStoppedLeading fires before anything else can happen;
// - release on stop (ReleaseOnCancel): holderIdentity cleared so a standby takes over without waiting.
import type { Logger } from '../observability/log.ts';
import { silentLogger } from '../observability/log.ts';
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { isConflict, isAlreadyExists, toKubeError } from './errors.ts';
import type { KubeClient } from './kube-client.ts';
import type { KubeObject } from './objects.ts';
import { LEASES } from './resources.ts';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaderElectionConfig {
  namespace: string;
  name: string;
  /** Unique per process: the pod name (+ a random suffix if pods can restart under the same name). */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface LeaderElectorOptions extends LeaderElectionConfig {
  client: Pick<KubeClient, 'get' | 'create' | 'replace'>;
  /** Called on becoming leader; `signal` aborts when leadership ends. */
  onStartedLeading: (signal: AbortSignal) => void;
  /** Called when leadership ends (lost or released). */
  onStoppedLeading: () => void;
  onNewLeader?: (identity: string) => void;
  clock?: Clock;
  log?: Logger;
  random?: () => number;
}

/** Lease times are metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: () => number;
  private readonly stopController = new AbortController();
  private observed?: { key: string; atMs: number; record: LeaseSpec; resourceVersion?: string };
  private leading?: { controller: AbortController; deadline?: TimerHandle };
  private lastLeader?: string;
  private running?: Promise<void>;

  constructor(private readonly opts: LeaderElectorOptions) {
    this.leaseMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryMs = opts.retryPeriodMs ?? 2_000;
    if (this.renewDeadlineMs >= this.leaseMs)
      throw new Error('leader election: renew deadline must be shorter than the lease duration');
    if (this.retryMs * 1.2 >= this.renewDeadlineMs)
      throw new Error('leader election: retry period × 1.2 must be shorter than the renew deadline');
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger;
    this.random = opts.random ?? Math.random;
  }

  get isLeader(): boolean {
    return this.leading !== undefined;
  }

  /** Campaign until stop(): acquire, lead, and campaign again after a loss. */
  start(): void {
    this.running ??= this.loop();
  }

  /** Stop campaigning; if leading, stop leading and release the lease. */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.running;
    if (this.leading) {
      this.endLeadership('released');
      await this.release();
    }
  }

  private async loop(): Promise<void> {
    const stop = this.stopController.signal;
    while (!stop.aborted) {
      if (!this.leading) {
        if (await this.tryAcquireOrRenew()) this.beginLeadership();
        else {
          // client-go's JitterUntil with factor 1.2
          await this.clock.sleep(this.retryMs * (1 + this.random() * 1.2), stop);
          continue;
        }
      } else {
        const ok = await this.tryAcquireOrRenew();
        if (!this.leading) continue; // the deadline fired while the renewal was in flight
        if (ok) this.armDeadline();
        else if (this.heldByOther()) this.endLeadership('lease taken by another holder');
      }
      await this.clock.sleep(this.retryMs, stop);
    }
  }

  private beginLeadership(): void {
    const controller = new AbortController();
    this.leading = { controller };
    this.armDeadline();
    this.log.info({ lease: `${this.opts.namespace}/${this.opts.name}` }, 'became leader');
    try {
      this.opts.onStartedLeading(controller.signal);
    } catch (err) {
      this.log.error({ err }, 'onStartedLeading failed');
    }
  }

  /** Leadership ends when a renew deadline passes without a successful renewal. */
  private armDeadline(): void {
    if (!this.leading) return;
    this.leading.deadline?.cancel();
    this.leading.deadline = this.clock.setTimer(
      () => this.endLeadership('renew deadline exceeded'),
      this.renewDeadlineMs,
    );
  }

  private endLeadership(why: string): void {
    const leading = this.leading;
    if (!leading) return;
    this.leading = undefined;
    leading.deadline?.cancel();
    leading.controller.abort();
    this.log.warn({ lease: `${this.opts.namespace}/${this.opts.name}`, reason: why }, 'stopped leading');
    try {
      this.opts.onStoppedLeading();
    } catch (err) {
      this.log.error({ err }, 'onStoppedLeading failed');
    }
  }

  private heldByOther(): boolean {
    const holder = this.observed?.record.holderIdentity;
    return !!holder && holder !== this.opts.identity;
  }

  /** One attempt; true when we hold the lease afterwards. Never throws. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { client, namespace, name, identity } = this.opts;
    const timeoutMs = Math.max(500, Math.min(this.renewDeadlineMs / 2, 5_000));
    const now = this.clock.now();
    const spec: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.leaseMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    try {
      const lease = await client.get<Lease>(LEASES, name, namespace, { timeoutMs });
      if (!lease) {
        const created = await client.create<Lease>(
          LEASES,
          { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec },
          { timeoutMs },
        );
        this.observe(created, this.clock.now());
        return true;
      }
      const old = lease.spec ?? {};
      this.observe(lease, this.clock.now());
      const holder = old.holderIdentity ?? '';
      const expired = this.observed!.atMs + this.leaseMs <= this.clock.now();
      if (holder && holder !== identity && !expired) return false;
      if (holder === identity) {
        spec.acquireTime = old.acquireTime;
        spec.leaseTransitions = old.leaseTransitions ?? 0;
      } else spec.leaseTransitions = (old.leaseTransitions ?? 0) + 1;
      const updated = await client.replace<Lease>(LEASES, { ...lease, spec }, { timeoutMs });
      this.observe(updated, this.clock.now());
      return true;
    } catch (err) {
      if (!isConflict(err) && !isAlreadyExists(err))
        this.log.info({ err: toKubeError(err).toJSON() }, 'leader election: lease request failed');
      return false;
    }
  }

  private observe(lease: Lease, atMs: number): void {
    const record = lease.spec ?? {};
    const key = JSON.stringify([record.holderIdentity, record.renewTime, record.acquireTime, record.leaseTransitions]);
    if (this.observed?.key !== key)
      this.observed = { key, atMs, record, resourceVersion: lease.metadata.resourceVersion };
    const holder = record.holderIdentity ?? '';
    if (holder && holder !== this.lastLeader) {
      this.lastLeader = holder;
      this.opts.onNewLeader?.(holder);
    }
  }

  /** Clear holderIdentity so a standby need not wait out the lease (client-go's ReleaseOnCancel). */
  private async release(): Promise<void> {
    const { client, namespace, name, identity } = this.opts;
    try {
      const lease = await client.get<Lease>(LEASES, name, namespace, { timeoutMs: 5_000 });
      if (!lease || lease.spec?.holderIdentity !== identity) return;
      const now = microTime(this.clock.now());
      await client.replace<Lease>(
        LEASES,
        {
          ...lease,
          spec: {
            holderIdentity: '',
            leaseDurationSeconds: 1,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: lease.spec.leaseTransitions ?? 0,
          },
        },
        { timeoutMs: 5_000 },
      );
    } catch (err) {
      this.log.info({ err: toKubeError(err).toJSON() }, 'leader election: release failed (the lease will expire)');
    }
  }
}
