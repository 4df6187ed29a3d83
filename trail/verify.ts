// Verification of audit files: every record's hash against its content, every checkpoint's signature
// (against a JWKS) and readable fields against its signed payload, chain continuity and sequence per
// (replica, chain), and that every record is covered by a later valid checkpoint of its chain (a signed
// record commits to the whole chain before it through the prev hashes). Each problem names the file,
// line, replica, chain and seq, what was expected and what was found.
//
// Files are read in the order given, each record continuing its own chain, so interleaved lines of
// several replicas (a shipped stdout log) and rotated files (oldest first) verify alike. A chain that
// begins after seq 0 is a notice (older files rotated away); a chain that begins mid-way right after
// another chain of the same replica in the same file is a splice (an error).
import { compactVerify, createLocalJWKSet, errors as joseErrors, type JSONWebKeySet } from 'jose';
import {
  AUDIT_FORMAT,
  GENESIS_PREV,
  hasPayloadScalars,
  JWS_TYPE,
  PAYLOAD_VERSION,
  recordHash,
  type AuditPayload,
  type AuditRecord,
} from './record.ts';

export type IssueKind =
  | 'unparsable'
  | 'truncated'
  | 'bad-signature'
  | 'unknown-key'
  | 'bad-header'
  | 'field-mismatch'
  | 'bad-genesis'
  | 'prev-mismatch'
  | 'missing'
  | 'out-of-order'
  | 'duplicate'
  | 'conflict'
  | 'spliced'
  | 'starts-mid-chain'
  | 'previous-head-mismatch'
  | 'unlinked-restart'
  | 'consequence'
  | 'unsigned-tail';

export interface VerifyIssue {
  severity: 'error' | 'notice';
  kind: IssueKind;
  file: string;
  line: number;
  replica?: string;
  chain?: string;
  seq?: number;
  expected?: string;
  found?: string;
  message: string;
}

export interface ChainSummary {
  replica: string;
  chain: string;
  records: number;
  firstSeq: number;
  lastSeq: number;
  /** Hash of the last record: what the next one must name as prev. */
  headHash: string;
  /** Begins with its chain-start record (nothing before it is missing). */
  fromGenesis: boolean;
  files: string[];
  /** Signed records (checkpoints) that verified. */
  checkpoints: number;
}

export interface VerifyReport {
  ok: boolean;
  records: number;
  /** Lines that are not audit records (other log lines on a shared stdout). */
  ignoredLines: number;
  issues: VerifyIssue[];
  chains: ChainSummary[];
  /** Admission records. */
  admissions: number;
  /**
   * Admission records whose caller was not authenticated by a client certificate (the webhook ran
   * without --client-ca-file, or the record predates caller recording): their `user` is only what the
   * request body claimed.
   */
  unauthenticated: number;
  /**
   * Admission records with a verified client certificate but no `caller.vouchedBy`: written before
   * subject pinning, when any certificate of the client CA was accepted whatever its subject.
   */
  unpinned: number;
  /** Admission records no caller authentication vouches for: unauthenticated + unpinned. */
  unvouched: number;
}

export interface VerifyInput {
  name: string;
  text: string;
}

interface Seen {
  file: string;
  line: number;
  hash: string;
}

interface ChainState {
  summary: ChainSummary;
  lastSeq: number;
  lastHash: string;
  lastWhere: { file: string; line: number };
  seen: Map<number, Seen>;
  /** Missing seq numbers reported as a gap, resolved if they turn up later (then: out of order). */
  gaps: Map<number, VerifyIssue>;
  /** The previous line of this chain failed verification: a following prev mismatch is its consequence. */
  lastBad: boolean;
  /** Records since the last valid checkpoint of this chain (not yet covered by a signature). */
  uncovered: Array<{ file: string; line: number; seq: number }>;
}

type Where = { file: string; line: number };
/** Where a record is and what it claims to be (any of replica, chain, seq may be absent on a broken line). */
type RecordIdent = Where & { replica?: string; chain?: string; seq?: number };
/** A record's chain identity, once it is known to have one. */
type ChainId = { replica: string; chain: string; seq: number };

/** The counters of the report, accounted line by line. */
interface Tally {
  records: number;
  ignoredLines: number;
  admissions: number;
  unauthenticated: number;
  unpinned: number;
}

