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

export async function verifyAuditFiles(inputs: readonly VerifyInput[], jwks: JSONWebKeySet): Promise<VerifyReport> {
  const keySet = createLocalJWKSet(jwks);
  const issues: VerifyIssue[] = [];
  const chains = new Map<string, ChainState>();
  let records = 0;
  let ignoredLines = 0;
  let admissions = 0;
  let unauthenticated = 0;
  let unpinned = 0;

  for (const input of inputs) {
    const lines = input.text.split('\n');
    const endsWithNewline = input.text.endsWith('\n');
    /** The chain each replica was last seen in, in this file (splice detection). */
    const lastInFile = new Map<string, string>();
    for (let i = 0; i < lines.length; i++) {
      const text = lines[i] ?? '';
      if (text.trim() === '') continue;
      const line = i + 1;
      const where = { file: input.name, line };
      const isLastLine = i === lines.length - 1;
      let plain: AuditRecord;
      try {
        plain = JSON.parse(text) as AuditRecord;
      } catch {
        if (isLastLine && !endsWithNewline)
          issues.push({
            severity: 'error',
            kind: 'truncated',
            ...where,
            message: `${at(where)}: the last line is an incomplete record: the file was cut off (truncated) mid-record`,
          });
        else if (text.includes(AUDIT_FORMAT))
          issues.push({
            severity: 'error',
            kind: 'unparsable',
            ...where,
            message: `${at(where)}: an audit record that is not valid JSON (cut short or edited)`,
          });
        else ignoredLines++;
        continue;
      }
      if (typeof plain !== 'object' || plain === null || plain.audit !== AUDIT_FORMAT) {
        ignoredLines++;
        continue;
      }
      records++;
      const claimed = {
        replica: str(plain.replica),
        chain: str(plain.chain),
        seq: typeof plain.seq === 'number' ? plain.seq : undefined,
      };
      const ident = { ...where, ...claimed };

      let bad = false;
      let mismatchReported = false;
      const hash = contentHash(plain);
      if (hash === undefined) {
        issues.push({
          severity: 'error',
          kind: 'unparsable',
          ...ident,
          message: `${at(where, claimed)}: an audit record without replica, chain, seq, ts, prev and event`,
        });
        continue;
      }
      // 1. a checkpoint: signature, and the readable fields against the signed payload
      let payload: AuditPayload | undefined;
      let signed = false;
      if (plain.jws !== undefined) {
        if (typeof plain.jws !== 'string') {
          bad = true;
          issues.push({
            severity: 'error',
            kind: 'bad-signature',
            ...ident,
            message: `${at(where, claimed)}: the jws field is not a compact JWS`,
          });
        } else {
          try {
            const res = await compactVerify(plain.jws, keySet, { algorithms: ['EdDSA', 'Ed25519'] });
            if (res.protectedHeader.typ !== JWS_TYPE) {
              issues.push({
                severity: 'error',
                kind: 'bad-header',
                ...ident,
                expected: JWS_TYPE,
                found: String(res.protectedHeader.typ),
                message: `${at(where, claimed)}: JWS typ is "${String(res.protectedHeader.typ)}", expected "${JWS_TYPE}"`,
              });
              bad = true;
            }
            payload = JSON.parse(new TextDecoder().decode(res.payload)) as AuditPayload;
          } catch (err) {
            bad = true;
            issues.push(signatureIssue(err, plain.jws, ident, claimed));
          }
        }
        if (payload) {
          const diffs: string[] = [];
          if (payload.v !== PAYLOAD_VERSION) diffs.push('v');
          for (const k of ['replica', 'chain', 'seq', 'ts', 'prev', 'event'] as const)
            diffPaths(k, plain[k], payload[k], diffs);
          if (diffs.length > 0) {
            bad = true;
            mismatchReported = true;
            const first = diffs[0] ?? '';
            issues.push({
              severity: 'error',
              kind: 'field-mismatch',
              ...ident,
              expected: describe(payload, first),
              found: describe(plain, first),
              message: `${at(where, claimed)}: field ${diffs.join(', ')} differs from the signed payload (signed ${describe(payload, first)}, line says ${describe(plain, first)}): the line was edited`,
            });
          } else if (!bad) {
            signed = true;
          }
        }
      }
      // 2. the record's content against its own hash (an edit already named against the signed payload is not repeated)
      if (plain.hash !== hash && !mismatchReported) {
        bad = true;
        issues.push({
          severity: 'error',
          kind: 'field-mismatch',
          ...ident,
          expected: hash,
          found: String(plain.hash),
          message: `${at(where, claimed)}: the record's content does not match its hash (content hashes to ${short(hash)}, line says ${short(String(plain.hash))}): the line was edited`,
        });
      }
      if (plain.event?.type === 'admission') {
        admissions++;
        if (plain.event.caller?.authenticated !== true) unauthenticated++;
        else if (typeof plain.event.caller.vouchedBy !== 'string') unpinned++;
      }
      // Chain tracking uses the signed values when the signature holds, the claimed ones otherwise.
      const rec = payload ?? (plain as unknown as AuditPayload);
      if (typeof rec.replica !== 'string' || typeof rec.chain !== 'string' || typeof rec.seq !== 'number') continue;
      const key = `${rec.replica}\u0000${rec.chain}`;
      const id = { replica: rec.replica, chain: rec.chain, seq: rec.seq };
      const pos = { ...where, ...id };
      let st = chains.get(key);

      if (!st) {
        st = {
          summary: {
            replica: rec.replica,
            chain: rec.chain,
            records: 0,
            firstSeq: rec.seq,
            lastSeq: rec.seq,
            headHash: hash,
            fromGenesis: rec.seq === 0,
            files: [],
            checkpoints: 0,
          },
          lastSeq: rec.seq,
          lastHash: hash,
          lastWhere: where,
          seen: new Map(),
          gaps: new Map(),
          lastBad: bad,
          uncovered: [],
        };
        chains.set(key, st);
        if (rec.seq === 0) {
          if (rec.prev !== GENESIS_PREV || rec.event?.type !== 'chain-start') {
            issues.push({
              severity: 'error',
              kind: 'bad-genesis',
              ...pos,
              message: `${at(where, id)}: seq 0 must be a chain-start record with prev ${GENESIS_PREV.slice(0, 12)}…`,
            });
          } else {
            checkRestartLink(rec, pos, chains, issues);
          }
        } else {
          const other = lastInFile.get(rec.replica);
          if (other !== undefined && other !== rec.chain) {
            issues.push({
              severity: 'error',
              kind: 'spliced',
              ...pos,
              expected: `chain ${short(other)} to continue, or a chain-start record`,
              found: `chain ${short(rec.chain)} at seq ${rec.seq}`,
              message: `${at(where, id)}: replica "${rec.replica}" switches from chain ${short(other)} to chain ${short(rec.chain)} mid-way (seq ${rec.seq}, no chain-start record): two chains were spliced`,
            });
          } else {
            issues.push({
              severity: 'notice',
              kind: 'starts-mid-chain',
              ...pos,
              message: `${at(where, id)}: chain ${short(rec.chain)} of replica "${rec.replica}" begins at seq ${rec.seq}: seq 0–${rec.seq - 1} are not in the given files (older files rotated away, or not given)`,
            });
          }
        }
      } else {
        const expectedSeq = st.lastSeq + 1;
        const prevSeen = st.seen.get(rec.seq);
        if (rec.seq === expectedSeq) {
          if (rec.prev !== st.lastHash) {
            const consequence = st.lastBad;
            issues.push({
              severity: consequence ? 'notice' : 'error',
              kind: consequence ? 'consequence' : 'prev-mismatch',
              ...pos,
              expected: st.lastHash,
              found: String(rec.prev),
              message: consequence
                ? `${at(where, id)}: does not chain to ${at(st.lastWhere)} — a consequence of the problem reported there`
                : `${at(where, id)}: prev hash ${short(String(rec.prev))} does not match ${at(st.lastWhere)} (seq ${st.lastSeq}, hash ${short(st.lastHash)}): the record before it was altered, replaced or inserted`,
            });
          }
        } else if (rec.seq > expectedSeq) {
          const missing = rec.seq - expectedSeq;
          const issue: VerifyIssue = {
            severity: 'error',
            kind: 'missing',
            ...pos,
            expected: `seq ${expectedSeq}`,
            found: `seq ${rec.seq}`,
            message: `${at(where, id)}: expected seq ${expectedSeq} after ${at(st.lastWhere)}, found seq ${rec.seq}: ${missing === 1 ? `record seq ${expectedSeq} is` : `records seq ${expectedSeq}–${rec.seq - 1} are`} missing (dropped)`,
          };
          issues.push(issue);
          for (let s = expectedSeq; s < rec.seq; s++) st.gaps.set(s, issue);
        } else if (prevSeen && prevSeen.hash === hash) {
          issues.push({
            severity: 'error',
            kind: 'duplicate',
            ...pos,
            expected: `seq ${expectedSeq}`,
            found: `seq ${rec.seq} again`,
            message: `${at(where, id)}: duplicate of ${at(prevSeen)} (seq ${rec.seq}): a record was copied`,
          });
          continue;
        } else if (prevSeen) {
          issues.push({
            severity: 'error',
            kind: 'conflict',
            ...pos,
            expected: `seq ${expectedSeq}`,
            found: `a second, different seq ${rec.seq}`,
            message: `${at(where, id)}: a different record with seq ${rec.seq} already appeared at ${at(prevSeen)}: the chain was forked or spliced`,
          });
          continue;
        } else {
          const gap = st.gaps.get(rec.seq);
          const before = st.seen.get(rec.seq - 1);
          if (gap) {
            gap.kind = 'out-of-order';
            gap.message = `${at(gap)}: records out of order: seq ${gap.seq} appears before seq ${rec.seq} (${at(where)}); expected ascending seq`;
            st.gaps.delete(rec.seq);
            for (const [s, g] of st.gaps) if (g === gap) st.gaps.delete(s);
          } else {
            issues.push({
              severity: 'error',
              kind: 'out-of-order',
              ...pos,
              expected: `seq ${expectedSeq}`,
              found: `seq ${rec.seq}`,
              message: `${at(where, id)}: seq ${rec.seq} appears after seq ${st.lastSeq} (${at(st.lastWhere)}): records were reordered`,
            });
          }
          if (before && rec.prev !== before.hash && !bad) {
            issues.push({
              severity: 'error',
              kind: 'prev-mismatch',
              ...pos,
              expected: before.hash,
              found: String(rec.prev),
              message: `${at(where, id)}: prev hash does not match seq ${rec.seq - 1} at ${at(before)}`,
            });
          }
          st.seen.set(rec.seq, { ...where, hash });
          st.summary.records++;
          if (!signed) st.uncovered.push({ ...where, seq: rec.seq });
          continue; // the chain head stays where it was
        }
      }
      st.seen.set(rec.seq, { ...where, hash });
      st.lastSeq = rec.seq;
      st.lastHash = hash;
      st.lastWhere = where;
      st.lastBad = bad;
      st.summary.records++;
      st.summary.lastSeq = rec.seq;
      st.summary.headHash = hash;
      if (signed) {
        st.summary.checkpoints++;
        st.uncovered = [];
      } else {
        st.uncovered.push({ ...where, seq: rec.seq });
      }
      if (!st.summary.files.includes(input.name)) st.summary.files.push(input.name);
      lastInFile.set(rec.replica, rec.chain);
    }
  }
  // Every batch the trail writes ends on a signed record: records after a chain's last valid checkpoint
  // were added, or the records after them (up to the next checkpoint) removed.
  for (const st of chains.values()) {
    const first = st.uncovered[0];
    const last = st.uncovered.at(-1);
    if (!first || !last) continue;
    const id = { replica: st.summary.replica, chain: st.summary.chain, seq: first.seq };
    issues.push({
      severity: 'error',
      kind: 'unsigned-tail',
      file: first.file,
      line: first.line,
      ...id,
      expected: 'a signed checkpoint after every record',
      found: `${st.uncovered.length} record(s) after the last valid checkpoint`,
      message: `${at(first, id)}: ${st.uncovered.length === 1 ? `record seq ${first.seq} is` : `records seq ${first.seq}–${last.seq} (to ${at(last)}) are`} not covered by any valid signed checkpoint of chain ${short(st.summary.chain)}: the trail ends every batch with a signed record, so records were appended, or the ones after them cut off`,
    });
  }
  issues.sort(
    (a, b) =>
      inputs.findIndex((x) => x.name === a.file) - inputs.findIndex((x) => x.name === b.file) || a.line - b.line,
  );
  return {
    ok: !issues.some((i) => i.severity === 'error'),
    records,
    ignoredLines,
    issues,
    chains: [...chains.values()].map((c) => c.summary),
    admissions,
    unauthenticated,
    unpinned,
    unvouched: unauthenticated + unpinned,
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

function signatureIssue(
  err: unknown,
  jws: string,
  ident: Omit<VerifyIssue, 'severity' | 'kind' | 'message'>,
  claimed: { replica?: string; chain?: string; seq?: number },
): VerifyIssue {
  const where = { file: ident.file, line: ident.line };
  if (err instanceof joseErrors.JWKSNoMatchingKey) {
    const kid = headerKid(jws);
    return {
      severity: 'error',
      kind: 'unknown-key',
      ...ident,
      found: kid,
      message: `${at(where, claimed)}: signed with key ${kid ? `kid ${kid}` : '(no kid)'} which is not in the JWKS: re-signed with another key`,
    };
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return {
      severity: 'error',
      kind: 'bad-signature',
      ...ident,
      message: `${at(where, claimed)}: the signature does not match the signed content: the record was altered after signing`,
    };
  }
  return {
    severity: 'error',
    kind: 'bad-signature',
    ...ident,
    message: `${at(where, claimed)}: not a valid signed record (${err instanceof Error ? err.message : String(err)})`,
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
