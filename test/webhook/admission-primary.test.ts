// The webhook on several processes (--admission-workers 2, webhook/admission-primary.ts), as a user runs
// it: every review answered has its record in the one chain the primary writes and that chain verifies;
// /metrics sums the workers; a certificate swapped on disk is served by every worker; kill -9 of the
// primary leaves no worker answering.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate as X509 } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { generateAuditKey, mergeJwks, privateKeyPem, type AuditKey } from '../../trail/keys.ts';
import { verifyAuditFiles } from '../../trail/verify.ts';
import { twentyRulePolicyReview } from '../bench/fixtures.ts';
import { selfSignedTls, type TestTls } from '../support/tls.ts';

const TARGET = new URL('../support/admission-workers-target.ts', import.meta.url).pathname;
const WORKERS = 2;

function review(port: number, uid: string, ca: string): Promise<{ status: number; uid?: string; allowed?: boolean }> {
  const body = twentyRulePolicyReview();
  body.request.uid = uid;
  return new Promise((resolve, reject) => {
    const req = https.request(
      `https://127.0.0.1:${port}/validate`,
      { method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => {
          const r = (JSON.parse(data) as { response?: { uid: string; allowed: boolean } }).response;
          resolve({ status: res.statusCode ?? 0, uid: r?.uid, allowed: r?.allowed });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function servedCertificate(port: number): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cert = s.getPeerCertificate();
      s.destroy();
      resolve(cert);
    });
    s.on('error', reject);
  });
}

function getText(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${port}${path}`, (res) => {
        let data = '';
        res.on('data', (c: Buffer) => (data += c.toString()));
        res.on('end', () => resolve(data));
      })
      .on('error', reject);
  });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); // a zombie answers nothing
  } catch {
    return false;
  }
};

describe('admission workers', () => {
  let dir: string;
  let tls: TestTls;
  let key: AuditKey;
  let child: ChildProcess;
  let started: { port: number; workers: number[]; metrics: number };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vaultgate-workers-'));
    tls = await selfSignedTls('127.0.0.1');
    key = await generateAuditKey();
    writeFileSync(join(dir, 'tls.crt'), tls.cert);
    writeFileSync(join(dir, 'tls.key'), tls.key);
    writeFileSync(join(dir, 'audit.pem'), privateKeyPem(key), { mode: 0o600 });
    child = spawn(process.execPath, ['--import', 'tsx', TARGET, dir, String(WORKERS)], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    [started] = (await once(child, 'message')) as [typeof started];
  });

  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const pid of started?.workers ?? []) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('every review answered has its record in one chain that verifies; /metrics sums the workers', async () => {
    assert.equal(started.workers.length, WORKERS);
    const uids = Array.from({ length: 40 }, (_, i) => `uid-${i}`);
    const answers = await Promise.all(uids.map((u) => review(started.port, u, tls.ca)));
    for (const [i, a] of answers.entries()) assert.deepEqual(a, { status: 200, uid: uids[i], allowed: true });
    const text = readFileSync(join(dir, 'audit.log'), 'utf8');
    for (const u of uids) assert.ok(text.includes(`"uid":"${u}"`), `record of ${u}`);
    const report = await verifyAuditFiles([{ name: 'audit.log', text }], mergeJwks(undefined, key.publicJwk));
    assert.equal(report.ok, true, JSON.stringify(report.issues));
    assert.equal(report.chains.length, 1, 'one writer, one chain');
    assert.equal(report.admissions, uids.length);

    const metrics = await getText(started.metrics, '/metrics');
    const answered = [...metrics.matchAll(/^vaultgate_admission_requests_total\{[^}]*\} (\d+)/gm)].reduce(
      (s, m) => s + Number(m[1]),
      0,
    );
    assert.equal(answered, uids.length, 'the workers’ counters, summed');
    assert.match(metrics, new RegExp(`^vaultgate_audit_records_written ${String(uids.length + 1)}$`, 'm'));
  });

  test('a certificate swapped on disk is served by every worker', { timeout: 60_000 }, async () => {
    const before = await servedCertificate(started.port);
    const next = await selfSignedTls('127.0.0.1');
    writeFileSync(join(dir, 'tls.key'), next.key);
    writeFileSync(join(dir, 'tls.crt'), next.cert);
    const wanted = new X509(next.cert).fingerprint256;
    assert.notEqual(before.fingerprint256, wanted);
    // The reloaders poll every 5 s; then every new connection, whichever worker takes it, has the new one.
    const deadline = Date.now() + 40_000;
    for (;;) {
      const seen = await Promise.all(Array.from({ length: 4 * WORKERS }, () => servedCertificate(started.port)));
      if (seen.every((c) => c.fingerprint256 === wanted)) break;
      assert.ok(Date.now() < deadline, 'some worker still serves the old certificate after 40 s');
      await new Promise((r) => setTimeout(r, 1000));
    }
  });

  test('kill -9 of the primary leaves no worker', { timeout: 30_000 }, async () => {
    for (const pid of started.workers) assert.ok(alive(pid), `worker ${pid} serving`);
    child.kill('SIGKILL');
    const deadline = Date.now() + 10_000;
    while (started.workers.some(alive)) {
      assert.ok(Date.now() < deadline, `workers ${started.workers.filter(alive).join(', ')} outlived the primary`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});
