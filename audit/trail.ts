// The hash-chained, signed audit trail of one replica. Pure over an injected signer, clock and sink:
// appends are serialised (each record needs the previous one's hash), so concurrent callers get
// consecutive sequence numbers in call order.
//
// Start-up (AuditTrail.open):
//   - the sink's last line is a record of this replica → continue that chain (seq + 1, prev = its hash)
//     and append a `lifecycle: resume` record, so restarts are visible in the trail;
//   - otherwise → start a new chain (seq 0, prev = zeros) with a `chain-start` record that says why and,
//     when the last line was another replica's record, names that head.
import { randomUUID } from 'node:crypto';
import type { AuditSigner } from './keys.ts';
import {
  AUDIT_FORMAT, GENESIS_PREV, headOf, parseLine, recordHash, toLine,
  type AuditEvent, type AuditPayload, type AuditRecord, type ChainHead, type ChainStartEvent,
} from './record.ts';

/** Where records go. `lastLine` lets a restarted replica continue its chain. */
export interface AuditSink {
  write(line: string, record: AuditRecord): void | Promise<void>;
  /** The last complete line the sink holds (undefined: none / not readable back, e.g. stdout). */
  lastLine?(): Promise<string | undefined>;
  /** Whether the sink found a partial last line (a crash mid-write). */
  tailDamaged?(): Promise<boolean>;
  close?(): Promise<void>;
}

export interface Clock { now(): Date }
export const systemClock: Clock = { now: () => new Date() };

export interface AuditTrailOptions {
  replica: string;
  signer: AuditSigner;
  sink: AuditSink;
  clock?: Clock;
  /** Chain ids for new chains (tests inject a deterministic one). */
  newChainId?: () => string;
  version?: string;
}

export class AuditTrail {
  readonly replica: string;
  readonly #signer: AuditSigner;
  readonly #sink: AuditSink;
  readonly #clock: Clock;
  #head: ChainHead;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(opts: AuditTrailOptions, head: ChainHead) {
    this.replica = opts.replica;
    this.#signer = opts.signer;
    this.#sink = opts.sink;
    this.#clock = opts.clock ?? systemClock;
    this.#head = head;
  }

  /** Open the trail: resume the sink's chain for this replica, or start a new one. Writes one record. */
  static async open(opts: AuditTrailOptions): Promise<AuditTrail> {
    if (!opts.replica || /\s/.test(opts.replica)) throw new Error('the audit replica id must be non-empty and without whitespace');
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
      ? { type: 'chain-start', reason: last.replica === opts.replica ? 'previous-unreadable' : 'replica-changed', previous: { chain: last.chain, seq: last.seq, hash: recordHash(last) } }
      : { type: 'chain-start', reason: damaged || lastText !== undefined ? 'previous-unreadable' : 'first-start' };
    // seq -1 / genesis prev: the first append produces seq 0 with prev = zeros.
    const trail = new AuditTrail(opts, { replica: opts.replica, chain: newChain(), seq: -1, hash: GENESIS_PREV });
    await trail.append(start);
    return trail;
  }

  /** The last record's position: what the next record will continue from. */
  get head(): ChainHead {
    return { ...this.#head };
  }

  /** Sign and write one event. Rejects if signing or the sink fails; the chain then stays at the last good record. */
  append(event: AuditEvent): Promise<AuditRecord> {
    const next = this.#queue.then(() => this.#appendNow(event));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #appendNow(event: AuditEvent): Promise<AuditRecord> {
    const payload: AuditPayload = {
      v: 1, replica: this.replica, chain: this.#head.chain, seq: this.#head.seq + 1,
      ts: this.#clock.now().toISOString(), prev: this.#head.hash, event,
    };
    const jws = await this.#signer.sign(new TextEncoder().encode(JSON.stringify(payload)));
    const { v: _v, ...fields } = payload;
    const record: AuditRecord = { audit: AUDIT_FORMAT, ...fields, jws };
    await this.#sink.write(toLine(record), record);
    this.#head = headOf(record);
    return record;
  }

  /** Wait for pending appends, then close the sink. */
  async close(): Promise<void> {
    await this.#queue;
    await this.#sink.close?.();
  }
}
