// End to end through the real CLI: keygen → a trail written with that key → verify (intact, then
// tampered) → access report (json/html) → plan; exit codes as documented.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuditTrail } from '../../../trail/trail.ts';
import { fileSink } from '../../../trail/sinks.ts';
import { auditKeyFromPem, createSigner } from '../../../trail/keys.ts';
import { auditAdmission } from '../../../trail/events.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const EXAMPLE = join(ROOT, 'examples/audit/manifests.yaml');
let dir: string;

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'vaultgate-cli-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

void test('keygen → trail → verify OK, then a dropped record is reported with file:line and exit 1', async () => {
  const kg = await cli('audit', 'keygen', '--out', dir);
  assert.equal(kg.code, 0, kg.stderr);
  const keyFile = join(dir, 'audit-signing-key.pem');
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  assert.doesNotMatch(kg.stdout, /PRIVATE KEY/, 'the private key is never printed');

  const key = await auditKeyFromPem(readFileSync(keyFile, 'utf8'));
  const log = join(dir, 'audit.log');
  const trail = await AuditTrail.open({
    replica: 'webhook-0',
    signer: createSigner(key),
    sink: fileSink({ path: log }),
  });
  for (let i = 0; i < 5; i++) {
    await trail.append(
      auditAdmission(
        {
          response: { uid: `u${i}`, allowed: i !== 2 },
          rules: i === 2 ? ['guardrail.forbidden-path'] : [],
          patchOps: [],
        },
        {
          uid: `u${i}`,
          kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
          namespace: 'pay',
          name: `p${i}`,
          operation: 'CREATE',
          userInfo: { username: 'alice' },
        },
      ),
    );
  }
  await trail.close();

  const ok = await cli('audit', 'verify', log, '--jwks', join(dir, 'audit-jwks.json'));
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /OK: 6 records in 1 file\(s\), 1 chain\(s\), 0 error\(s\)/);
  assert.match(ok.stdout, /5 of 5 admission record\(s\) no caller authentication vouches for \(5 unauthenticated: /);

  const lines = readFileSync(log, 'utf8').split('\n');
  const tampered = join(dir, 'tampered.log');
  writeFileSync(tampered, lines.filter((_, i) => i !== 3).join('\n'));
  const bad = await cli('audit', 'verify', tampered, '--jwks', join(dir, 'audit-jwks.json'));
  assert.equal(bad.code, 1);
  assert.match(
    bad.stdout,
    /ERROR  missing: .*tampered\.log:4 \(replica webhook-0, seq 4\): expected seq 3 after .*tampered\.log:3, found seq 4: record seq 3 is missing/,
  );
  assert.match(bad.stdout, /FAILED/);
});

void test('a forged review (kubernetes-admin, system:masters) from an unauthenticated caller: counted by verify, and an error with --require-authenticated (issue #21 item 4)', async () => {
  mkdirSync(join(dir, 'forged'));
  assert.equal((await cli('audit', 'keygen', '--out', join(dir, 'forged'))).code, 0);
  const key = await auditKeyFromPem(readFileSync(join(dir, 'forged', 'audit-signing-key.pem'), 'utf8'));
  const log = join(dir, 'forged', 'audit.log');
  const trail = await AuditTrail.open({
    replica: 'webhook-0',
    signer: createSigner(key),
    sink: fileSink({ path: log }),
  });
  const request = {
    uid: 'f1',
    kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
    namespace: 'pay',
    name: 'p',
    operation: 'CREATE',
    userInfo: { username: 'kubernetes-admin', groups: ['system:masters'] },
  };
  const decision = { response: { uid: 'f1', allowed: true }, rules: [], patchOps: [] };
  // the real apiserver through a pinned client certificate, then a pod POSTing the same claims without one
  await trail.append(
    auditAdmission(decision, request, {
      caller: {
        authenticated: true,
        subject: 'kube-apiserver-webhook-client',
        vouchedBy: 'verified client certificate CN=kube-apiserver-webhook-client (pinned subject)',
        peer: '10.0.0.1:443',
      },
    }),
  );
  await trail.append(
    auditAdmission(decision, { ...request, uid: 'f2' }, { caller: { authenticated: false, peer: '10.244.3.7:40112' } }),
  );
  // a record written before subject pinning: any certificate of the CA was taken
  await trail.append(
    auditAdmission(
      decision,
      { ...request, uid: 'f3' },
      { caller: { authenticated: true, subject: 'tenant-workload', peer: '10.244.3.8:40113' } },
    ),
  );
  await trail.close();
  const jwks = join(dir, 'forged', 'audit-jwks.json');

  const plain = await cli('audit', 'verify', log, '--jwks', jwks);
  assert.equal(plain.code, 0, 'the chain itself is intact');
  assert.match(
    plain.stdout,
    /2 of 3 admission record\(s\) no caller authentication vouches for \(1 unauthenticated: .*; 1 from before subject pinning: /,
  );

  const strict = await cli('audit', 'verify', log, '--jwks', jwks, '--require-authenticated');
  assert.equal(strict.code, 1, strict.stdout + strict.stderr);
  assert.match(strict.stdout, /--require-authenticated: 2 admission record\(s\) no caller authentication vouches for/);
  assert.match(strict.stdout, /^FAILED: 4 records/m);

  const json = await cli('audit', 'verify', log, '--jwks', jwks, '--require-authenticated', '-o', 'json');
  assert.equal(json.code, 1);
  const report = JSON.parse(json.stdout) as {
    ok: boolean;
    admissions: number;
    unauthenticated: number;
    unpinned: number;
    unvouched: number;
  };
  assert.deepEqual(
    [report.ok, report.admissions, report.unauthenticated, report.unpinned, report.unvouched],
    [false, 3, 1, 1, 2],
  );
});

void test('verify usage errors exit 2 and say what is missing', async () => {
  const r = await cli('audit', 'verify', 'x.log');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--jwks <file\|url> is required/);
});