/** Everything one verification run accumulates over the files. */
interface Run {
  keySet: ReturnType<typeof createLocalJWKSet>;
  issues: VerifyIssue[];
  chains: Map<string, ChainState>;
  tally: Tally;
}

/** A record with a chain identity, ready to be placed on its chain. */
interface ChainedRecord {
  rec: AuditPayload;
  id: ChainId;
  where: Where;
  hash: string;
  /** Verification of the line itself found a problem. */
  bad: boolean;
  /** A checkpoint whose signature and fields verified. */
  signed: boolean;
}

export async function verifyAuditFiles(inputs: readonly VerifyInput[], jwks: JSONWebKeySet): Promise<VerifyReport> {
  const run: Run = {
    keySet: createLocalJWKSet(jwks),
    issues: [],
    chains: new Map(),
    tally: { records: 0, ignoredLines: 0, admissions: 0, unauthenticated: 0, unpinned: 0 },
  };
  for (const input of inputs) await verifyFile(input, run);
  for (const st of run.chains.values()) {
    const tail = unsignedTailIssue(st);
    if (tail) run.issues.push(tail);
  }
  sortByPosition(run.issues, inputs);
  return buildReport(run);
}

/** Verifies a file line by line, each record continuing its own chain. */
async function verifyFile(input: VerifyInput, run: Run): Promise<void> {
  const lines = input.text.split('\n');
  const cutOff = !input.text.endsWith('\n');
  /** The chain each replica was last seen in, in this file (splice detection). */
  const lastInFile = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    if (text.trim() === '') continue;
    const where = { file: input.name, line: i + 1 };
    const parsed = parseLine(text, where, cutOff && i === lines.length - 1);
    if (parsed.kind === 'other') run.tally.ignoredLines++;
    else if (parsed.kind === 'broken') run.issues.push(parsed.issue);
    else await verifyRecord(parsed.record, where, lastInFile, run);
  }
}

export type ParsedLine =
  { kind: 'record'; record: AuditRecord } | { kind: 'broken'; issue: VerifyIssue } | { kind: 'other' };

/**
 * What a line of a file is: an audit record, a broken one (the file's cut-off last line, or a line
 * naming the audit format that is not JSON), or another log line sharing the stream.
 */
export function parseLine(text: string, where: Where, isCutOffLastLine: boolean): ParsedLine {
  let plain: AuditRecord;
  try {
    plain = JSON.parse(text) as AuditRecord;
  } catch {
    if (isCutOffLastLine)
      return {
        kind: 'broken',
        issue: {
          severity: 'error',
          kind: 'truncated',
          ...where,
          message: `${at(where)}: the last line is an incomplete record: the file was cut off (truncated) mid-record`,
        },
      };
    if (text.includes(AUDIT_FORMAT))
      return {
        kind: 'broken',
        issue: {
          severity: 'error',
          kind: 'unparsable',
          ...where,
          message: `${at(where)}: an audit record that is not valid JSON (cut short or edited)`,
        },
      };
    return { kind: 'other' };
  }
  if (typeof plain !== 'object' || plain === null || plain.audit !== AUDIT_FORMAT) return { kind: 'other' };
  return { kind: 'record', record: plain };
}

/** One record: its signature and hash, the admission counters, then its place on its chain. */
async function verifyRecord(plain: AuditRecord, where: Where, lastInFile: Map<string, string>, run: Run) {
  run.tally.records++;
  const ident: RecordIdent = {
    ...where,
    replica: str(plain.replica),
    chain: str(plain.chain),
    seq: typeof plain.seq === 'number' ? plain.seq : undefined,
  };
  const hash = contentHash(plain);
  if (hash === undefined) {
    run.issues.push({
      severity: 'error',
      kind: 'unparsable',
      ...ident,
      message: `${at(ident, ident)}: an audit record without replica, chain, seq, ts, prev and event`,
    });
    return;
  }
  const checkpoint = await checkCheckpoint(plain, ident, run.keySet);
  // An edit already named against the signed payload is not repeated against the hash.
  const hashIssue = checkpoint.edited ? undefined : contentHashIssue(plain, hash, ident);
  const lineIssues = hashIssue ? [...checkpoint.issues, hashIssue] : checkpoint.issues;
  run.issues.push(...lineIssues);
  countAdmission(plain, run.tally);
  // Chain tracking uses the signed values when the signature holds, the claimed ones otherwise.
  const rec = checkpoint.payload ?? (plain as unknown as AuditPayload);
  if (typeof rec.replica !== 'string' || typeof rec.chain !== 'string' || typeof rec.seq !== 'number') return;
  const id = { replica: rec.replica, chain: rec.chain, seq: rec.seq };
  const bad = lineIssues.length > 0;
  placeOnChain({ rec, id, where, hash, bad, signed: checkpoint.signed }, lastInFile, run);
}

