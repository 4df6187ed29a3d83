// A CA rotation under continuous load, end to end with real TLS: the keeper (real clock, short graces)
// rotates the CA through stage → publish → new leaf → retire; a simulated kubelet copies the Secret into
// two replicas' volumes with different delays; each replica runs the reloader on a real HTTPS server; a
// simulated apiserver sends requests round-robin to both replicas, trusting exactly the caBundle of the
// webhook configuration as its informer saw it (with lag), with a keep-alive client per caBundle as the
// apiserver's webhook client manager does. Every failed request is counted: the test demands zero.
import 'reflect-metadata';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, renameSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { CertKeeper } from '../../certs/keeper.ts';
import { createCertReloader, type CertReloader } from '../../certs/reloader.ts';
import { bundleFacts, certFacts, isIssuedBy } from '../../certs/pem.ts';
import { readStoredPki, ROTATE_REQUEST_ANNOTATION } from '../../certs/secret-store.ts';
import { FakeCertCluster } from './fake-cluster.ts';

const NS = 'vaultgate';
const SECRET = 'vg-webhook-tls';
const SERVICE = 'vg-webhook';
const KUBELET_DELAYS_MS = [120, 450]; // per replica: Secret volume refresh lag
const INFORMER_LAG_MS = 80; // apiserver's view of webhook configurations
const CONCURRENCY = 8;

interface Replica {
  dir: string;
  server: https.Server;
  reloader: CertReloader;
  port: number;
}

function until(cond: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  // Conditions here change on timers of the simulated components; a short poll observes them.
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const t = setInterval(() => {
      if (cond()) {
        clearInterval(t);
        resolve();
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(t);
        reject(new Error(`timed out waiting for ${what}`));
      }
    }, 10);
  });
}

