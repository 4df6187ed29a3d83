// The signed hash chain: appending, resuming, and verification catching every kind of tampering with
// the right explanation (file:line, replica, seq, expected vs found).
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { CompactSign, type JSONWebKeySet } from 'jose';
import { AuditTrail, type AuditSink } from '../../trail/trail.ts';
import { createSigner, generateAuditKey, mergeJwks, type AuditKey } from '../../trail/keys.ts';
import { verifyAuditFiles, type VerifyReport } from '../../trail/verify.ts';
import {
  GENESIS_PREV,
  JWS_TYPE,
  parseLine,
  payloadText,
  recordHash,
  type AuditEvent,
  type AuditRecord,
} from '../../trail/record.ts';
import { auditAdmission, auditVaultWrite } from '../../trail/events.ts';

let key: AuditKey;
let otherKey: AuditKey;
let jwks: JSONWebKeySet;

before(async () => {
  key = await generateAuditKey();
  otherKey = await generateAuditKey();
  jwks = mergeJwks(undefined, key.publicJwk);
});

function memorySink(initial: string[] = []): AuditSink & { lines: string[] } {
  const lines = [...initial];
  return {
    lines,
    write: (l) => {
      lines.push(l);
    },
    lastLine: () => Promise.resolve(lines.at(-1)),
  };
}

let tick = 0;
const clock = { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)) };

const ev = (i: number): AuditEvent =>
  auditVaultWrite({ action: 'update', object: 'policy', vaultName: `vaultgate.ns.p${i}`, content: `path "x/${i}" {}` });

async function chain(n: number, replica = 'webhook-0', chainId = 'chain-a', sink = memorySink()): Promise<string[]> {
  const trail = await AuditTrail.open({ replica, signer: createSigner(key), sink, clock, newChainId: () => chainId });
  for (let i = 1; i < n; i++) await trail.append(ev(i));
  return sink.lines;
}

const verify = (...files: Array<[string, string[]]>): Promise<VerifyReport> =>
  verifyAuditFiles(
    files.map(([name, lines]) => ({ name, text: lines.map((l) => `${l}\n`).join('') })),
    jwks,
  );

const errors = (r: VerifyReport) => r.issues.filter((i) => i.severity === 'error');

