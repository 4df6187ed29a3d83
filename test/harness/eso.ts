// The real External Secrets Operator controller (v0.16.2, built by `npm run upstream` from its Go module)
// as a child process against a harness control plane, with ESO's own CRDs from the same module. It
// serves one controller class (`--controller-class`), so it and vaultgate never act on the same object:
// each only reconciles ExternalSecrets whose store names its class (ESO's and vaultgate's rule alike).
// Readiness is the ExternalSecret controller's "Starting workers" log line (ESO has no readiness endpoint).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { esoCrdsYaml, requireEso } from '../upstream/eso.ts';
import type { ControlPlane } from './control-plane.ts';
import { freePort } from './ports.ts';
import type { ManagedProcess, ProcessGroup } from './processes.ts';
import { waitFor } from './wait.ts';

/** Installs ESO's CRDs (ExternalSecret, SecretStore, ClusterSecretStore, PushSecret, generators ...); returns their names. */
export async function installEsoCrds(cp: ControlPlane, scratchDir: string): Promise<string[]> {
  const dir = join(scratchDir, 'eso-crds');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'bundle.yaml'), esoCrdsYaml());
  return cp.installCRDs(dir);
}

export interface EsoControllerOptions {
  /** Process name in the group (default `eso`). */
  name?: string;
  kubeconfigPath: string;
  /** `--controller-class` (ESO's default is `default`). */
  controllerClass?: string;
  /** `--concurrent` (ESO's default 1). */
  concurrent?: number;
  /** `--client-qps` / `--client-burst` (ESO's defaults 50 / 100). */
  clientQps?: number;
  clientBurst?: number;
  /** `--experimental-enable-vault-token-cache` (off by default in ESO). */
  vaultTokenCache?: boolean;
  /** `--loglevel` (ESO's default `info`; the readiness check needs info). */
  logLevel?: string;
  extraArgs?: string[];
}

export interface EsoController {
  name: string;
  proc: ManagedProcess;
  /** http://127.0.0.1:<port>/metrics */
  metricsUrl: string;
  /** The flags it was started with (for reports). */
  args: string[];
}

/** ESO's controller flags for `opts` (its defaults where unset, so "ESO default" is ESO as shipped). */
export function esoControllerArgs(opts: EsoControllerOptions, metricsPort: number): string[] {
  return [
    `--metrics-addr=127.0.0.1:${metricsPort}`,
    `--loglevel=${opts.logLevel ?? 'info'}`,
    ...(opts.controllerClass ? [`--controller-class=${opts.controllerClass}`] : []),
    ...(opts.concurrent !== undefined ? [`--concurrent=${opts.concurrent}`] : []),
    ...(opts.clientQps !== undefined ? [`--client-qps=${opts.clientQps}`] : []),
    ...(opts.clientBurst !== undefined ? [`--client-burst=${opts.clientBurst}`] : []),
    ...(opts.vaultTokenCache ? ['--experimental-enable-vault-token-cache'] : []),
    ...(opts.extraArgs ?? []),
  ];
}

/** Starts `eso` (the controller) and waits until its ExternalSecret workers run. */
export async function startEsoController(group: ProcessGroup, opts: EsoControllerOptions): Promise<EsoController> {
  const bin = requireEso();
  const name = opts.name ?? 'eso';
  const port = await freePort();
  const args = esoControllerArgs(opts, port);
  const proc = group.spawn(name, bin, args, { ...process.env, KUBECONFIG: opts.kubeconfigPath });
  const metricsUrl = `http://127.0.0.1:${port}/metrics`;
  const started = /"msg":"Starting workers","controller":"externalsecret"/;
  await waitFor(() => Promise.resolve(started.test(readFileSync(proc.logPath, 'utf8')) ? true : undefined), {
    what: `ESO controller ${name}: ExternalSecret workers started`,
    timeoutMs: 120_000,
    intervalMs: 200,
    abort: proc.exited.then((why) => `ESO exited (${why}):\n${group.logTail(name)}`),
  });
  return { name, proc, metricsUrl, args };
}

export interface EsoWebhook {
  proc: ManagedProcess;
  /** https://localhost:<port> (its certificate is for localhost and 127.0.0.1). */
  url: string;
  /** The CA of its serving certificate (a webhook configuration's caBundle). */
  caPem: string;
}

/**
 * Starts `eso webhook` against `cp` with a serving certificate from the control plane's webhook CA (ESO
 * checks its own certificate files: tls.crt, tls.key, ca.crt, valid for --dns-name) and waits for /readyz.
 * ESO's CRDs must be installed. Its paths are /validate-external-secrets-io-v1-<kind>. `extraArgs` go last.
 */
export async function startEsoWebhook(
  group: ProcessGroup,
  cp: ControlPlane,
  extraArgs: string[] = [],
): Promise<EsoWebhook> {
  const bin = requireEso();
  const cert = await cp.issueServingCert(['localhost', '127.0.0.1']);
  const certDir = join(group.dir, 'eso-webhook-certs');
  mkdirSync(certDir, { recursive: true });
  writeFileSync(join(certDir, 'tls.crt'), cert.certPem);
  writeFileSync(join(certDir, 'tls.key'), cert.keyPem, { mode: 0o600 });
  writeFileSync(join(certDir, 'ca.crt'), cert.caPem);
  const [port, metrics, health] = [await freePort(), await freePort(), await freePort()];
  const proc = group.spawn(
    'eso-webhook',
    bin,
    [
      'webhook',
      `--port=${port}`,
      `--cert-dir=${certDir}`,
      '--dns-name=localhost',
      `--metrics-addr=127.0.0.1:${metrics}`,
      `--healthz-addr=127.0.0.1:${health}`,
      '--loglevel=error',
      ...extraArgs,
    ],
    { ...process.env, KUBECONFIG: cp.kubeconfigPath },
  );
  await waitFor(async () => ((await fetch(`http://127.0.0.1:${health}/readyz`)).ok ? true : undefined), {
    what: 'ESO webhook ready',
    timeoutMs: 60_000,
    abort: proc.exited.then((c) => `eso webhook exited (${c}):\n${group.logTail('eso-webhook')}`),
  });
  return { proc, url: `https://localhost:${port}`, caPem: cert.caPem };
}
