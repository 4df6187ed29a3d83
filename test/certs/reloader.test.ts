import 'reflect-metadata';
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { Registry } from 'prom-client';
import { generateWebhookPki, issueServingCert, type WebhookPki } from '../../certs/generate.ts';
import { certFacts } from '../../certs/pem.ts';
import { createCertReloader, nodeFiles } from '../../certs/reloader.ts';
import { createLogger } from '../../observability/log.ts';
import { startWebhookServer } from '../../webhook/server.ts';

let dir: string;
let pki1: WebhookPki;
let pki2: WebhookPki;

function writePair(cert: string, key: string): void {
  // as the kubelet does: new content appears atomically (rename), never half-written
  writeFileSync(join(dir, 'tls.crt.tmp'), cert);
  writeFileSync(join(dir, 'tls.key.tmp'), key);
  renameSync(join(dir, 'tls.crt.tmp'), join(dir, 'tls.crt'));
  renameSync(join(dir, 'tls.key.tmp'), join(dir, 'tls.key'));
}

/** Fingerprint of the certificate a fresh TLS handshake sees. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fp = s.getPeerCertificate().fingerprint256;
      s.end();
      resolve(fp);
    });
    s.on('error', reject);
  });
}

void describe('certs/reloader', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vg-reloader-'));
    [pki1, pki2] = await Promise.all([
      generateWebhookPki({ service: 's', namespace: 'n', extraSans: ['127.0.0.1'] }),
      generateWebhookPki({ service: 's', namespace: 'n', extraSans: ['127.0.0.1'] }),
    ]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  void test('swaps the context of a running node https server: new handshakes see the new certificate', async () => {
    writePair(pki1.leaf.cert, pki1.leaf.key);
    const server = https.createServer({ cert: pki1.leaf.cert, key: pki1.leaf.key }, (_q, r) => r.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const reloads: string[] = [];
    const reloader = createCertReloader({
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      intervalMs: 60_000,
      onReload: (p) => reloads.push(p.fingerprint),
    });
    try {
      reloader.start(server);
      assert.ok(reloader.ready());
      assert.equal(await servedFingerprint(port), certFacts(pki1.leaf.cert).fingerprint);
      writePair(pki2.leaf.cert, pki2.leaf.key);
      assert.equal(reloader.check(), true);
      assert.equal(await servedFingerprint(port), certFacts(pki2.leaf.cert).fingerprint);
      assert.equal(reloader.check(), false, 'unchanged files: nothing to do');
      assert.deepEqual(reloads, [certFacts(pki1.leaf.cert).fingerprint, certFacts(pki2.leaf.cert).fingerprint]);
    } finally {
      reloader.stop();
      server.close();
      server.closeAllConnections();
    }
  });

  void test('works with webhook/server.ts updateCertificate', async () => {
    writePair(pki1.leaf.cert, pki1.leaf.key);
    const ws = await startWebhookServer(express(), {
      host: '127.0.0.1',
      port: 0,
      tls: { cert: pki2.leaf.cert, key: pki2.leaf.key },
    });
    const reloader = createCertReloader({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') });
    try {
      reloader.start(ws);
      assert.equal(await servedFingerprint(ws.port), certFacts(pki1.leaf.cert).fingerprint);
    } finally {
      reloader.stop();
      await ws.close();
    }
  });

  void test('a half-rotated pair (new cert, old key) is skipped; the old pair keeps serving until the key arrives', async () => {
    writePair(pki1.leaf.cert, pki1.leaf.key);
    const chunks: string[] = [];
    const log = createLogger({
      destination: new Writable({
        write(c: Buffer, _e, cb) {
          chunks.push(c.toString());
          cb();
        },
      }),
    });
    const registry = new Registry();
    const reloader = createCertReloader({
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      log,
      registry,
    });
    reloader.start();
    try {
      writeFileSync(join(dir, 'tls.crt'), pki2.leaf.cert);
      assert.equal(reloader.check(), false);
      assert.equal(reloader.current()?.fingerprint, certFacts(pki1.leaf.cert).fingerprint);
      assert.ok(reloader.ready());
      writeFileSync(join(dir, 'tls.key'), pki2.leaf.key);
      assert.equal(reloader.check(), true);
      assert.equal(reloader.current()?.fingerprint, certFacts(pki2.leaf.cert).fingerprint);
      const out = chunks.join('');
      assert.match(out, /does not hold the certificate's private key/);
      assert.doesNotMatch(out, /PRIVATE KEY/);
      const metrics = await registry.metrics();
      assert.match(metrics, /vaultgate_webhook_certificate_reloads_total\{result="rejected"\} 1/);
      assert.match(metrics, /vaultgate_webhook_certificate_expiry_timestamp_seconds \d+/);
    } finally {
      reloader.stop();
    }
  });

  void test('not ready without files, ready once they appear (waitUntilReady), unready when the cert expires', async () => {
    const sub = mkdtempSync(join(dir, 'empty-'));
    let clock = Date.now();
    const reloader = createCertReloader({
      certFile: join(sub, 'tls.crt'),
      keyFile: join(sub, 'tls.key'),
      intervalMs: 10,
      now: () => clock,
    });
    try {
      reloader.start();
      assert.equal(reloader.ready(), false);
      const waiting = reloader.waitUntilReady();
      writeFileSync(join(sub, 'tls.crt'), pki1.leaf.cert);
      writeFileSync(join(sub, 'tls.key'), pki1.leaf.key);
      const pair = await waiting;
      assert.equal(pair.fingerprint, certFacts(pki1.leaf.cert).fingerprint);
      assert.ok(reloader.ready());
      clock = pair.notAfter + 1;
      assert.equal(reloader.ready(), false, 'an expired pair fails readiness');
    } finally {
      reloader.stop();
    }
  });

  void test('an expired certificate on disk is never taken', async () => {
    const sub = mkdtempSync(join(dir, 'expired-'));
    const old = await issueServingCert({
      ca: pki1.ca,
      dnsNames: ['s.n.svc'],
      validityDays: 1,
      now: new Date(Date.now() - 3 * 86_400_000),
    });
    writeFileSync(join(sub, 'tls.crt'), old.cert);
    writeFileSync(join(sub, 'tls.key'), old.key);
    const reloader = createCertReloader({ certFile: join(sub, 'tls.crt'), keyFile: join(sub, 'tls.key') });
    try {
      reloader.start();
      assert.equal(reloader.current(), undefined);
      assert.equal(reloader.ready(), false);
      await assert.rejects(reloader.waitUntilReady(AbortSignal.abort()), /stopped before/);
    } finally {
      reloader.stop();
    }
  });

  void test('by default it polls every 10 s (controller-runtime certwatcher), not more often: an idle webhook wakes for nothing less (issue #24 item 5)', (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    writePair(pki1.leaf.cert, pki1.leaf.key);
    const reloads: string[] = [];
    const reloader = createCertReloader({
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      onReload: (p) => reloads.push(p.fingerprint),
    });
    try {
      reloader.start();
      writePair(pki2.leaf.cert, pki2.leaf.key);
      t.mock.timers.tick(9_999);
      assert.equal(reloads.length, 1, 'no poll before 10 s');
      t.mock.timers.tick(1);
      assert.deepEqual(reloads, [certFacts(pki1.leaf.cert).fingerprint, certFacts(pki2.leaf.cert).fingerprint]);
    } finally {
      reloader.stop();
    }
  });

  void test('a poll of unchanged files reads nothing: two stats, no read, no hash (issue #24 item 5)', () => {
    writePair(pki1.leaf.cert, pki1.leaf.key);
    const reads: string[] = [];
    const reloader = createCertReloader({
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      intervalMs: 60_000,
      files: { stat: nodeFiles.stat, read: (f) => (reads.push(f), nodeFiles.read(f)) },
    });
    try {
      reloader.start();
      assert.equal(reads.length, 2, 'the first poll reads the pair');
      for (let i = 0; i < 5; i++) assert.equal(reloader.check(), false);
      assert.equal(reads.length, 2, 'unchanged files are not read again');
      writePair(pki2.leaf.cert, pki2.leaf.key); // the kubelet's rename: new inodes
      assert.equal(reloader.check(), true);
      assert.equal(reads.length, 4);
      assert.equal(reloader.current()?.fingerprint, certFacts(pki2.leaf.cert).fingerprint);
    } finally {
      reloader.stop();
    }
  });

  void test('a pair not valid yet (a clock behind the issuer) is taken once its notBefore passes, the files unchanged', () => {
    writePair(pki1.leaf.cert, pki1.leaf.key);
    const notBefore = certFacts(pki1.leaf.cert).notBefore;
    let clock = notBefore - 60_000;
    const reloader = createCertReloader({
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      intervalMs: 60_000,
      now: () => clock,
    });
    try {
      reloader.start();
      assert.equal(reloader.current(), undefined, 'not valid before its notBefore');
      assert.equal(reloader.check(), false);
      clock = notBefore + 1;
      assert.equal(reloader.check(), true, 'taken at the first poll after notBefore');
      assert.ok(reloader.ready());
    } finally {
      reloader.stop();
    }
  });
});