interface CheckpointCheck {
  /** The signed payload, when the JWS verified against the JWKS. */
  payload?: AuditPayload;
  issues: VerifyIssue[];
  /** Signature, header and readable fields all verified. */
  signed: boolean;
  /** The readable fields differ from the signed payload (reported). */
  edited: boolean;
}

/** A checkpoint (a record with a jws): its signature, and the readable fields against the signed payload. */
async function checkCheckpoint(
  plain: AuditRecord,
  ident: RecordIdent,
  keySet: Run['keySet'],
): Promise<CheckpointCheck> {
  if (plain.jws === undefined) return { issues: [], signed: false, edited: false };
  const opened = await openJws(plain.jws, ident, keySet);
  if (!opened.payload) return { issues: opened.issues, signed: false, edited: false };
  const mismatch = signedFieldsIssue(plain, opened.payload, ident);
  if (mismatch) return { payload: opened.payload, issues: [...opened.issues, mismatch], signed: false, edited: true };
  return { payload: opened.payload, issues: opened.issues, signed: opened.issues.length === 0, edited: false };
}

/** Verifies the JWS against the key set and reads its payload. */
async function openJws(
  jws: unknown,
  ident: RecordIdent,
  keySet: Run['keySet'],
): Promise<{ payload?: AuditPayload; issues: VerifyIssue[] }> {
  if (typeof jws !== 'string')
    return {
      issues: [
        {
          severity: 'error',
          kind: 'bad-signature',
          ...ident,
          message: `${at(ident, ident)}: the jws field is not a compact JWS`,
        },
      ],
    };
  const issues: VerifyIssue[] = [];
  try {
    const res = await compactVerify(jws, keySet, { algorithms: ['EdDSA', 'Ed25519'] });
    if (res.protectedHeader.typ !== JWS_TYPE) {
      issues.push({
        severity: 'error',
        kind: 'bad-header',
        ...ident,
        expected: JWS_TYPE,
        found: String(res.protectedHeader.typ),
        message: `${at(ident, ident)}: JWS typ is "${String(res.protectedHeader.typ)}", expected "${JWS_TYPE}"`,
      });
    }
    return { payload: JSON.parse(new TextDecoder().decode(res.payload)) as AuditPayload, issues };
  } catch (err) {
    issues.push(signatureIssue(err, jws, ident));
    return { issues };
  }
}

/** The readable fields of a checkpoint against its signed payload: an edited line, or undefined. */
function signedFieldsIssue(plain: AuditRecord, payload: AuditPayload, ident: RecordIdent): VerifyIssue | undefined {
  const diffs: string[] = [];
  if (payload.v !== PAYLOAD_VERSION) diffs.push('v');
  for (const k of ['replica', 'chain', 'seq', 'ts', 'prev', 'event'] as const)
    diffPaths(k, plain[k], payload[k], diffs);
  if (diffs.length === 0) return undefined;
  const first = diffs[0] ?? '';
  return {
    severity: 'error',
    kind: 'field-mismatch',
    ...ident,
    expected: describe(payload, first),
    found: describe(plain, first),
    message: `${at(ident, ident)}: field ${diffs.join(', ')} differs from the signed payload (signed ${describe(payload, first)}, line says ${describe(plain, first)}): the line was edited`,
  };
}

/** The record's content against its own hash: an edited line, or undefined. */
function contentHashIssue(plain: AuditRecord, hash: string, ident: RecordIdent): VerifyIssue | undefined {
  if (plain.hash === hash) return undefined;
  return {
    severity: 'error',
    kind: 'field-mismatch',
    ...ident,
    expected: hash,
    found: String(plain.hash),
    message: `${at(ident, ident)}: the record's content does not match its hash (content hashes to ${short(hash)}, line says ${short(String(plain.hash))}): the line was edited`,
  };
}

