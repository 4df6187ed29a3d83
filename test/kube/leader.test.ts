import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError } from '../../kube/errors.ts';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import type { KubeClient } from '../../kube/kube-client.ts';
import { LeaderElector, type Lease } from '../../kube/leader.ts';
import { LEASES } from '../../kube/resources.ts';
import { KubeSim } from '../sim/kube.ts';

// Short durations keep the test quick; nothing asserts on elapsed time, only on the order of events.
const TIMING = { leaseDurationMs: 1200, renewDeadlineMs: 800, retryPeriodMs: 100 };

type Log = string[];

describe('leader election against the simulator', () => {
  let sim: KubeSim;
  let client: HttpKubeClient;
  let n = 0;
  before(async () => {
    sim = await KubeSim.start();
    client = new HttpKubeClient(sim.kubeConfig(), { defaultTimeoutMs: 2_000 });
  });
  after(async () => {
    client.close();
    await sim.close();
  });

  /** A client that can be cut off from the apiserver (network partition of one replica). */
  function partitionable(): { client: Pick<KubeClient, 'get' | 'create' | 'replace'>; cut: () => void } {
    let cut = false;
    const guard = <T>(f: () => Promise<T>): Promise<T> =>
      cut ? Promise.reject(new KubeApiError(0, 'NetworkError', 'partitioned')) : f();
    return {
      client: {
        get: (r, name, ns, o) => guard(() => client.get(r, name, ns, o)),
        create: (r, obj, o) => guard(() => client.create(r, obj, o)),
        replace: (r, obj, o) => guard(() => client.replace(r, obj, o)),
      },
      cut: () => {
        cut = true;
      },
    };
  }

  function elector(
    id: string,
    lease: string,
    log: Log,
    c: Pick<KubeClient, 'get' | 'create' | 'replace'> = client,
  ): { el: LeaderElector; started: Promise<void>; stopped: Promise<void>; observed: (who: string) => Promise<void> } {
    let onStart!: () => void;
    let onStop!: () => void;
    const started = new Promise<void>((r) => (onStart = r));
    const stopped = new Promise<void>((r) => (onStop = r));
    const observers: { who: string; r: () => void }[] = [];
    const el = new LeaderElector({
      ...TIMING,
      client: c,
      namespace: 'default',
      name: lease,
      identity: id,
      onStartedLeading: () => {
        log.push(`${id} started`);
        onStart();
      },
      onStoppedLeading: () => {
        log.push(`${id} stopped`);
        onStop();
      },
      onNewLeader: (who) => {
        for (const o of observers) if (o.who === who) o.r();
      },
    });
    return { el, started, stopped, observed: (who) => new Promise((r) => observers.push({ who, r })) };
  }

  test('of two candidates exactly one leads; the other sees it and waits', async () => {
    const lease = `lease-${++n}`;
    const log: Log = [];
    const a = elector('a', lease, log);
    const b = elector('b', lease, log);
    a.el.start();
    await a.started;
    const bSawA = b.observed('a');
    b.el.start();
    await bSawA;
    assert.equal(a.el.isLeader, true);
    assert.equal(b.el.isLeader, false);
    const l = await client.get<Lease>(LEASES, lease, 'default');
    assert.equal(l?.spec?.holderIdentity, 'a');
    assert.equal(l?.spec?.leaseDurationSeconds, 2);
    await b.el.stop();
    await a.el.stop();
  });

  test('a leader that cannot renew stops at once; the standby takes over only after', async () => {
    const lease = `lease-${++n}`;
    const log: Log = [];
    const part = partitionable();
    const a = elector('a', lease, log, part.client);
    const b = elector('b', lease, log);
    a.el.start();
    await a.started;
    b.el.start();
    await b.observed('a');
    part.cut();
    await a.stopped;
    assert.equal(a.el.isLeader, false);
    await b.started;
    assert.deepEqual(log, ['a started', 'a stopped', 'b started'], 'never two leaders at once');
    const l = await client.get<Lease>(LEASES, lease, 'default');
    assert.equal(l?.spec?.holderIdentity, 'b');
    assert.equal(l?.spec?.leaseTransitions, 1);
    await b.el.stop();
    await a.el.stop();
  });

  test('stopping releases the lease so a standby takes over without waiting it out', async () => {
    const lease = `lease-${++n}`;
    const log: Log = [];
    const a = elector('a', lease, log);
    a.el.start();
    await a.started;
    await a.el.stop();
    const released = await client.get<Lease>(LEASES, lease, 'default');
    assert.equal(released?.spec?.holderIdentity, '', 'holderIdentity cleared (ReleaseOnCancel)');
    const b = elector('b', lease, log);
    b.el.start();
    await b.started;
    assert.deepEqual(log, ['a started', 'a stopped', 'b started']);
    await b.el.stop();
  });

  test('candidates racing for a new lease: one create wins, the 409 loser stands by', async () => {
    const lease = `lease-${++n}`;
    const log: Log = [];
    const a = elector('a', lease, log);
    const b = elector('b', lease, log);
    const aSawB = a.observed('b');
    const bSawA = b.observed('a');
    a.el.start();
    b.el.start();
    const winner = await Promise.race([a.started.then(() => 'a'), b.started.then(() => 'b')]);
    await (winner === 'a' ? bSawA : aSawB);
    assert.deepEqual(log, [`${winner} started`]);
    assert.equal([a.el.isLeader, b.el.isLeader].filter(Boolean).length, 1);
    await a.el.stop();
    await b.el.stop();
  });
});
