// One audit trail for several processes (trail/ipc.ts): a worker's append resolves only once the
// primary's trail wrote the record, fails when the writer could not write it, keeps a bounded number of
// events in flight, and the workers' events make one chain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createSigner, generateAuditKey, mergeJwks } from '../../trail/keys.ts';
import { remoteTrail, serveTrail, type TrailChannel } from '../../trail/ipc.ts';
import { AuditTrail, type AuditSink } from '../../trail/trail.ts';
import { verifyAuditFiles } from '../../trail/verify.ts';
import type { AuditEvent } from '../../trail/record.ts';

/** Two ends of an IPC channel: a message sent on one arrives on the other a turn later, as over a pipe. */
function channelPair(): { worker: TrailChannel & { sent: unknown[] }; primary: TrailChannel } {
  const toWorker = new EventEmitter();
  const toPrimary = new EventEmitter();
  const sent: unknown[] = [];
  const end = (incoming: EventEmitter, outgoing: EventEmitter, log?: unknown[]) => ({
    send(message: unknown, cb?: (err: Error | null) => void) {
      log?.push(message);
      setImmediate(() => {
        outgoing.emit('message', message);
        cb?.(null);
      });
      return true;
    },
    on(event: 'message', listener: (m: unknown) => void) {
      incoming.on(event, listener);
      return this;
    },
  });
  return { worker: { ...end(toWorker, toPrimary, sent), sent }, primary: end(toPrimary, toWorker) };
}

const event = (uid: string): AuditEvent => ({
  type: 'admission',
  uid,
  kind: 'vaultgate.io/v1alpha1/VaultPolicy',
  operation: 'CREATE',
  user: { username: 'alice' },
  outcome: 'allowed',
  rules: [],
  warnings: [],
  patch: [],
});

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** A sink that holds each write until released. */
function heldSink(): AuditSink & { lines: string[]; release(): void; fail(err: Error): void } {
  const lines: string[] = [];
  let waiting: Array<{ resolve: () => void; reject: (e: Error) => void; batch: string[] }> = [];
  let open = true;
  return {
    lines,
    write: () => undefined,
    writeBatch(batch) {
      if (open) {
        lines.push(...batch);
        return;
      }
      return new Promise<void>((resolve, reject) => waiting.push({ resolve, reject, batch }));
    },
    release() {
      for (const w of waiting) {
        lines.push(...w.batch);
        w.resolve();
      }
      waiting = [];
      open = true;
    },
    fail(err) {
      for (const w of waiting) w.reject(err);
      waiting = [];
    },
    hold() {
      open = false;
    },
  } as AuditSink & { lines: string[]; release(): void; fail(err: Error): void; hold(): void };
}

async function openTrail(sink: AuditSink): Promise<{ trail: AuditTrail; jwks: ReturnType<typeof mergeJwks> }> {
  const key = await generateAuditKey();
  const trail = await AuditTrail.open({ replica: 'w-test', signer: createSigner(key), sink });
  return { trail, jwks: mergeJwks(undefined, key.publicJwk) };
}

test("a worker's append resolves only after the primary's trail wrote the record", async () => {
  const sink = heldSink() as ReturnType<typeof heldSink> & { hold(): void };
  const { trail } = await openTrail(sink);
  const { worker, primary } = channelPair();
  serveTrail(primary, trail);
  const remote = remoteTrail(worker);
  sink.hold();
  let done = false;
  const appended = remote.append(event('uid-held')).then(() => {
    done = true;
  });
  await turns(20);
  assert.equal(done, false, 'answered before the record was written');
  assert.ok(!sink.lines.some((l) => l.includes('uid-held')));
  sink.release();
  await appended;
  assert.ok(
    sink.lines.some((l) => l.includes('"uid":"uid-held"')),
    'resolved, and the record is in the sink',
  );
});

test('an event the writer cannot write rejects in the worker (the decision is not answered as made)', async () => {
  const sink = heldSink() as ReturnType<typeof heldSink> & { hold(): void };
  const { trail } = await openTrail(sink);
  const { worker, primary } = channelPair();
  serveTrail(primary, trail);
  const remote = remoteTrail(worker);
  sink.hold();
  const appended = remote.append(event('uid-lost'));
  await turns(20);
  sink.fail(new Error('disk full'));
  await assert.rejects(appended, /could not record this decision: disk full/);
});

test('a worker keeps at most maxInFlight events unacknowledged; the rest wait in order', async () => {
  const { worker } = channelPair(); // no primary serving: nothing is ever acknowledged
  const remote = remoteTrail(worker, { maxInFlight: 3 });
  for (let i = 0; i < 10; i++) void remote.append(event(`uid-${i}`));
  await turns(10);
  const sentEvents = worker.sent.flatMap((m) => (m as { events: AuditEvent[] }).events);
  assert.deepEqual(
    sentEvents.map((e) => (e as { uid: string }).uid),
    ['uid-0', 'uid-1', 'uid-2'],
  );
});

test("two workers' events make one chain with every record, and it verifies", async () => {
  const sink = heldSink();
  const { trail, jwks } = await openTrail(sink);
  const a = channelPair();
  const b = channelPair();
  serveTrail(a.primary, trail);
  serveTrail(b.primary, trail);
  const ra = remoteTrail(a.worker);
  const rb = remoteTrail(b.worker);
  const uids: string[] = [];
  const all: Array<Promise<unknown>> = [];
  for (let i = 0; i < 50; i++) {
    uids.push(`a-${i}`, `b-${i}`);
    all.push(ra.append(event(`a-${i}`)), rb.append(event(`b-${i}`)));
    if (i % 7 === 0) await turns(1);
  }
  await Promise.all(all);
  const text = `${sink.lines.join('\n')}\n`;
  for (const uid of uids) assert.ok(text.includes(`"uid":"${uid}"`), `record of ${uid}`);
  const report = await verifyAuditFiles([{ name: 'audit.log', text }], jwks);
  assert.equal(report.ok, true, JSON.stringify(report.issues));
  assert.equal(report.chains.length, 1);
  assert.equal(report.admissions, 100);
});