void test('access --path/--capability -o json: the documented schema, exit 1 because of high findings', async () => {
  const r = await cli(
    'audit',
    'access',
    '-f',
    EXAMPLE,
    '--path',
    'secret/data/payments/db',
    '--capability',
    'read',
    '-o',
    'json',
  );
  assert.equal(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout) as { schemaVersion: string; query: { allowed: Array<{ subject: string }> } };
  assert.equal(report.schemaVersion, 'vaultgate.io/access-report/v1');
  assert.deepEqual(
    report.query.allowed.map((a) => a.subject),
    ['orders/orders-api', 'payments/api', 'payments/worker'],
  );
});

void test('access -o html --out writes one self-contained page', async () => {
  const out = join(dir, 'access.html');
  const r = await cli('audit', 'access', '-f', EXAMPLE, '--subject', 'payments/api', '-o', 'html', '--out', out);
  assert.equal(r.stdout, '');
  const html = readFileSync(out, 'utf8');
  assert.match(html, /^<!doctype html>/);
  assert.doesNotMatch(html, /(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
});

void test('access rejects an unknown capability with exit 2', async () => {
  const r = await cli('audit', 'access', '-f', EXAMPLE, '--path', 'x', '--capability', 'write');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--capability must be one of/);
});

void test('plan -f prints unified diffs and exits 1 when changes are planned', async () => {
  const r = await cli('plan', '-f', EXAMPLE);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /\+ create policy sys\/policies\/acl\/vaultgate\.payments\.db-read/);
  assert.match(r.stdout, /--- \/dev\/null\n\+\+\+ desired\/auth\/kubernetes\/role\/vaultgate\.orders\.app/);
  // orders/app reaches every namespace's db and platform/operator asks for sudo on sys/: the built-in floor refuses both.
  assert.match(
    r.stdout,
    /x refused policy sys\/policies\/acl\/vaultgate\.orders\.app .*\n.*\n.*"secret\/data\/\+\/db".*\(rule guardrail\.allowed-path\)/,
  );
  assert.match(r.stdout, /x refused policy sys\/policies\/acl\/vaultgate\.platform\.operator/);
  assert.match(r.stdout, /Plan: 6 to create, 0 to update, 0 to delete, 0 unchanged, 2 refused\./);
});

void test('--help teaches each command', async () => {
  const [a, v, p] = await Promise.all([
    cli('audit', '--help'),
    cli('audit', 'access', '--help'),
    cli('plan', '--help'),
  ]);
  assert.equal(a.code, 0);
  assert.match(a.stdout, /verify <file\.\.\.> --jwks/);
  assert.match(v.stdout, /--path <path> --capability <cap>/);
  assert.match(p.stdout, /unified diff for pull-request review/);
});

void test('plan and audit access refuse a manifest with malformed metadata (exit 2, naming file, document and field) instead of dropping it and exiting 0 (issue #21 item 9)', async () => {
  const file = join(dir, 'malformed.yaml');
  writeFileSync(
    file,
    [
      readFileSync(EXAMPLE, 'utf8').trimEnd(),
      '---',
      'apiVersion: vaultgate.io/v1alpha1',
      'kind: VaultPolicy',
      'metadata: { name: 42, namespace: payments }',
      'spec: { rules: [{ path: "secret/data/payments/*", capabilities: [read, sudo] }] }',
      '',
    ].join('\n'),
  );
  for (const args of [
    ['plan', '-f', file],
    ['audit', 'access', '-f', file],
  ]) {
    const r = await cli(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /malformed\.yaml: document \d+: VaultPolicy without metadata\.name \(a non-empty string\)/);
  }
});