/** Admission records, and those no caller authentication vouches for. */
function countAdmission(plain: AuditRecord, tally: Tally): void {
  if (plain.event?.type !== 'admission') return;
  tally.admissions++;
  if (plain.event.caller?.authenticated !== true) tally.unauthenticated++;
  else if (typeof plain.event.caller.vouchedBy !== 'string') tally.unpinned++;
}

/** Puts a record on its (replica, chain): the first one opens the chain, the others continue it. */
function placeOnChain(r: ChainedRecord, lastInFile: Map<string, string>, run: Run): void {
  const key = `${r.id.replica}\u0000${r.id.chain}`;
  const st = run.chains.get(key);
  if (st) {
    continueChain(st, r, lastInFile, run.issues);
    return;
  }
  const opened = openChain(r);
  run.chains.set(key, opened);
  checkChainBeginning(r, lastInFile, run.chains, run.issues);
  advanceHead(opened, r, lastInFile);
}

function openChain(r: ChainedRecord): ChainState {
  return {
    summary: {
      replica: r.id.replica,
      chain: r.id.chain,
      records: 0,
      firstSeq: r.id.seq,
      lastSeq: r.id.seq,
      headHash: r.hash,
      fromGenesis: r.id.seq === 0,
      files: [],
      checkpoints: 0,
    },
    lastSeq: r.id.seq,
    lastHash: r.hash,
    lastWhere: r.where,
    seen: new Map(),
    gaps: new Map(),
    lastBad: r.bad,
    uncovered: [],
  };
}

/**
 * The first record of a chain in the files: a genesis (seq 0) must be a chain-start; a chain that begins
 * mid-way is a splice right after another chain of the replica in this file, else older files are missing.
 */
function checkChainBeginning(
  { rec, id, where }: ChainedRecord,
  lastInFile: Map<string, string>,
  chains: Map<string, ChainState>,
  issues: VerifyIssue[],
): void {
  const pos = { ...where, ...id };
  if (id.seq === 0) {
    if (rec.prev !== GENESIS_PREV || rec.event?.type !== 'chain-start')
      issues.push({
        severity: 'error',
        kind: 'bad-genesis',
        ...pos,
        message: `${at(where, id)}: seq 0 must be a chain-start record with prev ${GENESIS_PREV.slice(0, 12)}…`,
      });
    else checkRestartLink(rec, pos, chains, issues);
    return;
  }
  const other = lastInFile.get(id.replica);
  if (other !== undefined && other !== id.chain)
    issues.push({
      severity: 'error',
      kind: 'spliced',
      ...pos,
      expected: `chain ${short(other)} to continue, or a chain-start record`,
      found: `chain ${short(id.chain)} at seq ${id.seq}`,
      message: `${at(where, id)}: replica "${id.replica}" switches from chain ${short(other)} to chain ${short(id.chain)} mid-way (seq ${id.seq}, no chain-start record): two chains were spliced`,
    });
  else
    issues.push({
      severity: 'notice',
      kind: 'starts-mid-chain',
      ...pos,
      message: `${at(where, id)}: chain ${short(id.chain)} of replica "${id.replica}" begins at seq ${id.seq}: seq 0–${id.seq - 1} are not in the given files (older files rotated away, or not given)`,
    });
}

/**
 * A record of a chain already seen: the next seq (or one after a gap) moves the head; an earlier seq is a
 * copy, a fork, or a late record that fills a gap.
 */
function continueChain(st: ChainState, r: ChainedRecord, lastInFile: Map<string, string>, issues: VerifyIssue[]): void {
  const expectedSeq = st.lastSeq + 1;
  const prevSeen = st.seen.get(r.id.seq);
  if (r.id.seq === expectedSeq) {
    const link = prevLinkIssue(st, r);
    if (link) issues.push(link);
    advanceHead(st, r, lastInFile);
  } else if (r.id.seq > expectedSeq) {
    const gap = gapIssue(st, r, expectedSeq);
    issues.push(gap);
    for (let s = expectedSeq; s < r.id.seq; s++) st.gaps.set(s, gap);
    advanceHead(st, r, lastInFile);
  } else if (prevSeen) {
    issues.push(repeatedSeqIssue(r, prevSeen, expectedSeq));
  } else {
    placeLateRecord(st, r, expectedSeq, issues);
  }
}

