// The pure-Node PostgreSQL client (pg-wire.ts) and the probe program pods run (pg-probe.ts, bundled by
// pg-probe-script.ts) against a real PostgreSQL 15 (postgres.ts): SCRAM-SHA-256 and md5 logins, the
// server's refusals with their SQLSTATE, and the bundled probe run by node as a pod runs it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pgProbeScript } from './pg-probe-script.ts';
import type { ProbeLine } from './pg-probe.ts';
import { pgQuery } from './pg-wire.ts';
import { postgresSkipReason, startPostgres, type PostgresServer } from './postgres.ts';

const skip = postgresSkipReason();

void describe('pg-wire: a PostgreSQL client on node:net and node:crypto, against PostgreSQL 15', { skip }, () => {
  let pg: PostgresServer;
  const login = (user: string, password: string) => ({ host: pg.host, port: pg.port, user, password });
  const must = async (sql: string): Promise<void> => {
    const r = await pg.query(sql);
    assert.ok(r.ok, r.stderr);
  };

  before(async () => {
    pg = await startPostgres();
    await must(`CREATE ROLE scram_user LOGIN PASSWORD 'correct horse'`);
    // A password stored as md5 is checked with md5 only where pg_hba says md5 (or scram falls back to it).
    await must(`SET password_encryption = 'md5'; CREATE ROLE md5_user LOGIN PASSWORD 'battery staple'`);
  });
  after(() => pg?.stop());

  void test('SCRAM-SHA-256: logs in and returns the rows of a simple query', async () => {
    const r = await pgQuery(login('scram_user', 'correct horse'), 'SELECT current_user, 1 + 1, NULL');
    assert.deepEqual(r, { ok: true, rows: [['scram_user', '2', null]] });
  });

  void test("a wrong password is PostgreSQL's refusal (28P01), without the password in it", async () => {
    const r = await pgQuery(login('scram_user', 'wrong password'), 'SELECT 1');
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.code, '28P01');
    assert.match(!r.ok ? r.message : '', /password authentication failed for user "scram_user"/);
    assert.ok(!JSON.stringify(r).includes('wrong password'));
  });

  void test('a dropped role and an expired one are refused; a failed query is its SQLSTATE', async () => {
    await must(`CREATE ROLE gone LOGIN PASSWORD 'p1'`);
    assert.equal((await pgQuery(login('gone', 'p1'), 'SELECT 1')).ok, true);
    await must('DROP ROLE gone');
    assert.equal((await pgQuery(login('gone', 'p1'), 'SELECT 1')).ok, false);
    // What the database engine's credential becomes when its lease is not renewed: VALID UNTIL in the past.
    await must(`CREATE ROLE expired LOGIN PASSWORD 'p2' VALID UNTIL '2000-01-01'`);
    const r = await pgQuery(login('expired', 'p2'), 'SELECT 1');
    assert.equal(!r.ok && r.code, '28P01');
    const q = await pgQuery(login('scram_user', 'correct horse'), 'SELECT * FROM no_such_table');
    assert.equal(!q.ok && q.code, '42P01');
  });

  void test('md5 authentication where pg_hba asks for it', async () => {
    // initdb's loopback rule is scram-sha-256; a reload with an md5 rule first makes the server ask md5.
    const hba = join(pg.dir, 'data', 'pg_hba.conf');
    const original = readFileSync(hba, 'utf8');
    writeFileSync(hba, `host all md5_user 127.0.0.1/32 md5\n${original}`);
    try {
      await must('SELECT pg_reload_conf()');
      await sleep(300);
      assert.deepEqual(await pgQuery(login('md5_user', 'battery staple'), 'SELECT current_user'), {
        ok: true,
        rows: [['md5_user']],
      });
      const bad = await pgQuery(login('md5_user', 'nope'), 'SELECT 1');
      assert.equal(!bad.ok && bad.code, '28P01');
    } finally {
      writeFileSync(hba, original);
      await must('SELECT pg_reload_conf()');
    }
  });

  void test('nothing listening: a client failure, not a hang', async () => {
    const r = await pgQuery({ host: '127.0.0.1', port: 1, user: 'x', password: 'y', timeoutMs: 2000 }, 'SELECT 1');
    assert.equal(!r.ok && r.code, 'CLIENT');
    assert.match(!r.ok ? r.message : '', /ECONNREFUSED/);
  });

  void test('the bundled probe, run by node as a pod runs it: a line per login, failures once the role is dropped, exit on SIGTERM', async () => {
    await must(`CREATE ROLE probe_user LOGIN PASSWORD 'probe pass'`);
    const dir = mkdtempSync(join(tmpdir(), 'vaultgate-pg-probe-'));
    let probe: ReturnType<typeof spawn> | undefined;
    try {
      const file = join(dir, 'pg-probe.mjs');
      writeFileSync(file, await pgProbeScript());
      const child = spawn(process.execPath, [file], {
        env: {
          PGHOST: pg.host,
          PGPORT: String(pg.port),
          PGUSER: 'probe_user',
          PGPASSWORD: 'probe pass',
          PROBE_INTERVAL_MS: '200',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      probe = child;
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const lines = (): ProbeLine[] =>
        out
          .split('\n')
          .filter((l) => l.includes('"ok"'))
          .map((l) => JSON.parse(l) as ProbeLine);
      await sleep(1500);
      assert.ok(lines().length >= 3 && lines().every((l) => l.ok && l.user === 'probe_user'), out);
      await must('DROP ROLE probe_user');
      await sleep(1000);
      const failed = lines().filter((l) => !l.ok);
      assert.ok(failed.length >= 2, out);
      assert.ok(
        // 28P01 refused password; 28000 when the role went between the password check and the session.
        failed.every((l) => l.code === '28P01' || l.code === '28000'),
        JSON.stringify(failed),
      );
      const t = performance.now();
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.ok(performance.now() - t < 2000, 'SIGTERM ends the probe at once');
      assert.match(out, /"stopped":"SIGTERM"/);
      assert.ok(!out.includes('probe pass'), 'the password is never printed');
    } finally {
      probe?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