void describe('appending', () => {
  void test('a new trail starts with a signed chain-start record: seq 0, prev = zeros', async () => {
    const lines = await chain(3);
    const first = parseLine(lines[0]!)!;
    assert.equal(first.seq, 0);
    assert.equal(first.prev, GENESIS_PREV);
    assert.deepEqual(first.event, { type: 'chain-start', reason: 'first-start' });
    const second = parseLine(lines[1]!)!;
    assert.equal(second.prev, recordHash(first));
    const header = JSON.parse(Buffer.from(first.jws!.split('.')[0]!, 'base64url').toString()) as Record<string, string>;
    assert.deepEqual(header, { alg: 'EdDSA', kid: key.kid, typ: JWS_TYPE });
    const r = await verify(['audit.log', lines]);
    assert.equal(r.ok, true, JSON.stringify(r.issues));
    assert.deepEqual(r.issues, []);
    assert.equal(r.chains[0]?.fromGenesis, true);
  });

  void test('concurrent appends get consecutive sequence numbers in call order and verify', async () => {
    const sink = memorySink();
    const trail = await AuditTrail.open({ replica: 'r', signer: createSigner(key), sink, clock });
    const recs = await Promise.all(Array.from({ length: 50 }, (_, i) => trail.append(ev(i))));
    assert.deepEqual(
      recs.map((r) => r.seq),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    assert.equal((await verify(['a', sink.lines])).ok, true);
  });

  void test('a failing sink rejects that append and leaves the chain at the last good record', async () => {
    let fail = false;
    const lines: string[] = [];
    const sink: AuditSink = {
      write: (l) => {
        if (fail) throw new Error('disk full');
        lines.push(l);
      },
    };
    const trail = await AuditTrail.open({ replica: 'r', signer: createSigner(key), sink, clock });
    fail = true;
    await assert.rejects(trail.append(ev(1)), /disk full/);
    fail = false;
    await trail.append(ev(2));
    assert.equal((await verify(['a', lines])).ok, true);
  });

  void test("after a restart the trail continues its chain from the sink's last record and says so", async () => {
    const sink = memorySink();
    await chain(4, 'webhook-0', 'c1', sink);
    const trail = await AuditTrail.open({
      replica: 'webhook-0',
      signer: createSigner(key),
      sink,
      clock,
      newChainId: () => 'c2',
    });
    const resumed = parseLine(sink.lines[4]!)!;
    assert.equal(resumed.chain, 'c1');
    assert.equal(resumed.seq, 4);
    assert.deepEqual(resumed.event, { type: 'lifecycle', action: 'resume' });
    await trail.append(ev(9));
    const r = await verify(['a', sink.lines]);
    assert.equal(r.ok, true);
    assert.equal(r.chains.length, 1);
    assert.equal(r.chains[0]?.lastSeq, 5);
  });

  void test('a different replica on the same sink starts its own chain naming the previous head', async () => {
    const sink = memorySink();
    await chain(3, 'webhook-0', 'c1', sink);
    const head = recordHash(parseLine(sink.lines[2]!)!);
    await AuditTrail.open({ replica: 'webhook-1', signer: createSigner(key), sink, clock, newChainId: () => 'c2' });
    const start = parseLine(sink.lines[3]!)!;
    assert.deepEqual(start.event, {
      type: 'chain-start',
      reason: 'replica-changed',
      previous: { chain: 'c1', seq: 2, hash: head },
    });
    assert.equal((await verify(['a', sink.lines])).ok, true);
  });

  void test('interleaved lines of several replicas (a shipped stdout log) verify per replica; other log lines are ignored', async () => {
    const a = await chain(4, 'webhook-0', 'ca');
    const b = await chain(4, 'webhook-1', 'cb');
    const mixed = [
      a[0]!,
      '{"level":30,"msg":"listening"}',
      b[0]!,
      a[1]!,
      b[1]!,
      b[2]!,
      a[2]!,
      'plain text',
      a[3]!,
      b[3]!,
    ];
    const r = await verify(['stdout.log', mixed]);
    assert.equal(r.ok, true, JSON.stringify(r.issues));
    assert.equal(r.chains.length, 2);
    assert.equal(r.ignoredLines, 2);
  });
});

void describe('tampering is caught with the right explanation', () => {
  const N = 6;
  let clean: string[];
  before(async () => {
    clean = await chain(N, 'webhook-0', 'chain-a');
  });

  void test('editing a readable field: field-mismatch naming the field, signed vs line value', async () => {
    const lines = [...clean];
    const rec = JSON.parse(lines[3]!) as { event: { vaultName: string } };
    rec.event.vaultName = 'vaultgate.ns.innocent';
    lines[3] = JSON.stringify(rec);
    const r = await verify(['audit.log', lines]);
    const [e] = errors(r);
    assert.equal(r.ok, false);
    assert.equal(errors(r).length, 1);
    assert.equal(e?.kind, 'field-mismatch');
    assert.equal(e?.line, 4);
    assert.equal(e?.seq, 3);
    assert.equal(e?.replica, 'webhook-0');
    assert.match(
      e.message,
      /^audit\.log:4 \(replica webhook-0, seq 3\): field event\.vaultName differs from the signed payload \(signed "vaultgate\.ns\.p3", line says "vaultgate\.ns\.innocent"\)/,
    );
  });

  void test('editing the signed payload itself: bad signature, on that record only', async () => {
    const lines = [...clean];
    const rec = JSON.parse(lines[2]!) as { jws: string };
    const [h, p, s] = rec.jws.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString()) as { event: { action: string } };
    payload.event.action = 'delete';
    rec.jws = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    lines[2] = JSON.stringify(rec);
    const r = await verify(['audit.log', lines]);
    assert.deepEqual(
      errors(r).map((i) => [i.kind, i.line]),
      [['bad-signature', 3]],
    );
    assert.match(errors(r)[0]!.message, /altered after signing/);
    assert.deepEqual(
      r.issues.filter((i) => i.severity === 'notice'),
      [],
    );
  });

  void test('dropping a record: "record seq 3 is missing", expected vs found', async () => {
    const lines = clean.filter((_, i) => i !== 3);
    const r = await verify(['audit.log', lines]);
    const [e] = errors(r);
    assert.equal(errors(r).length, 1);
    assert.equal(e?.kind, 'missing');
    assert.equal(e?.expected, 'seq 3');
    assert.equal(e?.found, 'seq 4');
    assert.match(
      e.message,
      /audit\.log:4 \(replica webhook-0, seq 4\): expected seq 3 after audit\.log:3, found seq 4: record seq 3 is missing/,
    );
  });

  void test('dropping several records: the range is named', async () => {
    const r = await verify(['audit.log', clean.filter((_, i) => i !== 2 && i !== 3)]);
    assert.match(errors(r)[0]!.message, /records seq 2–3 are missing/);
  });

  void test('reordering two records: out of order, not "missing"', async () => {
    const lines = [...clean];
    [lines[2], lines[3]] = [lines[3]!, lines[2]!];
    const r = await verify(['audit.log', lines]);
    assert.deepEqual(
      errors(r).map((i) => i.kind),
      ['out-of-order'],
    );
    assert.match(errors(r)[0]!.message, /records out of order: seq 3 appears before seq 2/);
  });

  void test('duplicating a record: duplicate of the original line', async () => {
    const lines = [...clean.slice(0, 4), clean[2]!, ...clean.slice(4)];
    const r = await verify(['audit.log', lines]);
    assert.deepEqual(
      errors(r).map((i) => [i.kind, i.line]),
      [['duplicate', 5]],
    );
    assert.match(errors(r)[0]!.message, /duplicate of audit\.log:3 \(seq 2\)/);
  });

  void test('re-signing an edited record with another key (hash recomputed): unknown key, by kid', async () => {
    const lines = [...clean];
    const rec = JSON.parse(lines[2]!) as AuditRecord;
    (rec.event as { vaultName: string }).vaultName = 'vaultgate.ns.forged';
    rec.hash = recordHash(rec);
    rec.jws = await new CompactSign(new TextEncoder().encode(payloadText(rec)))
      .setProtectedHeader({ alg: 'EdDSA', kid: otherKey.kid, typ: JWS_TYPE })
      .sign(otherKey.privateKey);
    lines[2] = JSON.stringify(rec);
    const r = await verify(['audit.log', lines]);
    assert.deepEqual(
      errors(r).map((i) => [i.kind, i.line]),
      [['unknown-key', 3]],
    );
    assert.deepEqual(
      r.issues.filter((i) => i.severity === 'notice').map((i) => [i.kind, i.line]),
      [['consequence', 4]],
      'the next record still names the original hash',
    );
    assert.match(errors(r)[0]!.message, new RegExp(`kid ${otherKey.kid} which is not in the JWKS`));
  });

  void test('re-signing with another key under our kid: bad signature', async () => {
    const lines = [...clean];
    const rec = JSON.parse(lines[2]!) as { jws: string };
    const payload = Buffer.from(rec.jws.split('.')[1]!, 'base64url');
    rec.jws = await new CompactSign(payload)
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: JWS_TYPE })
      .sign(otherKey.privateKey);
    lines[2] = JSON.stringify(rec);
    const r = await verify(['audit.log', lines]);
    assert.deepEqual(
      errors(r).map((i) => [i.kind, i.line]),
      [['bad-signature', 3]],
    );
  });

  void test('truncating the file mid-record: the last line is reported as cut off', async () => {
    const text = clean.map((l) => `${l}\n`).join('');
    const cut = text.slice(0, text.length - 40);
    const r = await verifyAuditFiles([{ name: 'audit.log', text: cut }], jwks);
    assert.deepEqual(
      errors(r).map((i) => [i.kind, i.line]),
      [['truncated', N]],
    );
    assert.match(errors(r)[0]!.message, /truncated/);
  });

  void test('splicing two chains of one replica: the switch is named', async () => {
    const other = await chain(N, 'webhook-0', 'chain-b');
    const spliced = [...clean.slice(0, 3), ...other.slice(3)];
    const r = await verify(['audit.log', spliced]);
    const [e] = errors(r);
    assert.equal(e?.kind, 'spliced');
    assert.equal(e?.line, 4);
    assert.match(
      e.message,
      /switches from chain chain-a to chain chain-b mid-way \(seq 3, no chain-start record\): two chains were spliced/,
    );
  });

  void test('a record inserted from another chain with a matching seq: prev mismatch names both lines', async () => {
    const other = await chain(N, 'webhook-0', 'chain-a'); // same chain id, different content (another run)
    const lines = [...clean];
    lines[3] = other[3]!;
    const r = await verify(['audit.log', lines]);
    assert.equal(errors(r)[0]?.kind, 'prev-mismatch');
    assert.equal(errors(r)[0]?.line, 4);
    assert.equal(errors(r)[0]?.expected, recordHash(parseLine(clean[2]!)!));
  });

  void test('removing the first records of a file whose chain started there is a notice, not a break (rotation)', async () => {
    const r = await verify(['audit.log', clean.slice(2)]);
    assert.equal(r.ok, true);
    assert.deepEqual(
      r.issues.map((i) => i.kind),
      ['starts-mid-chain'],
    );
    assert.match(r.issues[0]!.message, /seq 0–1 are not in the given files/);
  });

  void test('truncating the tail of a chain that a later chain-start names: the missing records are counted', async () => {
    const sink = memorySink();
    await chain(5, 'webhook-0', 'c1', sink);
    await AuditTrail.open({ replica: 'webhook-1', signer: createSigner(key), sink, clock, newChainId: () => 'c2' });
    const lines = sink.lines.filter((_, i) => i !== 3 && i !== 4); // drop seq 3 and 4 of c1
    const r = await verify(['audit.log', lines]);
    const [e] = errors(r);
    assert.equal(e?.kind, 'previous-head-mismatch');
    assert.match(
      e.message,
      /says chain c1 ended at seq 4, but the files show it ending at seq 2 .*records seq 3–4 of chain c1 are missing \(its tail was truncated\)/,
    );
  });

  void test('a chain whose seq 0 is not a chain-start: bad genesis', async () => {
    const lines = [...clean];
    const forged = JSON.parse(lines[1]!) as Record<string, unknown>;
    forged.seq = 0;
    forged.chain = 'chain-z';
    const r = await verify(['audit.log', [JSON.stringify(forged)]]);
    assert.ok(errors(r).some((i) => i.kind === 'field-mismatch'));
  });
});