/** The next record must name the head's hash as prev (a consequence, if the head itself was bad). */
function prevLinkIssue(st: ChainState, { rec, id, where }: ChainedRecord): VerifyIssue | undefined {
  if (rec.prev === st.lastHash) return undefined;
  const consequence = st.lastBad;
  return chainIssue(
    consequence ? 'consequence' : 'prev-mismatch',
    { id, where },
    st.lastHash,
    String(rec.prev),
    consequence
      ? `${at(where, id)}: does not chain to ${at(st.lastWhere)} — a consequence of the problem reported there`
      : `${at(where, id)}: prev hash ${short(String(rec.prev))} does not match ${at(st.lastWhere)} (seq ${st.lastSeq}, hash ${short(st.lastHash)}): the record before it was altered, replaced or inserted`,
    consequence ? 'notice' : 'error',
  );
}

/** A finding about one chained record: where it is, its chain and seq, what was expected there and what was found. */
function chainIssue(
  kind: IssueKind,
  { id, where }: Pick<ChainedRecord, 'id' | 'where'>,
  expected: string,
  found: string,
  message: string,
  severity: VerifyIssue['severity'] = 'error',
): VerifyIssue {
  return { severity, kind, ...where, ...id, expected, found, message };
}

/** Seq numbers skipped after the head: missing, until they turn up later. */
function gapIssue(st: ChainState, { id, where }: ChainedRecord, expectedSeq: number): VerifyIssue {
  const missing = id.seq - expectedSeq;
  return chainIssue(
    'missing',
    { id, where },
    `seq ${expectedSeq}`,
    `seq ${id.seq}`,
    `${at(where, id)}: expected seq ${expectedSeq} after ${at(st.lastWhere)}, found seq ${id.seq}: ${missing === 1 ? `record seq ${expectedSeq} is` : `records seq ${expectedSeq}–${id.seq - 1} are`} missing (dropped)`,
  );
}

/** A seq seen before: the same record again (a copy), or a different one (a fork or splice). */
function repeatedSeqIssue({ id, where, hash }: ChainedRecord, prevSeen: Seen, expectedSeq: number): VerifyIssue {
  if (prevSeen.hash === hash)
    return chainIssue(
      'duplicate',
      { id, where },
      `seq ${expectedSeq}`,
      `seq ${id.seq} again`,
      `${at(where, id)}: duplicate of ${at(prevSeen)} (seq ${id.seq}): a record was copied`,
    );
  return chainIssue(
    'conflict',
    { id, where },
    `seq ${expectedSeq}`,
    `a second, different seq ${id.seq}`,
    `${at(where, id)}: a different record with seq ${id.seq} already appeared at ${at(prevSeen)}: the chain was forked or spliced`,
  );
}

/**
 * A record behind the head not seen before: it turns the gap it fills into an out-of-order finding (or is
 * reported as reordered), must chain to the seq before it, and leaves the head where it was.
 */
function placeLateRecord(st: ChainState, r: ChainedRecord, expectedSeq: number, issues: VerifyIssue[]): void {
  const { rec, id, where, hash } = r;
  const gap = st.gaps.get(id.seq);
  if (gap) {
    gap.kind = 'out-of-order';
    gap.message = `${at(gap)}: records out of order: seq ${gap.seq} appears before seq ${id.seq} (${at(where)}); expected ascending seq`;
    st.gaps.delete(id.seq);
    for (const [s, g] of st.gaps) if (g === gap) st.gaps.delete(s);
  } else {
    issues.push(
      chainIssue(
        'out-of-order',
        { id, where },
        `seq ${expectedSeq}`,
        `seq ${id.seq}`,
        `${at(where, id)}: seq ${id.seq} appears after seq ${st.lastSeq} (${at(st.lastWhere)}): records were reordered`,
      ),
    );
  }
  const before = st.seen.get(id.seq - 1);
  if (before && rec.prev !== before.hash && !r.bad)
    issues.push(
      chainIssue(
        'prev-mismatch',
        { id, where },
        before.hash,
        String(rec.prev),
        `${at(where, id)}: prev hash does not match seq ${id.seq - 1} at ${at(before)}`,
      ),
    );
  st.seen.set(id.seq, { ...where, hash });
  st.summary.records++;
  if (!r.signed) st.uncovered.push({ ...where, seq: id.seq });
}

