// The hash-chained, checkpoint-signed audit trail of one replica. Pure over an injected signer, clock and
// sink.
//
// Appends are batched: every append made before the trail next gets the event loop (in the webhook: the
// decisions of all requests read in one I/O turn) becomes one batch. Each record is hash-chained (SHA-256
// of its canonical payload, cheap); the batch's last record is signed (one Ed25519 signature per batch,
// covering the whole chain up to it), and the batch is handed to the sink in one write. Only then do the
// appends of that batch resolve: a caller that answers after `await append()` never answers a decision
// that is not written. Concurrent callers get consecutive sequence numbers in call order.
//
// Bounded: at most `maxQueue` records wait for the next write; further appends wait for room
// (backpressure) instead of growing memory. A sink that cannot keep up (a full pipe, a slow disk) thus
// slows the callers down rather than queueing records that a crash would lose.
//
// Start-up (AuditTrail.open):
//   - the sink's last line is a record of this replica → continue that chain (seq + 1, prev = its hash)
//     and append a `lifecycle: resume` record, so restarts are visible in the trail;
//   - otherwise → start a new chain (seq 0, prev = zeros) with a `chain-start` record that says why and,
//     when the last line was another replica's record, names that head.
import { randomUUID } from 'node:crypto';
import type { AuditSigner } from './keys.ts';
import {
  AUDIT_FORMAT,
  canonicalEventJson,
  GENESIS_PREV,
  headOf,
  parseLine,
  payloadText,
  recordHash,
  sha256Hex,
  toLine,
  type AuditEvent,
  type AuditRecord,
  type ChainHead,
  type ChainStartEvent,
} from './record.ts';

/** Where records go. `lastLine` lets a restarted replica continue its chain. */
export interface AuditSink {
  write(line: string, record: AuditRecord): void | Promise<void>;
  /**
   * A whole batch in one write (the trail prefers it): resolves once the lines are handed to the OS
   * (the file sink: written, fsync'd when configured; stdout: written to the pipe).
   */
  writeBatch?(lines: string[], records: AuditRecord[]): void | Promise<void>;
  /** The last complete line the sink holds (undefined: none / not readable back, e.g. stdout). */
  lastLine?(): Promise<string | undefined>;
  /** Whether the sink found a partial last line (a crash mid-write). */
  tailDamaged?(): Promise<boolean>;
  close?(): Promise<void>;
}

export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

export interface AuditTrailOptions {
  replica: string;
  signer: AuditSigner;
  sink: AuditSink;
  clock?: Clock;
  /** Chain ids for new chains (tests inject a deterministic one). */
  newChainId?: () => string;
  version?: string;
  /** Records per write (one signature each). Default 256. */
  maxBatch?: number;
  /** Records waiting for a write before further appends wait for room. Default 1024. */
  maxQueue?: number;
}

/** What a trail reports about itself (metrics, benchmark). */
export interface AuditTrailStats {
  /** Records written. */
  records: number;
  /** Batches written = signatures made. */
  batches: number;
  /** Records waiting now. */
  queued: number;
  /** Most records ever waiting at once in the queue (≤ maxQueue; appends beyond it wait outside, unrecorded and unanswered). */
  queuedHighWater: number;
  /** Appends that had to wait for room (backpressure). */
  waitedForRoom: number;
  /** Longest time from an append to its record being written and signed (ms): the signing lag. */
  lagMaxMs: number;
  /** Sum over written records of that time (ms): lagTotalMs / records = mean lag. */
  lagTotalMs: number;
}

interface Pending {
  event: AuditEvent;
  resolve: (r: AuditRecord) => void;
  reject: (e: unknown) => void;
  at: number;
}

export const DEFAULT_MAX_BATCH = 256;
export const DEFAULT_MAX_QUEUE = 1024;

