// The production bundle (cli/build.ts → dist/vaultgate.mjs) must run on plain node with no node_modules
// and no tsx: it is built into a temporary directory (nothing above it has node_modules) and driven
// as a user would: --help, an offline validate, certs, and a webhook answering an AdmissionReview.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundle, REPO_ROOT, schemaFiles } from '../../cli/build.ts';

const dir = mkdtempSync(join(tmpdir(), 'vaultgate-bundle-'));
const outfile = join(dir, 'vaultgate.mjs');
// No NODE_OPTIONS (a parent run under `--import tsx` must not leak a loader into the child).
const env = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info' };

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [outfile, ...args], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function post(url: string, ca: string, body: unknown): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        data += c;
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, json: JSON.parse(data) as unknown });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The URL from the webhook's "webhook serving" log line (pino JSON on stdout). */
async function servingUrl(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`webhook exited (${String(code)}) before serving`);
  });
  const found = (async () => {
    for await (const line of lines) {
      const rec = JSON.parse(line) as { msg?: string; url?: string };
      if (rec.msg === 'webhook serving' && rec.url) return rec.url;
    }
    throw new Error('webhook stdout ended before serving');
  })();
  return Promise.race([found, exited]);
}

describe('production bundle', () => {
  before(async () => {
    await bundle(undefined, outfile);
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  void test('is ESM files (the entry and its chunks) plus the JSON Schemas the validator reads at run time', () => {
    const head = readFileSync(outfile, 'utf8').slice(0, 300);
    assert.match(head, /^#!\/usr\/bin\/env node\n/);
    assert.match(head, /createRequire/);
    for (const f of schemaFiles())
      assert.deepEqual(
        JSON.parse(readFileSync(join(dir, f), 'utf8')),
        JSON.parse(readFileSync(join(REPO_ROOT, 'schemas', f), 'utf8')),
        f,
      );
  });

  void test('`vaultgate controller` loads neither the Kubernetes API client nor the other subcommands (memory)', () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.mjs'));
    const controller = files.find((f) => /^vaultgate-controller-/.test(f));
    assert.ok(controller, `a controller chunk among ${files.join(', ')}`);
    // What the controller chunk loads when it is imported: its static imports, transitively.
    const loaded = new Set<string>();
    const visit = (f: string): void => {
      if (loaded.has(f)) return;
      loaded.add(f);
      for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/^import\s[^;]*?["']\.\/([^"']+\.mjs)["']/gm))
        visit(m[1]!);
    };
    visit(controller);
    const generatedApi = files.filter((f) => readFileSync(join(dir, f), 'utf8').includes('ObjectCoreV1Api = class'));
    assert.ok(generatedApi.length > 0, "client-node's generated API is in the bundle (for audit access)");
    assert.deepEqual(
      generatedApi.filter((f) => loaded.has(f)),
      [],
      'loaded with the controller',
    );
    assert.ok(
      ![...loaded].some((f) => /^vaultgate-(audit|plan|validate|certs)-/.test(f)),
      `other subcommands loaded: ${[...loaded].join(', ')}`,
    );
  });

  void test('--help lists the subcommands', () => {
    const r = cli(['--help']);
    assert.equal(r.status, 0, r.stderr);
    for (const c of ['webhook', 'controller', 'run', 'validate', 'audit', 'plan', 'certs'])
      assert.match(r.stdout, new RegExp(`^  ${c} `, 'm'));
  });

  void test('validate denies the sudo-on-sys/* example with exit 1 and names the rule', () => {
    const r = cli(['validate', '-f', join(REPO_ROOT, 'examples/bad-vaultpolicy-sudo-sys.yaml')]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /DENIED VaultPolicy team-a\/root-ish/);
    assert.match(r.stdout, /rule guardrail\.forbidden-capability/);
  });

  void test('dev is not in the bundle: exit 2 with a pointer to npm run dev', () => {
    const r = cli(['dev']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /source checkout.*npm run dev/);
  });

  void test('certs create + webhook serve one AdmissionReview over HTTPS', async () => {
    const tls = join(dir, 'tls');
    const made = cli([
      'certs',
      'create',
      '--service',
      'vaultgate-webhook',
      '--namespace',
      'vaultgate',
      '--out',
      tls,
      '--ip',
      '127.0.0.1',
    ]);
    assert.equal(made.status, 0, made.stderr);
    const child = spawn(
      process.execPath,
      [
        outfile,
        'webhook',
        '--no-kube',
        '--no-audit',
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--drain-seconds',
        '0',
        '--tls-cert-file',
        join(tls, 'tls.crt'),
        '--tls-key-file',
        join(tls, 'tls.key'),
      ],
      { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    try {
      const url = await servingUrl(child);
      const review = {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: 'bundle-1',
          operation: 'CREATE',
          namespace: 'team-a',
          name: 'root-ish',
          kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
          resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultpolicies' },
          userInfo: { username: 'alice' },
          object: {
            apiVersion: 'vaultgate.io/v1alpha1',
            kind: 'VaultPolicy',
            metadata: { name: 'root-ish', namespace: 'team-a' },
            spec: { rules: [{ path: 'sys/*', capabilities: ['read', 'sudo'] }] },
          },
        },
      };
      const res = await post(`${url}/validate`, readFileSync(join(tls, 'ca.crt'), 'utf8'), review);
      assert.equal(res.status, 200);
      const response = (res.json as { response: { uid: string; allowed: boolean; status?: { message?: string } } })
        .response;
      assert.equal(response.uid, 'bundle-1');
      assert.equal(response.allowed, false);
      assert.match(response.status?.message ?? '', /sudo/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit') as Promise<[number | null]>;
        child.kill('SIGTERM');
        const [code] = await exited;
        assert.equal(code, 0, stderr);
      }
    }
  });
});