/** The record becomes the chain's head: what the next one must chain to. */
function advanceHead(st: ChainState, { id, where, hash, bad, signed }: ChainedRecord, lastInFile: Map<string, string>) {
  st.seen.set(id.seq, { ...where, hash });
  st.lastSeq = id.seq;
  st.lastHash = hash;
  st.lastWhere = where;
  st.lastBad = bad;
  st.summary.records++;
  st.summary.lastSeq = id.seq;
  st.summary.headHash = hash;
  if (signed) {
    st.summary.checkpoints++;
    st.uncovered = [];
  } else {
    st.uncovered.push({ ...where, seq: id.seq });
  }
  if (!st.summary.files.includes(where.file)) st.summary.files.push(where.file);
  lastInFile.set(id.replica, id.chain);
}

/**
 * Every batch the trail writes ends on a signed record: records after a chain's last valid checkpoint
 * were added, or the records after them (up to the next checkpoint) removed.
 */
function unsignedTailIssue(st: ChainState): VerifyIssue | undefined {
  const first = st.uncovered[0];
  const last = st.uncovered.at(-1);
  if (!first || !last) return undefined;
  const id = { replica: st.summary.replica, chain: st.summary.chain, seq: first.seq };
  return {
    severity: 'error',
    kind: 'unsigned-tail',
    file: first.file,
    line: first.line,
    ...id,
    expected: 'a signed checkpoint after every record',
    found: `${st.uncovered.length} record(s) after the last valid checkpoint`,
    message: `${at(first, id)}: ${st.uncovered.length === 1 ? `record seq ${first.seq} is` : `records seq ${first.seq}–${last.seq} (to ${at(last)}) are`} not covered by any valid signed checkpoint of chain ${short(st.summary.chain)}: the trail ends every batch with a signed record, so records were appended, or the ones after them cut off`,
  };
}

/** In the order the files were given, then by line (stable: findings of one line keep their order). */
function sortByPosition(issues: VerifyIssue[], inputs: readonly VerifyInput[]): void {
  issues.sort(
    (a, b) =>
      inputs.findIndex((x) => x.name === a.file) - inputs.findIndex((x) => x.name === b.file) || a.line - b.line,
  );
}

function buildReport({ issues, chains, tally }: Run): VerifyReport {
  return {
    ok: !issues.some((i) => i.severity === 'error'),
    records: tally.records,
    ignoredLines: tally.ignoredLines,
    issues,
    chains: [...chains.values()].map((c) => c.summary),
    admissions: tally.admissions,
    unauthenticated: tally.unauthenticated,
    unpinned: tally.unpinned,
    unvouched: tally.unauthenticated + tally.unpinned,
  };
}

/** A chain-start that names the previous head: the files must show that chain ending exactly there. */
function checkRestartLink(
  rec: AuditPayload,
  pos: { file: string; line: number; replica: string; chain: string; seq: number },
  chains: Map<string, ChainState>,
  issues: VerifyIssue[],
): void {
  if (rec.event.type !== 'chain-start') return;
  const prev = rec.event.previous;
  const sameReplica = [...chains.values()].filter(
    (c) => c.summary.replica === rec.replica && c.summary.chain !== rec.chain,
  );
  if (!prev) {
    if (sameReplica.length > 0 && rec.event.reason === 'first-start') {
      issues.push({
        severity: 'notice',
        kind: 'unlinked-restart',
        ...pos,
        message: `${at(pos, rec)}: replica "${rec.replica}" starts a new chain without naming the previous one (it had no readable state, e.g. stdout only)`,
      });
    }
    return;
  }
  const before = [...chains.values()].find((c) => c.summary.chain === prev.chain);
  if (!before) return; // the previous chain is not among the given files
  if (before.lastSeq !== prev.seq || before.lastHash !== prev.hash) {
    const missing =
      prev.seq > before.lastSeq
        ? `: records seq ${before.lastSeq + 1}–${prev.seq} of chain ${short(prev.chain)} are missing (its tail was truncated)`
        : '';
    issues.push({
      severity: 'error',
      kind: 'previous-head-mismatch',
      ...pos,
      expected: `chain ${short(prev.chain)} ending at seq ${prev.seq} (${short(prev.hash)})`,
      found: `it ends at seq ${before.lastSeq} (${short(before.lastHash)}) at ${at(before.lastWhere)}`,
      message: `${at(pos, rec)}: this chain-start says chain ${short(prev.chain)} ended at seq ${prev.seq}, but the files show it ending at seq ${before.lastSeq} (${at(before.lastWhere)})${missing}`,
    });
  }
}

