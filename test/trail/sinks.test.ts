// File sink: rotation keeps the chain verifiable across files, a restart resumes from the file, and a
// crash mid-write is sealed off and visible. Stdout sink: JSON lines.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, appendFileSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { AuditTrail } from '../../trail/trail.ts';
import { fileSink, stdoutSink, teeSink } from '../../trail/sinks.ts';
import { createSigner, mergeJwks } from '../../trail/keys.ts';
import { verifyAuditFiles } from '../../trail/verify.ts';
import { parseLine } from '../../trail/record.ts';
import { policyUpdate, readAll, trailFixture } from './fixture.ts';

const fx = trailFixture('vaultgate-audit-');

void describe('file sink', () => {
  void test('rotates by size; the chain verifies across all files, oldest first', async () => {
    const path = join(fx.dir, 'rot.log');
    const sink = fileSink({ path, maxBytes: 4096, maxFiles: 30 });
    const trail = await AuditTrail.open({ replica: 'w0', signer: createSigner(fx.key), sink });
    for (let i = 0; i < 40; i++) await trail.append(policyUpdate(i));
    await trail.close();
    const files = sink.files();
    assert.ok(files.length >= 3, `expected several files, got ${files.join(', ')}`);
    for (const f of files) assert.ok(statSync(f).size <= 4096, `${f} exceeds maxBytes`);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const r = await verifyAuditFiles(readAll(files), mergeJwks(undefined, fx.key.publicJwk));
    assert.equal(r.ok, true, JSON.stringify(r.issues));
    assert.equal(r.records, 41);
    assert.deepEqual(r.issues, []);
  });

  void test('old files beyond maxFiles are dropped: verification then notes the missing start, no error', async () => {
    const path = join(fx.dir, 'drop.log');
    const sink = fileSink({ path, maxBytes: 2048, maxFiles: 2 });
    const trail = await AuditTrail.open({ replica: 'w0', signer: createSigner(fx.key), sink });
    for (let i = 0; i < 40; i++) await trail.append(policyUpdate(i));
    await trail.close();
    assert.equal(readdirSync(fx.dir).filter((f) => f.startsWith('drop.log')).length, 3);
    const r = await verifyAuditFiles(readAll(sink.files()), mergeJwks(undefined, fx.key.publicJwk));
    assert.equal(r.ok, true);
    assert.deepEqual(
      r.issues.map((i) => i.kind),
      ['starts-mid-chain'],
    );
  });

  void test('a restarted replica resumes its chain from the file (across a rotation too)', async () => {
    const path = join(fx.dir, 'resume.log');
    const s1 = fileSink({ path, maxBytes: 4096 });
    const t1 = await AuditTrail.open({ replica: 'w0', signer: createSigner(fx.key), sink: s1 });
    for (let i = 0; i < 5; i++) await t1.append(policyUpdate(i));
    const head = t1.head;
    await t1.close();
    const s2 = fileSink({ path, maxBytes: 4096 });
    const t2 = await AuditTrail.open({ replica: 'w0', signer: createSigner(fx.key), sink: s2 });
    assert.equal(t2.head.chain, head.chain);
    assert.equal(t2.head.seq, head.seq + 1);
    for (let i = 0; i < 20; i++) await t2.append(policyUpdate(i));
    await t2.close();
    const r = await verifyAuditFiles(readAll(s2.files()), mergeJwks(undefined, fx.key.publicJwk));
    assert.equal(r.ok, true, JSON.stringify(r.issues));
    assert.equal(r.chains.length, 1);
  });

  void test('a crash mid-write: the partial line is sealed off, a new chain links to the last complete record', async () => {
    const path = join(fx.dir, 'crash.log');
    const s1 = fileSink({ path });
    const t1 = await AuditTrail.open({ replica: 'w0', signer: createSigner(fx.key), sink: s1 });
    await t1.append(policyUpdate(1));
    const head = t1.head;
    await t1.close();
    appendFileSync(path, '{"audit":"vaultgate/v2","replica":"w0","seq":2,"ts"'); // torn write
    const s2 = fileSink({ path });
    const t2 = await AuditTrail.open({
      replica: 'w0',
      signer: createSigner(fx.key),
      sink: s2,
      newChainId: () => 'after-crash',
    });
    await t2.append(policyUpdate(2));
    await t2.close();
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    const start = parseLine(lines[3]!)!;
    assert.equal(start.chain, 'after-crash');
    assert.deepEqual(start.event, {
      type: 'chain-start',
      reason: 'previous-unreadable',
      previous: { chain: head.chain, seq: head.seq, hash: head.hash },
    });
    const r = await verifyAuditFiles(readAll([path]), mergeJwks(undefined, fx.key.publicJwk));
    assert.deepEqual(
      r.issues.filter((i) => i.severity === 'error').map((i) => [i.kind, i.line]),
      [['unparsable', 3]],
      'the torn line is the only error',
    );
  });
});

void test('stdout sink writes one JSON line per record; tee writes to both and resumes from the file', async () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => {
    text += c.toString();
  });
  const path = join(fx.dir, 'tee.log');
  const sink = teeSink(stdoutSink(out), fileSink({ path }));
  const trail = await AuditTrail.open({ replica: 'w0', signer: createSigner(fx.key), sink });
  await trail.append(policyUpdate(1));
  await trail.close();
  const lines = text.split('\n').filter(Boolean);
  assert.equal(lines.length, 2);
  assert.equal(parseLine(lines[1]!)?.seq, 1);
  assert.equal(readFileSync(path, 'utf8'), text);
  const again = await AuditTrail.open({
    replica: 'w0',
    signer: createSigner(fx.key),
    sink: teeSink(stdoutSink(out), fileSink({ path })),
  });
  assert.equal(again.head.seq, 2);
  await again.close();
});
