import 'reflect-metadata';
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { Writable } from 'node:stream';
import { run } from '../../../cli/commands/certs.ts';
import { generateCA, issueServingCert } from '../../../certs/generate.ts';

const dir = mkdtempSync(join(tmpdir(), 'vg-certs-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const sink = (f: (s: string) => void) =>
    new Writable({
      write(c: Buffer, _e, cb) {
        f(c.toString());
        cb();
      },
    });
  const code = await run(argv, {
    stdout: sink((s) => {
      out += s;
    }),
    stderr: sink((s) => {
      err += s;
    }),
  });
  return { code, out, err };
}

void describe('vaultgate certs', () => {
  void test('create writes a CA and a serving pair with the Service SANs plus --dns/--ip; the key is private', async () => {
    const out = join(dir, 'a');
    const r = await cli(
      'create',
      '--service',
      'vaultgate-webhook',
      '--namespace',
      'vaultgate',
      '--out',
      out,
      '--dns',
      'localhost',
      '--ip',
      '127.0.0.1',
      '--days',
      '30',
    );
    assert.equal(r.code, 0, r.err);
    const ca = new X509Certificate(readFileSync(join(out, 'ca.crt')));
    const leaf = new X509Certificate(readFileSync(join(out, 'tls.crt')));
    assert.ok(leaf.verify(ca.publicKey));
    assert.ok(leaf.checkPrivateKey(createPrivateKey(readFileSync(join(out, 'tls.key')))));
    assert.equal(
      leaf.subjectAltName,
      'DNS:vaultgate-webhook, DNS:vaultgate-webhook.vaultgate, DNS:vaultgate-webhook.vaultgate.svc, DNS:vaultgate-webhook.vaultgate.svc.cluster.local, DNS:localhost, IP Address:127.0.0.1',
    );
    assert.equal(statSync(join(out, 'tls.key')).mode & 0o777, 0o600);
    assert.match(r.out, /webhook.caBundle/);
    assert.doesNotMatch(r.out, /PRIVATE KEY/);
    const b = join(dir, 'b');
    assert.equal((await cli('create', '--service', 's', '--namespace', 'n', '--out', b)).code, 0);
    const again = await cli('create', '--service', 's', '--namespace', 'n', '--out', b);
    assert.equal(again.code, 1);
    assert.match(again.err, /already exist.*--force/);
    assert.equal((await cli('create', '--service', 's', '--namespace', 'n', '--out', b, '--force')).code, 0);
  });

  void test('create: usage errors exit 2 with a reason', async () => {
    assert.deepEqual([(await cli('create', '--namespace', 'n')).code], [2]);
    assert.match(
      (await cli('create', '--service', 's', '--namespace', 'n', '--ip', 'localhost')).err,
      /--ip takes IP addresses/,
    );
    assert.match((await cli('create', '--service', 's', '--namespace', 'n', '--days', '0')).err, /positive/);
    assert.equal((await cli('create', '--service', 's', '--namespace', 'n', '--bogus')).code, 2);
    assert.equal((await cli('frobnicate')).code, 2);
  });

  void test('inspect prints subject, issuer, SANs and validity of each certificate in a bundle', async () => {
    const out = join(dir, 'a');
    writeFileSync(
      join(dir, 'bundle.pem'),
      readFileSync(join(out, 'tls.crt'), 'utf8') + readFileSync(join(out, 'ca.crt'), 'utf8'),
    );
    const r = await cli('inspect', join(dir, 'bundle.pem'));
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /certificate 1\/2\n {2}subject: {6}CN=vaultgate-webhook\n/);
    assert.match(r.out, /SANs: {9}vaultgate-webhook, .*localhost, 127\.0\.0\.1/);
    assert.match(r.out, /certificate 2\/2 \(CA\)/);
    assert.match(r.out, /\(self-signed\)/);
    assert.match(r.out, /valid until: .*\(29 days left\)/);
    assert.match(r.out, /WARNING: certificate 1 .* expires in 29 days \(< 30\)/, 'a 30-day leaf warns');
    assert.doesNotMatch(r.out, /WARNING: certificate 2/);
  });

  void test('inspect: expired → exit 1; a key file is refused without being printed', async () => {
    const ca = await generateCA();
    const old = await issueServingCert({
      ca,
      dnsNames: ['x'],
      validityDays: 1,
      now: new Date(Date.now() - 5 * 86_400_000),
    });
    writeFileSync(join(dir, 'old.crt'), old.cert);
    const r = await cli('inspect', join(dir, 'old.crt'));
    assert.equal(r.code, 1);
    assert.match(r.out, /EXPIRED/);
    writeFileSync(join(dir, 'k.pem'), old.key);
    const k = await cli('inspect', join(dir, 'k.pem'));
    assert.equal(k.code, 1);
    assert.match(k.err, /holds a private key, not shown/);
    assert.ok(!k.err.includes(old.key.split('\n')[1]!));
    assert.equal((await cli('inspect', join(dir, 'missing.pem'))).code, 1);
  });

  void test('--help documents both subcommands', async () => {
    const r = await cli('--help');
    assert.equal(r.code, 0);
    assert.match(r.out, /vaultgate certs create --service/);
    assert.match(r.out, /vaultgate certs inspect <file>/);
    assert.equal((await cli('create', '--help')).code, 0);
  });
});