export class AuditTrail {
  readonly replica: string;
  readonly #signer: AuditSigner;
  readonly #sink: AuditSink;
  readonly #clock: Clock;
  readonly #maxBatch: number;
  readonly #maxQueue: number;
  #head: ChainHead;
  #pending: Pending[] = [];
  /** Appends waiting for room in the queue, in call order. */
  #blocked: Pending[] = [];
  #scheduled = false;
  #flushing: Promise<void> | undefined;
  #closed = false;
  readonly #stats: AuditTrailStats = {
    records: 0,
    batches: 0,
    queued: 0,
    queuedHighWater: 0,
    waitedForRoom: 0,
    lagMaxMs: 0,
    lagTotalMs: 0,
  };

  private constructor(opts: AuditTrailOptions, head: ChainHead) {
    this.replica = opts.replica;
    this.#signer = opts.signer;
    this.#sink = opts.sink;
    this.#clock = opts.clock ?? systemClock;
    this.#maxBatch = Math.max(1, opts.maxBatch ?? DEFAULT_MAX_BATCH);
    this.#maxQueue = Math.max(this.#maxBatch, opts.maxQueue ?? DEFAULT_MAX_QUEUE);
    this.#head = head;
  }

  /** Open the trail: resume the sink's chain for this replica, or start a new one. Writes one record. */
  static async open(opts: AuditTrailOptions): Promise<AuditTrail> {
    if (!opts.replica || /\s/.test(opts.replica))
      throw new Error('the audit replica id must be non-empty and without whitespace');
    const newChain = opts.newChainId ?? (() => randomUUID());
    const lastText = await opts.sink.lastLine?.();
    const last = lastText === undefined ? undefined : parseLine(lastText);
    const damaged = (await opts.sink.tailDamaged?.()) ?? false;

    if (last && last.replica === opts.replica && !damaged) {
      const trail = new AuditTrail(opts, headOf(last));
      await trail.append({ type: 'lifecycle', action: 'resume', ...(opts.version ? { version: opts.version } : {}) });
      return trail;
    }
    const start: ChainStartEvent = last
      ? {
          type: 'chain-start',
          reason: last.replica === opts.replica ? 'previous-unreadable' : 'replica-changed',
          previous: { chain: last.chain, seq: last.seq, hash: recordHash(last) },
        }
      : { type: 'chain-start', reason: damaged || lastText !== undefined ? 'previous-unreadable' : 'first-start' };
    // seq -1 / genesis prev: the first append produces seq 0 with prev = zeros.
    const trail = new AuditTrail(opts, { replica: opts.replica, chain: newChain(), seq: -1, hash: GENESIS_PREV });
    await trail.append(start);
    return trail;
  }

  /** The last written record's position: what the next record will continue from. */
  get head(): ChainHead {
    return { ...this.#head };
  }

  stats(): AuditTrailStats {
    return { ...this.#stats, queued: this.#pending.length };
  }

  /** The stats, then start the peaks (queue high-water, max lag) afresh: per-interval figures. */
  takeStats(): AuditTrailStats {
    const s = this.stats();
    this.#stats.queuedHighWater = this.#pending.length;
    this.#stats.lagMaxMs = 0;
    return s;
  }

  /**
   * Record one event. Resolves when the record is written, in a batch whose last record is signed;
   * rejects if signing or the sink fails (every record of that batch; the chain then stays at the last
   * good record). Waits first while the queue is full.
   */
  append(event: AuditEvent): Promise<AuditRecord> {
    if (this.#closed) return Promise.reject(new Error('the audit trail is closed'));
    return new Promise<AuditRecord>((resolve, reject) => {
      if (this.#pending.length >= this.#maxQueue || this.#blocked.length > 0) {
        this.#stats.waitedForRoom++;
        this.#blocked.push({ event, resolve, reject, at: performance.now() });
        return;
      }
      this.#pending.push({ event, resolve, reject, at: performance.now() });
      if (this.#pending.length > this.#stats.queuedHighWater) this.#stats.queuedHighWater = this.#pending.length;
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#flushing) return;
    this.#scheduled = true;
    // setImmediate: after the current I/O phase, so every request read in it joins this batch.
    setImmediate(() => {
      this.#scheduled = false;
      this.#flushing = this.#flush().finally(() => {
        this.#flushing = undefined;
        if (this.#pending.length > 0) this.#schedule();
      });
    });
  }

  async #flush(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, this.#maxBatch);
      // Room again: let waiting appends in, in call order (they join the next batch).
      while (this.#blocked.length > 0 && this.#pending.length < this.#maxQueue)
        this.#pending.push(this.#blocked.shift()!);
      if (this.#pending.length > this.#stats.queuedHighWater) this.#stats.queuedHighWater = this.#pending.length;
      await this.#writeBatch(batch);
    }
  }

  async #writeBatch(batch: Pending[]): Promise<void> {
    const records: AuditRecord[] = [];
    const lines: string[] = [];
    let head = this.#head;
    try {
      const ts = this.#clock.now().toISOString();
      for (let i = 0; i < batch.length; i++) {
        const fields = {
          replica: this.replica,
          chain: head.chain,
          seq: head.seq + 1,
          ts,
          prev: head.hash,
          event: batch[i]!.event,
        };
        const eventJson = canonicalEventJson(fields.event);
        const text = payloadText(fields, eventJson);
        const hash = sha256Hex(text);
        const record: AuditRecord = { audit: AUDIT_FORMAT, ...fields, hash };
        if (i === batch.length - 1) record.jws = await this.#signer.sign(Buffer.from(text, 'utf8'));
        records.push(record);
        lines.push(toLine(record, eventJson));
        head = { replica: this.replica, chain: head.chain, seq: fields.seq, hash };
      }
      if (this.#sink.writeBatch) await this.#sink.writeBatch(lines, records);
      else for (let i = 0; i < lines.length; i++) await this.#sink.write(lines[i]!, records[i]!);
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    this.#head = head;
    this.#stats.records += records.length;
    this.#stats.batches++;
    const now = performance.now();
    const oldest = now - batch[0]!.at;
    if (oldest > this.#stats.lagMaxMs) this.#stats.lagMaxMs = oldest;
    for (const p of batch) this.#stats.lagTotalMs += now - p.at;
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(records[i]!);
  }

  /** Wait for pending appends, then close the sink. Later appends reject. */
  async close(): Promise<void> {
    while (this.#pending.length > 0 || this.#blocked.length > 0 || this.#flushing || this.#scheduled) {
      await (this.#flushing ?? new Promise((r) => setImmediate(r)));
    }
    this.#closed = true;
    await this.#sink.close?.();
  }
}
