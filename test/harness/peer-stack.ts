// ESO and vaultgate side by side on one real control plane and one real OpenBao 2.7.2 (dev server with
// a file audit device counting every request, kubernetes auth doing real TokenReviews against the
// apiserver). ESO's own CRDs are installed (a cluster with ESO installed, where vaultgate takes over its
// objects), plus vaultgate's own kinds. Each controller serves its own controller class, so neither acts
// on the other's objects. Used by the differential suite (test/real/eso-differential.test.ts) and the
// peer benchmark (test/bench/peer.ts).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundle, CLI_ENTRY } from '../../cli/build.ts';
import { type ControlPlane, type ControlPlaneOptions, startControlPlane } from './control-plane.ts';
import { httpsStatus, REPO_ROOT, runVaultgate, vaultgateArgv } from './e2e-processes.ts';
import { type EsoController, type EsoControllerOptions, installEsoCrds, startEsoController } from './eso.ts';
import { type OpenBaoServer, startOpenBao } from './openbao.ts';
import { freePort } from './ports.ts';
import { type ManagedProcess, ProcessGroup } from './processes.ts';
import { configureKubernetesAuth, vaultRequest, type VaultResponse } from './vault.ts';
import { waitFor } from './wait.ts';

export interface PeerStackOptions {
  log?: (line: string) => void;
  /** Garbage collector etc. (ownerReference cascades), or these controllers. Default false. */
  controllerManager?: ControlPlaneOptions['controllerManager'];
}

export interface VaultgateControllerOptions {
  name?: string;
  controllerClass?: string;
  /** Run the production bundle (`npm run build`'s output, built into the stack's dir) instead of the TypeScript sources under tsx. */
  bundled?: boolean;
  /** Lease-based leader election (default off: one replica, as ESO runs by default). */
  leaderElect?: boolean;
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Flags for node itself, e.g. --cpu-prof (not allowed in NODE_OPTIONS). */
  nodeArgs?: string[];
}

export interface VaultgateController {
  name: string;
  proc: ManagedProcess;
  /** http://127.0.0.1:<port> (/readyz, /metrics) */
  metricsUrl: string;
  args: string[];
}

export interface VaultgateWebhookOptions {
  controllerClass?: string;
  /** Run the production bundle instead of the TypeScript sources under tsx. */
  bundled?: boolean;
  env?: NodeJS.ProcessEnv;
  nodeArgs?: string[];
}

