// One audit trail for several processes: node:cluster workers answer admission reviews, the primary
// holds the trail (one chain, one writer). A worker sends its decisions' events over the IPC channel,
// batched per event-loop turn (one message for all the requests it read in that turn); the primary
// appends them to its trail in the order received and acknowledges the message once the trail wrote
// them (the trail resolves an append only after its batch is signed and handed to the sink). The
// worker's append resolves on that acknowledgement: a worker answers no decision the writer has not
// written.
//
// Bounded: the primary's trail keeps its queue bound (appends beyond maxQueue wait for room), and each
// worker has at most `maxInFlight` events sent and not yet acknowledged; further appends wait, in call
// order, as in one process. If the primary dies the channel closes and node:cluster ends the worker at
// once (lib/internal/cluster/child.js exits on an unexpected 'disconnect'): decisions still waiting for
// their acknowledgement are never answered.
import type { AuditEvent } from './record.ts';
import { DEFAULT_MAX_QUEUE } from './trail.ts';

/** What a worker sends: the events of one turn, to append in this order. */
export interface TrailAppendMessage {
  vgTrail: 'append';
  id: number;
  events: AuditEvent[];
}

/** What the primary answers once every event of message `id` is written (or failed). */
export interface TrailAckMessage {
  vgTrail: 'ack';
  id: number;
  /** [index in the message's events, error message] of the events that could not be written. */
  failed?: Array<[number, string]>;
}

/** The end of an IPC channel: a worker's `process`, or the primary's `cluster.Worker`. */
export interface TrailChannel {
  send(message: TrailAppendMessage | TrailAckMessage, callback?: (err: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/** What appends: the trail itself (trail.ts) or its remote end in a worker (remoteTrail). */
export interface TrailAppender {
  append(event: AuditEvent): Promise<unknown>;
}

const isAppend = (m: unknown): m is TrailAppendMessage =>
  typeof m === 'object' && m !== null && (m as { vgTrail?: unknown }).vgTrail === 'append';
const isAck = (m: unknown): m is TrailAckMessage =>
  typeof m === 'object' && m !== null && (m as { vgTrail?: unknown }).vgTrail === 'ack';

/**
 * Primary side: append every event a worker sends to `trail`, acknowledge each message once all its
 * events are written. A message's events are appended synchronously, in order, so they keep the order
 * the worker decided them in, and they join the trail's current batch with other workers' events.
 */
export function serveTrail(channel: TrailChannel, trail: TrailAppender): void {
  channel.on('message', (m) => {
    if (!isAppend(m)) return;
    const pending = m.events.map((e) => trail.append(e));
    void Promise.allSettled(pending).then((results) => {
      const failed: Array<[number, string]> = [];
      results.forEach((r, i) => {
        if (r.status === 'rejected') failed.push([i, r.reason instanceof Error ? r.reason.message : String(r.reason)]);
      });
      // A worker that died meanwhile: its decisions were never answered; nothing to tell.
      channel.send({ vgTrail: 'ack', id: m.id, ...(failed.length ? { failed } : {}) }, () => undefined);
    });
  });
}

interface Waiting {
  event: AuditEvent;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Worker side: an appender whose appends resolve once the primary's trail wrote the event, and reject
 * (the decision is then answered as a denial, http-app.ts) when it could not.
 */
export function remoteTrail(channel: TrailChannel, opts: { maxInFlight?: number } = {}): TrailAppender {
  const maxInFlight = Math.max(1, opts.maxInFlight ?? DEFAULT_MAX_QUEUE);
  let nextId = 0;
  let inFlight = 0;
  let turn: Waiting[] = [];
  const blocked: Waiting[] = [];
  const sent = new Map<number, Waiting[]>();
  let scheduled = false;

  const flush = (): void => {
    scheduled = false;
    const batch = turn;
    turn = [];
    if (batch.length === 0) return;
    const id = nextId++;
    sent.set(id, batch);
    channel.send({ vgTrail: 'append', id, events: batch.map((w) => w.event) }, (err) => {
      if (!err) return;
      sent.delete(id);
      settle(batch.length);
      for (const w of batch) w.reject(err);
    });
  };
  const enqueue = (w: Waiting): void => {
    inFlight++;
    turn.push(w);
    if (!scheduled) {
      scheduled = true;
      // After the current I/O phase: every request read in it goes in one message (as the trail batches).
      setImmediate(flush);
    }
  };
  const settle = (n: number): void => {
    inFlight -= n;
    while (blocked.length > 0 && inFlight < maxInFlight) enqueue(blocked.shift()!);
  };

  channel.on('message', (m) => {
    if (!isAck(m)) return;
    const batch = sent.get(m.id);
    if (!batch) return;
    sent.delete(m.id);
    const failed = new Map(m.failed ?? []);
    settle(batch.length);
    batch.forEach((w, i) => {
      const err = failed.get(i);
      if (err === undefined) w.resolve();
      else w.reject(new Error(`the audit trail writer could not record this decision: ${err}`));
    });
  });

  return {
    append(event) {
      return new Promise<void>((resolve, reject) => {
        const w = { event, resolve, reject };
        if (inFlight >= maxInFlight || blocked.length > 0) blocked.push(w);
        else enqueue(w);
      });
    },
  };
}