void describe('batches: many records, one signature; each append resolves only once written', () => {
  /** A trail whose appends of one turn form one batch: chain-start, then `n` concurrent appends. */
  async function batched(n: number): Promise<string[]> {
    const sink = memorySink();
    const trail = await AuditTrail.open({
      replica: 'webhook-0',
      signer: createSigner(key),
      sink,
      clock,
      newChainId: () => 'b',
    });
    await Promise.all(Array.from({ length: n }, (_, i) => trail.append(ev(i))));
    return sink.lines;
  }
  const rec = (line: string): AuditRecord => JSON.parse(line) as AuditRecord;

  void test('concurrent appends are hash-chained and only the last record of the batch is signed; it verifies', async () => {
    const lines = await batched(20);
    assert.equal(lines.length, 21);
    assert.deepEqual(
      lines.map((l) => rec(l).jws !== undefined),
      [true, ...Array.from({ length: 19 }, () => false), true],
    );
    for (let i = 1; i < lines.length; i++) assert.equal(rec(lines[i]!).prev, rec(lines[i - 1]!).hash);
    const r = await verify(['audit.log', lines]);
    assert.deepEqual(r.issues, []);
    assert.equal(r.chains[0]?.checkpoints, 2);
  });

  void test('editing an unsigned record of a batch: its content no longer matches its hash', async () => {
    const lines = await batched(6);
    const edited = rec(lines[3]!);
    (edited.event as { vaultName: string }).vaultName = 'vaultgate.ns.innocent';
    lines[3] = JSON.stringify(edited);
    const r = await verify(['audit.log', lines]);
    assert.deepEqual(
      errors(r).map((i) => [i.kind, i.line]),
      [['field-mismatch', 4]],
    );
    assert.match(errors(r)[0]!.message, /content does not match its hash/);
  });

  void test("rewriting a batch consistently (every hash and prev recomputed): the checkpoint's signature no longer matches", async () => {
    const lines = await batched(6);
    const recs = lines.map(rec);
    (recs[2]!.event as { vaultName: string }).vaultName = 'vaultgate.ns.innocent';
    for (let i = 2; i < recs.length; i++) {
      if (i > 2) recs[i]!.prev = recs[i - 1]!.hash;
      recs[i]!.hash = recordHash(recs[i]!);
    }
    const r = await verify(['audit.log', recs.map((x) => JSON.stringify(x))]);
    assert.deepEqual(
      errors(r).map((i) => [i.kind, i.line]),
      [
        ['unsigned-tail', 2],
        ['field-mismatch', 7],
        ['prev-mismatch', 7],
      ],
    );
    assert.match(errors(r)[1]!.message, /field prev differs from the signed payload/);
    assert.match(errors(r)[0]!.message, /records seq 1–6 .* are not covered by any valid signed checkpoint/);
  });

  void test('cutting a batch short (its signed last record removed): the records left are unsigned', async () => {
    const lines = (await batched(6)).slice(0, -2);
    const r = await verify(['audit.log', lines]);
    assert.deepEqual(
      errors(r).map((i) => [i.kind, i.line, i.seq]),
      [['unsigned-tail', 2, 1]],
    );
    assert.match(errors(r)[0]!.message, /records seq 1–4 .* are not covered by any valid signed checkpoint/);
  });

  void test('a forged record appended after the last checkpoint (valid hash and prev): unsigned tail', async () => {
    const lines = await batched(3);
    const last = rec(lines.at(-1)!);
    const forged = { ...last, seq: last.seq + 1, prev: last.hash, event: ev(99), jws: undefined } as AuditRecord;
    forged.hash = recordHash(forged);
    const r = await verify(['audit.log', [...lines, JSON.stringify(forged)]]);
    assert.deepEqual(
      errors(r).map((i) => [i.kind, i.seq]),
      [['unsigned-tail', last.seq + 1]],
    );
  });

  void test('the queue is bounded: with a stalled sink, appends wait for room and none resolves before its line is written', async () => {
    const written: string[] = [];
    let release: () => void = () => undefined;
    let gate = Promise.resolve();
    const sink: AuditSink = {
      write: () => {
        throw new Error('batch sinks only');
      },
      writeBatch: async (ls) => {
        await gate;
        written.push(...ls);
      },
    };
    const trail = await AuditTrail.open({
      replica: 'r',
      signer: createSigner(key),
      sink,
      clock,
      maxBatch: 4,
      maxQueue: 8,
    });
    gate = new Promise((r) => {
      release = r;
    });
    const resolvedBeforeWrite: number[] = [];
    const appends = Array.from({ length: 40 }, (_, i) =>
      trail.append(ev(i)).then((r) => {
        if (!written.some((l) => (JSON.parse(l) as AuditRecord).seq === r.seq)) resolvedBeforeWrite.push(r.seq);
        return r;
      }),
    );
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(written.length, 1, 'nothing is written while the sink is stalled');
    assert.ok(trail.stats().queued <= 8, `queued ${trail.stats().queued}`);
    release();
    const recs = await Promise.all(appends);
    assert.deepEqual(
      recs.map((r) => r.seq),
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    assert.deepEqual(resolvedBeforeWrite, []);
    assert.ok(trail.stats().queuedHighWater <= 8, `high water ${trail.stats().queuedHighWater}`);
    assert.ok(trail.stats().waitedForRoom > 0);
    assert.equal((await verify(['a', written])).ok, true);
  });

  void test('verify counts admission records whose caller was not authenticated', async () => {
    const sink = memorySink();
    const trail = await AuditTrail.open({ replica: 'r', signer: createSigner(key), sink, clock });
    const decision = { response: { allowed: true }, rules: [], patchOps: [] };
    const request = {
      uid: 'u',
      kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
      operation: 'CREATE',
      namespace: 'a',
      name: 'p',
      userInfo: { username: 'alice' },
    };
    await trail.append(auditAdmission(decision, request, { caller: { authenticated: false, peer: '10.0.0.9:51234' } }));
    await trail.append(
      auditAdmission(decision, request, {
        caller: { authenticated: true, peer: '10.0.0.1:443', subject: 'kube-apiserver' },
      }),
    );
    await trail.append(auditAdmission(decision, request, { caller: { authenticated: false, peer: '10.0.0.9:51235' } }));
    const r = await verify(['a', sink.lines]);
    assert.equal(r.ok, true);
    assert.equal(r.admissions, 3);
    assert.equal(r.unauthenticated, 2);
    // the authenticated one predates subject pinning (no vouchedBy): any certificate of the CA was taken
    assert.equal(r.unpinned, 1);
    assert.equal(r.unvouched, 3);
    assert.deepEqual((parseLine(sink.lines[1]!)!.event as { caller?: unknown }).caller, {
      authenticated: false,
      peer: '10.0.0.9:51234',
    });
  });
});

void test('no record carries a secret value: Vault write content is only hashed', async () => {
  const sink = memorySink();
  const trail = await AuditTrail.open({ replica: 'r', signer: createSigner(key), sink, clock });
  await trail.append(
    auditVaultWrite({
      action: 'create',
      object: 'role',
      vaultName: 'vaultgate.a.b',
      content: { secret_hint: 'S3cr3t-Value' },
    }),
  );
  assert.doesNotMatch(sink.lines.join('\n'), /S3cr3t-Value/);
  assert.doesNotMatch(Buffer.from(sink.lines.join(''), 'utf8').toString('base64'), /UzNjcjN0LVZhbHVl/);
  assert.doesNotMatch(JSON.stringify(key), /PRIVATE KEY/, 'the key object serialises without its private material');
});
