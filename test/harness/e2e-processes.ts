// vaultgate run as a user runs it: `node --import tsx cli/main.ts webhook|controller ...` child
// processes against the real control plane and Vault (OpenBao, or the simulator where asked for). Each process is in its own
// process group with its log in a file (harness ProcessGroup: killed on stop, on exit, and by a reaper
// if the test process dies). Readiness is the process's own /readyz, not a sleep.
import { request as httpsRequest } from 'node:https';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';
import { type ManagedProcess, ProcessGroup } from './processes.ts';
import { runTool } from './tools.ts';
import { waitFor } from './wait.ts';
import { stringify } from 'yaml';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(REPO_ROOT, 'cli/main.ts');

// Resolved here so the children work from any working directory.
const TSX = import.meta.resolve('tsx');

/** argv of the vaultgate CLI under node + tsx (what `npm run vaultgate --` runs). */
export function vaultgateArgv(args: string[]): string[] {
  return ['--import', TSX, CLI, ...args];
}

/** Runs a vaultgate CLI command to completion (e.g. `audit keygen`, `audit verify`). */
export function runVaultgate(args: string[], opts: { env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<string> {
  return runTool(process.execPath, vaultgateArgv(args), opts);
}

export interface WebhookHandle {
  proc: ManagedProcess;
  url: string;
  caPem: string;
  /** JWKS of the audit key, for `vaultgate audit verify`. */
  jwksPath: string;
  /** stdout+stderr of the process: logs and signed audit records. */
  logPath: string;
}

export interface ControllerHandle {
  name: string;
  proc: ManagedProcess;
  metricsUrl: string;
  logPath: string;
}

export interface WebhookOptions {
  /** Process name (default `webhook`). */
  name?: string;
  /** Listen port (default a free one): a restarted webhook can take its predecessor's port. */
  port?: number;
  /** Default: the target's admin kubeconfig. */
  kubeconfigPath?: string;
  /** Audit trail key: a local file from `vaultgate audit keygen` (default), the in-cluster Secret of a namespace, or off. */
  audit?: 'key-file' | { namespace: string } | false;
  /** Wait for /readyz (default) or only for /healthz (serving: e.g. before its CRDs exist). */
  waitReady?: boolean;
  extraArgs?: string[];
}

export interface ControllerOptions {
  /** Process name, also the replica's identity prefix in logs (default `controller`). */
  name?: string;
  vaultAddr: string;
  /** The controller's own Vault identity as a token (VAULT_TOKEN, in the environment, never argv)... */
  vaultToken?: string;
  /** ... or, as the chart runs it, a kubernetes-auth login as this role with a ServiceAccount token file. */
  vaultRole?: { role: string; saTokenFile: string; mount?: string };
  /** Default: the target's admin kubeconfig. */
  kubeconfigPath?: string;
  /** Default vaultgate-system. */
  leaderElectionNamespace?: string;
  driftCheckMs?: number;
  leaderElect?: boolean;
  extraArgs?: string[];
  /** Wait for /readyz (default true). */
  waitReady?: boolean;
}

/** Where the processes run against: the test control plane, or a user's cluster (`vaultgate dev --kubeconfig`). */
export interface ClusterTarget {
  kubeconfigPath: string;
  /** A serving certificate for 127.0.0.1/localhost and the CA that signed it (the webhook's caBundle). */
  issueServingCert(hosts: string[]): Promise<{ certPem: string; keyPem: string; caPem: string }>;
}

const seconds = (t: number): string => ((performance.now() - t) / 1000).toFixed(2);

/** GET over https with a CA, for the webhook's /readyz. */
export function httpsStatus(url: string, caPem: string): Promise<number> {
  return new Promise((resolveStatus, reject) => {
    const req = httpsRequest(url, { ca: caPem, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolveStatus(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

export class VaultgateProcesses {
  readonly group: ProcessGroup;
  readonly #cp: ClusterTarget;
  readonly #log: (line: string) => void;
  readonly #controllers = new Map<string, ControllerHandle>();

  constructor(cp: ClusterTarget, opts: { log?: (line: string) => void } = {}) {
    this.#cp = cp;
    this.#log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
    // Own temp dir: the control plane's stop() removes its dir, which would stop this group's reaper.
    this.group = new ProcessGroup(mkdtempSync(join(tmpdir(), 'vaultgate-e2e-')));
  }

  get dir(): string {
    return this.group.dir;
  }

  #env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    const { VAULT_TOKEN: _t, VAULT_ADDR: _a, KUBECONFIG: _k, ...rest } = process.env;
    return { ...rest, LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'info', ...extra };
  }

  /** Serving cert from the control plane's webhook CA, audit key from `vaultgate audit keygen`, then the webhook. */
  async startWebhook(opts: WebhookOptions = {}): Promise<WebhookHandle> {
    const t = performance.now();
    const name = opts.name ?? 'webhook';
    const cert = await this.#cp.issueServingCert(['127.0.0.1', 'localhost']);
    const certFile = join(this.dir, `${name}-tls.crt`);
    const keyFile = join(this.dir, `${name}-tls.key`);
    writeFileSync(certFile, cert.certPem);
    writeFileSync(keyFile, cert.keyPem, { mode: 0o600 });
    const auditDir = join(this.dir, `${name}-audit`);
    const audit = opts.audit ?? 'key-file';
    let auditArgs = ['--no-audit'];
    if (audit === 'key-file') {
      mkdirSync(auditDir, { recursive: true });
      await runVaultgate(['audit', 'keygen', '--out', auditDir]);
      auditArgs = ['--audit-key-file', join(auditDir, 'audit-signing-key.pem')];
    } else if (typeof audit === 'object') {
      auditArgs = ['--audit-namespace', audit.namespace];
    }
    const port = opts.port ?? (await freePort());
    const proc = this.group.spawn(
      name,
      process.execPath,
      vaultgateArgv([
        'webhook',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--tls-cert-file',
        certFile,
        '--tls-key-file',
        keyFile,
        '--kubeconfig',
        opts.kubeconfigPath ?? this.#cp.kubeconfigPath,
        '--drain-seconds',
        '0',
        '--replica',
        name,
        // any free port for /metrics: the default 8081 would collide between stacks running at once
        '--metrics-port',
        '0',
        ...auditArgs,
        ...(opts.extraArgs ?? []),
      ]),
      this.#env(),
    );
    const url = `https://127.0.0.1:${port}`;
    const probe = opts.waitReady === false ? 'healthz' : 'readyz';
    await waitFor(async () => ((await httpsStatus(`${url}/${probe}`, cert.caPem)) === 200 ? true : undefined), {
      what: `vaultgate webhook /${probe}`,
      timeoutMs: 60_000,
      intervalMs: 150,
      abort: proc.exited.then((why) => `webhook exited (${why}):\n${this.group.logTail(name)}`),
    }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${this.group.logTail(name)}`);
    });
    this.#log(`[e2e] vaultgate webhook ${probe === 'readyz' ? 'ready' : 'serving'} at ${url} in ${seconds(t)}s`);
    return { proc, url, caPem: cert.caPem, jwksPath: join(auditDir, 'audit-jwks.json'), logPath: proc.logPath };
  }

  async startController(opts: ControllerOptions): Promise<ControllerHandle> {
    const t = performance.now();
    const name = opts.name ?? 'controller';
    const port = await freePort();
    const proc = this.group.spawn(
      name,
      process.execPath,
      vaultgateArgv([
        'controller',
        '--kubeconfig',
        opts.kubeconfigPath ?? this.#cp.kubeconfigPath,
        '--vault-addr',
        opts.vaultAddr,
        '--metrics-port',
        String(port),
        '--leader-election-namespace',
        opts.leaderElectionNamespace ?? 'vaultgate-system',
        ...(opts.leaderElect === false ? ['--no-leader-elect'] : []),
        ...(opts.driftCheckMs ? ['--drift-check', String(opts.driftCheckMs)] : []),
        ...(opts.vaultRole
          ? [
              '--vault-role',
              opts.vaultRole.role,
              '--vault-sa-token-file',
              opts.vaultRole.saTokenFile,
              '--vault-auth-mount',
              opts.vaultRole.mount ?? 'kubernetes',
            ]
          : []),
        ...(opts.extraArgs ?? []),
      ]),
      this.#env({ ...(opts.vaultToken ? { VAULT_TOKEN: opts.vaultToken } : {}), POD_NAME: name }),
    );
    const handle: ControllerHandle = { name, proc, metricsUrl: `http://127.0.0.1:${port}`, logPath: proc.logPath };
    this.#controllers.set(name, handle);
    if (opts.waitReady !== false) {
      await waitFor(async () => ((await fetch(`${handle.metricsUrl}/readyz`)).status === 200 ? true : undefined), {
        what: `vaultgate controller ${name} /readyz`,
        timeoutMs: 60_000,
        intervalMs: 150,
        abort: proc.exited.then((why) => `controller ${name} exited (${why}):\n${this.group.logTail(name)}`),
      }).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${this.group.logTail(name)}`);
      });
      this.#log(`[e2e] vaultgate controller ${name} ready in ${seconds(t)}s`);
    }
    return handle;
  }

  /** A kubeconfig authenticating with a bearer token (a ServiceAccount's TokenRequest token), mode 0600 in this dir. */
  writeTokenKubeconfig(fileName: string, server: string, caPem: string, token: string): string {
    const path = join(this.dir, fileName);
    writeFileSync(
      path,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'sa',
        clusters: [
          { name: 'cluster', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } },
        ],
        users: [{ name: 'sa', user: { token } }],
        contexts: [{ name: 'sa', context: { cluster: 'cluster', user: 'sa' } }],
      }),
      { mode: 0o600 },
    );
    return path;
  }

  /** A secret file (e.g. a ServiceAccount token for --vault-sa-token-file), mode 0600 in this dir. */
  writeSecretFile(fileName: string, content: string): string {
    const path = join(this.dir, fileName);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  }

  /** /readyz body of a controller: `{ ready, leader: 'leader'|'standby'|'disabled', ... }`. */
  async controllerStatus(
    name = 'controller',
  ): Promise<{ ready: boolean; leader: 'leader' | 'standby' | 'disabled' } | undefined> {
    const h = this.#controllers.get(name);
    if (!h?.proc.isRunning()) return undefined;
    try {
      return (await (await fetch(`${h.metricsUrl}/readyz`)).json()) as {
        ready: boolean;
        leader: 'leader' | 'standby' | 'disabled';
      };
    } catch {
      return undefined;
    }
  }

  /** SIGTERM (graceful) or, with `kill: true`, SIGKILL right away. */
  async stop(name: string, opts: { kill?: boolean } = {}): Promise<void> {
    await this.group.stop(name, opts.kill ? 0 : 15_000);
  }

  logTail(name: string, lines = 40): string {
    return this.group.logTail(name, lines);
  }

  log(name: string): string {
    try {
      return readFileSync(join(this.dir, 'logs', `${name}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  /** Kills every vaultgate process and removes the dir. Call before the control plane's stop(). */
  async stopAll(): Promise<void> {
    const t = performance.now();
    await this.group.stopAll();
    this.#log(`[e2e] vaultgate processes stopped in ${seconds(t)}s`);
  }
}