void test('CA rotation under continuous load: zero failed requests', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vg-rotation-load-'));
  const cluster = new FakeCertCluster();
  cluster.addConfig('ValidatingWebhookConfiguration', 'vg-validate', ['vaultpolicies.validate.vaultgate.io']);
  cluster.addConfig('MutatingWebhookConfiguration', 'vg-mutate', ['vaultpolicies.mutate.vaultgate.io']);
  const timers = new Set<NodeJS.Timeout>();
  const later = (fn: () => void, ms: number): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  // simulated apiserver informer: sees the validating configuration's caBundle INFORMER_LAG_MS late
  let apiserverCaBundle = '';
  // simulated kubelets: copy tls.crt/tls.key into each replica's volume, atomically, after a delay
  const replicas: Replica[] = [];
  cluster.onWrite = ({ kind }) => {
    if (kind === 'ValidatingWebhookConfiguration') {
      const bundle = cluster.caBundles()[0] ?? '';
      later(() => {
        apiserverCaBundle = bundle;
      }, INFORMER_LAG_MS);
    }
    if (kind === 'Secret') {
      const s = readStoredPki(cluster.secrets.get(`${NS}/${SECRET}`))!;
      replicas.forEach((r, i) =>
        later(() => {
          const tmp = join(r.dir, `..${Date.now()}`);
          mkdirSync(tmp);
          writeFileSync(join(tmp, 'tls.crt'), s.cert ?? '');
          writeFileSync(join(tmp, 'tls.key'), s.key ?? '');
          renameSync(join(tmp, 'tls.crt'), join(r.dir, 'tls.crt'));
          renameSync(join(tmp, 'tls.key'), join(r.dir, 'tls.key'));
        }, KUBELET_DELAYS_MS[i]!),
      );
    }
  };

  for (let i = 0; i < 2; i++) {
    const dir = join(root, `replica-${i}`);
    mkdirSync(dir);
    const server = https.createServer({ minVersion: 'TLSv1.2' }, (_req, res) => {
      res.end('{"allowed":true}');
    });
    server.keepAliveTimeout = 90_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const reloader = createCertReloader({
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      intervalMs: 25,
    });
    reloader.start(server);
    replicas.push({ dir, server, reloader, port: (server.address() as AddressInfo).port });
  }

  const keeper = new CertKeeper({
    client: cluster,
    namespace: NS,
    secretName: SECRET,
    service: SERVICE,
    extraSans: ['127.0.0.1'],
    intervalMs: 100,
    settleMs: 20,
    // Grace periods scaled down from minutes to seconds, kept far above the simulated lags: on a loaded
    // CI machine timers slip by hundreds of milliseconds, and a grace that only just covers a lag would
    // make this test measure the scheduler instead of the rotation sequence.
    policy: { publishGraceMs: 2_000 + 4 * INFORMER_LAG_MS, retireGraceMs: 2_000 + 3 * Math.max(...KUBELET_DELAYS_MS) },
  });
  const stopKeeper = new AbortController();
  const keeperDone = keeper.run(stopKeeper.signal);

  // the apiserver's webhook client: one keep-alive agent per caBundle (rebuilt when the bundle changes)
  const agents = new Map<string, https.Agent>();
  const agentFor = (bundle: string): https.Agent => {
    let a = agents.get(bundle);
    if (!a) {
      a = new https.Agent({ keepAlive: true, ca: bundle, servername: `${SERVICE}.${NS}.svc` });
      agents.set(bundle, a);
    }
    return a;
  };
  const stats = { ok: 0, failed: 0, errors: new Map<string, number>(), served: new Set<string>() };
  const call = (port: number): Promise<void> =>
    new Promise((resolve) => {
      const req = https.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/validate', agent: agentFor(apiserverCaBundle) },
        (res) => {
          const fp = (res.socket as import('node:tls').TLSSocket).getPeerCertificate?.().fingerprint256;
          if (fp) stats.served.add(fp);
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) stats.ok++;
            else stats.failed++;
            resolve();
          });
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        stats.failed++;
        const k = err.code ?? err.message;
        stats.errors.set(k, (stats.errors.get(k) ?? 0) + 1);
        resolve();
      });
      req.end('{}');
    });

  try {
    await until(
      () =>
        replicas.every((r) => r.reloader.ready()) &&
        apiserverCaBundle !== '' &&
        !!readStoredPki(cluster.secrets.get(`${NS}/${SECRET}`))?.published,
      'initial certificate',
    );
    const firstCa = bundleFacts(apiserverCaBundle)[0]!;

    let running = true;
    let n = 0;
    const loops = Array.from({ length: CONCURRENCY }, async () => {
      while (running) await call(replicas[n++ % replicas.length]!.port);
    });
    const started = Date.now();
    await until(() => stats.ok > 200, 'load under the first CA');

    // an operator requests a CA rotation (kubectl annotate), as for a suspected key compromise
    const s = cluster.secrets.get(`${NS}/${SECRET}`)!;
    s.metadata.annotations = {
      ...s.metadata.annotations,
      [ROTATE_REQUEST_ANNOTATION]: new Date(Date.now() + 1000).toISOString(),
    };
    s.metadata.resourceVersion = `${s.metadata.resourceVersion}-edited`;
    const phases: Record<string, number> = {};
    const mark = (name: string) => () => {
      phases[name] ??= Date.now() - started;
      return true;
    };
    const stored = () => readStoredPki(cluster.secrets.get(`${NS}/${SECRET}`))!;
    await until(() => bundleFacts(stored().caBundle).length === 2 && mark('bundle old+new in Secret')(), 'staged CA');
    await until(
      () => bundleFacts(apiserverCaBundle).length === 2 && mark('apiserver trusts old+new')(),
      'published bundle',
    );
    await until(() => !isIssuedBy(certFacts(stored().cert!), firstCa) && mark('new leaf in Secret')(), 'new leaf');
    const newLeaf = certFacts(stored().cert!).fingerprint;
    await until(
      () =>
        replicas.every((r) => r.reloader.current()?.fingerprint === newLeaf) &&
        mark('both replicas serve the new leaf')(),
      'replicas reloaded',
    );
    await until(
      () =>
        bundleFacts(apiserverCaBundle).length === 1 &&
        bundleFacts(apiserverCaBundle)[0]!.fingerprint !== firstCa.fingerprint &&
        mark('apiserver trusts the new CA only')(),
      'old CA retired',
    );
    const okAtRetire = stats.ok;
    await until(() => stats.ok > okAtRetire + 200, 'load under the new CA only');
    running = false;
    await Promise.all(loops);
    const seconds = (Date.now() - started) / 1000;

    const errors = Object.fromEntries(stats.errors);
    process.stdout.write(
      `rotation under load: ${stats.ok + stats.failed} requests in ${seconds.toFixed(2)} s (${Math.round((stats.ok + stats.failed) / seconds)} req/s, ${CONCURRENCY} concurrent, 2 replicas), failed ${stats.failed} ${JSON.stringify(errors)}; leaves served ${stats.served.size}; phases (ms) ${JSON.stringify(phases)}\n`,
    );
    assert.equal(stats.failed, 0, `failed requests: ${JSON.stringify(errors)}`);
    assert.ok(stats.served.size >= 2, 'both the old and the new leaf served during the test');
  } finally {
    stopKeeper.abort();
    await keeperDone;
    for (const t of timers) clearTimeout(t);
    for (const a of agents.values()) a.destroy();
    for (const r of replicas) {
      r.reloader.stop();
      r.server.closeAllConnections();
      await new Promise<void>((res) => r.server.close(() => res()));
    }
    rmSync(root, { recursive: true, force: true });
  }
});