/** SHA-256 of a line's canonical payload, or undefined when the line lacks the payload fields. */
function contentHash(plain: AuditRecord): string | undefined {
  if (!hasPayloadScalars(plain) || typeof plain.event !== 'object' || plain.event === null) return undefined;
  return recordHash(plain);
}

/** Why a JWS did not verify: a key the JWKS does not hold, a signature that does not match, or not a JWS. */
function signatureIssue(err: unknown, jws: string, ident: RecordIdent): VerifyIssue {
  if (err instanceof joseErrors.JWKSNoMatchingKey) {
    const kid = headerKid(jws);
    return {
      severity: 'error',
      kind: 'unknown-key',
      ...ident,
      found: kid,
      message: `${at(ident, ident)}: signed with key ${kid ? `kid ${kid}` : '(no kid)'} which is not in the JWKS: re-signed with another key`,
    };
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return {
      severity: 'error',
      kind: 'bad-signature',
      ...ident,
      message: `${at(ident, ident)}: the signature does not match the signed content: the record was altered after signing`,
    };
  }
  return {
    severity: 'error',
    kind: 'bad-signature',
    ...ident,
    message: `${at(ident, ident)}: not a valid signed record (${err instanceof Error ? err.message : String(err)})`,
  };
}

function headerKid(jws: string): string | undefined {
  try {
    const h = JSON.parse(Buffer.from(jws.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof h.kid === 'string' ? h.kid : undefined;
  } catch {
    return undefined;
  }
}

function diffPaths(path: string, a: unknown, b: unknown, out: string[]): void {
  if (out.length >= 5) return;
  if (
    typeof a === 'object' &&
    a !== null &&
    typeof b === 'object' &&
    b !== null &&
    Array.isArray(a) === Array.isArray(b)
  ) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys)
      diffPaths(
        Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`,
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
        out,
      );
    return;
  }
  if (a !== b) out.push(path);
}

function describe(obj: unknown, path: string): string {
  let v: unknown = obj;
  for (const part of path.split(/\.|\[|\]/).filter(Boolean))
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[part] : undefined;
  const s = v === undefined ? '(absent)' : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function short(hashOrId: string): string {
  return hashOrId.length > 12 ? `${hashOrId.slice(0, 12)}…` : hashOrId;
}

function at(where: { file: string; line: number }, id?: { replica?: string; chain?: string; seq?: number }): string {
  const parts = [`${where.file}:${where.line}`];
  if (id?.replica !== undefined) parts.push(`replica ${id.replica}`);
  if (id?.seq !== undefined) parts.push(`seq ${id.seq}`);
  return parts.length > 1 ? `${parts[0]} (${parts.slice(1).join(', ')})` : (parts[0] ?? '');
}

/** Order rotated files oldest first: `x.3 x.2 x.1 x` (a shell glob gives `x x.1 x.2`). Other files keep their order. */
export function orderRotatedFiles(files: readonly string[]): string[] {
  const groups = new Map<string, Array<[string, number]>>();
  for (const f of files) {
    const m = /^(.*)\.(\d+)$/.exec(f);
    const base = m && files.includes(m[1] ?? '') ? (m[1] ?? f) : f;
    const n = m && base !== f ? Number(m[2]) : 0;
    const g = groups.get(base) ?? [];
    g.push([f, n]);
    groups.set(base, g);
  }
  return [...groups.values()].flatMap((g) => g.sort((a, b) => b[1] - a[1]).map(([f]) => f));
}