export interface PeerStack {
  cp: ControlPlane;
  bao: OpenBaoServer;
  /** OpenBao's file audit device: one JSON line per request and per response. */
  auditLog: string;
  /** Child processes of the stack (ESO, vaultgate): logs in `<dir>/logs/`. */
  group: ProcessGroup;
  /** Root-token Vault call (seeding data; never given to a controller for ExternalSecrets). */
  vault(method: string, path: string, body?: unknown): Promise<VaultResponse>;
  startEso(opts?: Omit<EsoControllerOptions, 'kubeconfigPath'>): Promise<EsoController>;
  startVaultgate(opts?: VaultgateControllerOptions): Promise<VaultgateController>;
  /**
   * `vaultgate webhook` as the chart runs it (audit trail on, signing key from `vaultgate audit keygen`,
   * records on stdout into its log), serving certificate from the control plane's webhook CA; waits for /readyz.
   */
  startVaultgateWebhook(opts?: VaultgateWebhookOptions): Promise<{ proc: ManagedProcess; url: string }>;
  /** SIGTERM one process and wait for it. */
  stopProcess(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** The ServiceAccount OpenBao's kubernetes auth reviews tokens with (system:auth-delegator). */
const REVIEWER = { namespace: 'kube-system', name: 'peer-token-reviewer' };

export async function startPeerStack(opts: PeerStackOptions = {}): Promise<PeerStack> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const t = performance.now();
  const cp = await startControlPlane({ controllerManager: opts.controllerManager ?? false, log });
  // Own dir: the control plane's stop() removes its dir, which would stop this group's reaper.
  const group = new ProcessGroup(mkdtempSync(join(tmpdir(), 'vaultgate-peer-')));
  let bao: OpenBaoServer | undefined;
  try {
    await installEsoCrds(cp, group.dir);
    await cp.installCRDs(join(REPO_ROOT, 'charts/vaultgate/crds'));
    await cp.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vaultgate-system' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: REVIEWER },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: REVIEWER.name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
        subjects: [{ kind: 'ServiceAccount', ...REVIEWER }],
      },
    ]);
    const auditLog = join(group.dir, 'openbao-audit.log');
    bao = await startOpenBao({ dev: true, dir: join(group.dir, 'openbao'), auditLog });
    const endpoint = { addr: bao.addr, token: bao.rootToken };
    const reviewerJwt = await cp.serviceAccountToken(REVIEWER.namespace, REVIEWER.name, undefined, 24 * 3600);
    await configureKubernetesAuth(endpoint, { host: cp.server, caPem: cp.caPem, reviewerJwt });
    log(
      `[peer] control plane, ESO's CRDs and ${bao.version.split(' (')[0]} (file audit device, kubernetes auth) up in ${((performance.now() - t) / 1000).toFixed(1)}s`,
    );

    let bundlePath: string | undefined;
    const ensureBundle = async (): Promise<string> => {
      if (!bundlePath) {
        const out = join(group.dir, 'dist', 'vaultgate.mjs');
        await bundle(CLI_ENTRY, out);
        bundlePath = out;
      }
      return bundlePath;
    };
    const server = bao;
    const stack: PeerStack = {
      cp,
      bao: server,
      auditLog,
      group,
      vault: (method, path, body) => vaultRequest(endpoint, method, path, body),
      startEso: (o = {}) => startEsoController(group, { ...o, kubeconfigPath: cp.kubeconfigPath }),
      async startVaultgate(o = {}) {
        const name = o.name ?? 'vaultgate';
        const port = await freePort();
        const args = [
          'controller',
          '--kubeconfig',
          cp.kubeconfigPath,
          '--vault-addr',
          server.addr,
          '--metrics-port',
          String(port),
          ...(o.leaderElect ? ['--leader-election-namespace', 'vaultgate-system'] : ['--no-leader-elect']),
          ...(o.controllerClass ? ['--controller-class', o.controllerClass] : []),
          ...(o.extraArgs ?? []),
        ];
        const argv = o.bundled ? [await ensureBundle(), ...args] : vaultgateArgv(args);
        // The controller's own identity (VaultPolicy/VaultRoleBinding writes); stores use their own.
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
          ...o.env,
          VAULT_TOKEN: server.rootToken,
          POD_NAME: name,
        };
        delete env.KUBECONFIG;
        delete env.VAULT_ADDR;
        const proc = group.spawn(name, process.execPath, [...(o.nodeArgs ?? []), ...argv], env);
        const metricsUrl = `http://127.0.0.1:${port}`;
        await waitFor(
          async () =>
            (await fetch(`${metricsUrl}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200
              ? true
              : undefined,
          {
            what: `vaultgate controller ${name} /readyz`,
            timeoutMs: 120_000,
            intervalMs: 150,
            abort: proc.exited.then((why) => `vaultgate controller ${name} exited (${why}):\n${group.logTail(name)}`),
          },
        );
        return { name, proc, metricsUrl, args };
      },
      async startVaultgateWebhook(o = {}) {
        const name = 'vaultgate-webhook';
        const cert = await cp.issueServingCert(['127.0.0.1', 'localhost']);
        const dir = join(group.dir, name);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'tls.crt'), cert.certPem);
        writeFileSync(join(dir, 'tls.key'), cert.keyPem, { mode: 0o600 });
        await runVaultgate(['audit', 'keygen', '--out', dir]);
        const port = await freePort();
        const args = [
          'webhook',
          '--host',
          '127.0.0.1',
          '--port',
          String(port),
          '--metrics-port',
          '0',
          '--tls-cert-file',
          join(dir, 'tls.crt'),
          '--tls-key-file',
          join(dir, 'tls.key'),
          '--kubeconfig',
          cp.kubeconfigPath,
          '--audit-key-file',
          join(dir, 'audit-signing-key.pem'),
          '--allowed-vault-server',
          server.addr,
          ...(o.controllerClass ? ['--controller-class', o.controllerClass] : []),
        ];
        const argv = o.bundled ? [await ensureBundle(), ...args] : vaultgateArgv(args);
        const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn', ...o.env };
        delete env.KUBECONFIG;
        delete env.VAULT_ADDR;
        delete env.VAULT_TOKEN;
        const proc = group.spawn(name, process.execPath, [...(o.nodeArgs ?? []), ...argv], env);
        const url = `https://127.0.0.1:${port}`;
        await waitFor(
          async () => ((await httpsStatus(`${url}/readyz`, cert.caPem).catch(() => 0)) === 200 ? true : undefined),
          {
            what: 'vaultgate webhook /readyz',
            timeoutMs: 120_000,
            intervalMs: 150,
            abort: proc.exited.then((why) => `vaultgate webhook exited (${why}):\n${group.logTail(name)}`),
          },
        );
        return { proc, url };
      },
      stopProcess: (name) => group.stop(name, 15_000),
      async stop() {
        await group.stopAll();
        await server.stop();
        await cp.stop();
      },
    };
    return stack;
  } catch (err) {
    await group.stopAll();
    await bao?.stop();
    await cp.stop();
    throw err;
  }
}
