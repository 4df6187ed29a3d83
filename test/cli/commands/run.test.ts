import 'reflect-metadata';
// `vaultgate run` as a user starts it: the webhook and the controller in one process, against the
// Kubernetes and Vault simulators, stopped with SIGTERM.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_OPTIONS } from '../../../cli/commands/run.ts';
import { generateCA, issueServingCert } from '../../../certs/generate.ts';
import { LEASES } from '../../../kube/resources.ts';
import { KubeSim } from '../../sim/kube.ts';
import { VaultSim } from '../../sim/vault.ts';

const root = new URL('../../../', import.meta.url).pathname;

function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
}

function finished(
  child: ChildProcessWithoutNullStreams,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Resolves with the first JSON log line on stdout whose msg is `msg` (pino writes one object a line). */
function logLine(
  child: ChildProcessWithoutNullStreams,
  msg: string,
  timeoutMs = 90_000,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no "${msg}" log line within ${timeoutMs} ms`));
    }, timeoutMs);
    const onData = (d: Buffer): void => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const rec = JSON.parse(line) as Record<string, unknown>;
          if (rec.msg === msg) {
            cleanup();
            resolve(rec);
            return;
          }
        } catch {
          /* not a log line */
        }
      }
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error(`exited before logging "${msg}"`));
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.off('close', onClose);
    };
    child.stdout.on('data', onData);
    child.on('close', onClose);
  });
}

function httpsGet(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

void describe('vaultgate run', () => {
  void test('--help lists the webhook and the controller flags, exit 0', async () => {
    const r = await finished(spawnCli(['run', '--help']));
    assert.equal(r.code, 0, r.stderr);
    for (const flag of Object.keys(RUN_OPTIONS)) assert.ok(r.stdout.includes(`--${flag}`), `--${flag} in the help`);
    assert.doesNotMatch(r.stdout, /--no-kube/, 'the controller needs the cluster: no offline mode');
  });

  void test('a flag of neither half, or --no-kube, is a usage error (exit 2)', async () => {
    for (const bad of ['--no-kube', '--bogus']) {
      const r = await finished(spawnCli(['run', bad]));
      assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /see vaultgate run --help/);
    }
  });

  void test('serves the webhook over HTTPS and the controller health endpoint; SIGTERM stops both, exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vaultgate-run-'));
    const kube = await KubeSim.start();
    const vault = await VaultSim.start();
    let child: ChildProcessWithoutNullStreams | undefined;
    try {
      const ca = await generateCA();
      const leaf = await issueServingCert({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
      writeFileSync(join(dir, 'tls.crt'), leaf.cert);
      writeFileSync(join(dir, 'tls.key'), leaf.key, { mode: 0o600 });
      writeFileSync(join(dir, 'kubeconfig'), kube.kubeConfig().exportConfig());
      child = spawnCli(
        [
          'run',
          `--kubeconfig=${join(dir, 'kubeconfig')}`,
          `--vault-addr=${vault.addr}`,
          `--tls-cert-file=${join(dir, 'tls.crt')}`,
          `--tls-key-file=${join(dir, 'tls.key')}`,
          '--host=127.0.0.1',
          '--port=0',
          '--metrics-port=0',
          '--no-audit',
          '--drain-seconds=0',
          '--leader-election-namespace=default',
          '--log-level=info',
        ],
        { VAULT_TOKEN: vault.rootToken, POD_NAME: 'run-test' },
      );
      const exit = finished(child);
      const [serving, health] = await Promise.all([
        logLine(child, 'webhook serving'),
        logLine(child, 'controller health and metrics listening'),
      ]);

      const webhook = await httpsGet(`${String(serving.url)}/healthz`, ca.cert);
      assert.equal(webhook.status, 200, 'the webhook answers /healthz over HTTPS with the given certificate');
      const controllerUrl = `http://127.0.0.1:${String(health.port)}`;
      assert.equal((await fetch(`${controllerUrl}/healthz`)).status, 200);
      assert.equal((await fetch(`${controllerUrl}/readyz`)).status, 200, 'caches synced');
      // Leader election ran against the cluster: this process holds the Lease.
      const lease = kube.store.get(LEASES, 'default', 'vaultgate-controller') as { spec?: { holderIdentity?: string } };
      assert.match(lease.spec?.holderIdentity ?? '', /^run-test_/);

      child.kill('SIGTERM');
      const r = await exit;
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /"msg":"shutting down"/);
      // The Lease is released on a graceful stop, so another replica takes over at once.
      assert.equal(
        (kube.store.get(LEASES, 'default', 'vaultgate-controller') as { spec?: { holderIdentity?: string } }).spec
          ?.holderIdentity ?? '',
        '',
      );
      child = undefined;
    } finally {
      child?.kill('SIGKILL');
      await kube.close();
      await vault.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
