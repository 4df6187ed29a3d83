// One end-to-end stack per test file: real control plane (+ kube-controller-manager), vaultgate's CRDs,
// a real OpenBao 2.7.2 set up as a user would (kubernetes auth with a token-reviewer ServiceAccount and
// the apiserver CA, KV v2 at secret/; the simulator only when asked for), `vaultgate webhook` registered
// with the apiserver, and `vaultgate controller` processes logging in to Vault with their own identity:
// the chart's bootstrap policy through kubernetes auth, never the root token. Times are printed.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type ControlPlane, type ControlPlaneOptions, startControlPlane } from './control-plane.ts';
import {
  type ControllerHandle,
  type ControllerOptions,
  REPO_ROOT,
  VaultgateProcesses,
  type WebhookHandle,
} from './e2e-processes.ts';
import { stepFailed } from './errors.ts';
import {
  CONTROLLER_IDENTITY,
  type E2EVault,
  grantControllerIdentity,
  startE2EVault,
  vaultCall,
  type VaultKind,
} from './e2e-vault.ts';
import { waitFor } from './wait.ts';
import type { Condition } from '../../kube/objects.ts';

export const CRD_DIR = process.env.VAULTGATE_CRD_DIR ?? join(REPO_ROOT, 'charts/vaultgate/crds');
/** The ESO-group CRDs the chart installs from a template (eso.installCRDs), not from crds/. */
export const ESO_CRD_DIR = join(REPO_ROOT, 'charts/vaultgate/files/eso-crds');

/** vaultgate's CRDs plus the ESO-group ones, wherever the chart keeps them. */
export async function installAllCRDs(cp: ControlPlane): Promise<string[]> {
  const names = await cp.installCRDs(CRD_DIR);
  const eso = ['secretstores', 'clustersecretstores', 'externalsecrets'].map((p) => `${p}.external-secrets.io`);
  if (eso.every((n) => names.includes(n)) || !existsSync(ESO_CRD_DIR)) return names;
  return [...names, ...(await cp.installCRDs(ESO_CRD_DIR))];
}

export interface E2EOptions {
  /** Run on this control plane (e.g. a one-node cluster's) instead of starting one; stop() leaves it running. */
  controlPlane?: ControlPlane;
  /** kube-controller-manager: off, on with its default controllers, or with these. */
  controllerManager?: ControlPlaneOptions['controllerManager'];
  /** Install vaultgate's and the ESO-group CRDs from the chart's files (default true; false when Helm installs them). */
  crds?: boolean;
  /** Start the webhook and register it (default true). */
  webhook?: boolean;
  /** Start one controller (default true) with these options. */
  controller?: false | StackControllerOptions;
  /** Real OpenBao (default) or, only where asked for, the simulator. */
  vault?: VaultKind;
  /** OpenBao with raft storage that survives `stack.vault.restart()` (default: a dev server). */
  persistentVault?: boolean;
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
}

/** Controller options the stack fills in itself: the Vault address and the controller's own identity. */
export type StackControllerOptions = Omit<ControllerOptions, 'vaultAddr' | 'vaultToken' | 'vaultRole'>;

export interface E2EStack {
  cp: ControlPlane;
  vault: E2EVault;
  procs: VaultgateProcesses;
  webhook: WebhookHandle | undefined;
  controller: ControllerHandle | undefined;
  /** A controller logging in as the bootstrap role (kubernetes auth, its ServiceAccount's token file). */
  startController(opts?: StackControllerOptions): Promise<ControllerHandle>;
  /** Root-token Vault call (tests seed data and read back what the controller wrote). */
  vaultRoot(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** kubectl apply of objects/YAML as a user would (client-side apply, the webhook sees it). */
  kubectlApply(manifests: string | object | object[]): Promise<string>;
  /** `kubectl get <kind> <name> -n <ns> -o json`, or undefined when NotFound. */
  getJson<T = Record<string, unknown>>(kind: string, name: string, namespace?: string): Promise<T | undefined>;
  /** Log tails of every vaultgate process, for failure messages. */
  diagnostics(): string;
  stop(): Promise<void>;
}

const stderrLog = (line: string): void => {
  process.stderr.write(`${line}\n`);
};
const seconds = (t: number): string => ((performance.now() - t) / 1000).toFixed(2);

/** API paths of the kinds the scenarios read (polling through the API is cheaper than a kubectl per poll). */
const RESOURCES: Record<string, { prefix: string; plural: string; namespaced: boolean }> = {
  vaultpolicy: { prefix: '/apis/vaultgate.io/v1alpha1', plural: 'vaultpolicies', namespaced: true },
  vaultrolebinding: { prefix: '/apis/vaultgate.io/v1alpha1', plural: 'vaultrolebindings', namespaced: true },
  vaultguardrail: { prefix: '/apis/vaultgate.io/v1alpha1', plural: 'vaultguardrails', namespaced: false },
  secretstore: { prefix: '/apis/external-secrets.io/v1', plural: 'secretstores', namespaced: true },
  clustersecretstore: { prefix: '/apis/external-secrets.io/v1', plural: 'clustersecretstores', namespaced: false },
  externalsecret: { prefix: '/apis/external-secrets.io/v1', plural: 'externalsecrets', namespaced: true },
  secret: { prefix: '/api/v1', plural: 'secrets', namespaced: true },
  serviceaccount: { prefix: '/api/v1', plural: 'serviceaccounts', namespaced: true },
  lease: { prefix: '/apis/coordination.k8s.io/v1', plural: 'leases', namespaced: true },
  event: { prefix: '/api/v1', plural: 'events', namespaced: true },
};

export function apiPath(kind: string, name: string | undefined, namespace?: string): string {
  const r = RESOURCES[kind.toLowerCase()];
  if (!r) throw new Error(`apiPath: unknown kind ${kind}`);
  const ns = r.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
  return `${r.prefix}${ns}/${r.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
}

export function toYaml(manifests: string | object | object[]): string {
  return typeof manifests === 'string'
    ? manifests
    : (Array.isArray(manifests) ? manifests : [manifests]).map((o) => stringify(o)).join('---\n');
}

/** Log tails of the vaultgate processes without the signed audit lines (long, and not what a failure needs). */
function diagnostics(p: VaultgateProcesses): string {
  return ['webhook', 'controller', 'controller-a', 'controller-b']
    .map(
      (n) =>
        [
          n,
          p
            .log(n)
            .split('\n')
            .filter((l) => l && !l.startsWith('{"audit"'))
            .slice(-20)
            .join('\n'),
        ] as const,
    )
    .filter(([, l]) => l)
    .map(([n, l]) => `--- ${n} log (tail)\n${l}`)
    .join('\n');
}

export async function startE2E(opts: E2EOptions = {}): Promise<E2EStack> {
  const log = opts.log ?? stderrLog;
  const t = performance.now();
  const ownsCp = !opts.controlPlane;
  const cp =
    opts.controlPlane ??
    (await startControlPlane({ controllerManager: opts.controllerManager ?? false, log }).catch((err: unknown) => {
      throw stepFailed('e2e stack: starting the control plane', err);
    }));
  let procs: VaultgateProcesses | undefined;
  let vault: E2EVault | undefined;
  let step = 'installing the CRDs';
  try {
    if (opts.crds !== false) await installAllCRDs(cp);
    await cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vaultgate-system' } });
    step = `starting ${opts.vault === 'simulator' ? 'the Vault simulator' : `OpenBao${opts.persistentVault ? ' (raft storage: init and unseal)' : ''}`}`;
    vault = await startE2EVault(cp, {
      kind: opts.vault ?? 'openbao',
      persistent: opts.persistentVault === true,
      dir: join(cp.dir, 'e2e-vault'),
      log,
    });
    procs = new VaultgateProcesses(cp, { log });
    step = "granting the controller's Vault identity";
    const saTokenFile = procs.writeSecretFile('controller-sa-token', await grantControllerIdentity(cp, vault));
    let webhook: WebhookHandle | undefined;
    if (opts.webhook !== false) {
      step = 'starting the vaultgate webhook';
      webhook = await procs.startWebhook();
      await cp.registerWebhooks({ url: webhook.url, caBundlePem: webhook.caPem });
    }
    step = 'starting the vaultgate controller';
    const v = vault;
    const p = procs;
    const startController = (o: StackControllerOptions = {}): Promise<ControllerHandle> =>
      p.startController({
        ...o,
        vaultAddr: v.addr,
        vaultRole: { role: CONTROLLER_IDENTITY.role, mount: CONTROLLER_IDENTITY.mount, saTokenFile },
      });
    const controller = opts.controller === false ? undefined : await startController(opts.controller ?? {});
    log(`[e2e] stack up in ${seconds(t)}s (control plane ${cp.timings.total}s; Vault: ${v.version})`);
    let stopped = false;
    const stack: E2EStack = {
      cp,
      vault: v,
      procs: p,
      webhook,
      controller,
      startController,
      vaultRoot: (method, path, body) => vaultCall(v.addr, v.rootToken, method, path, body),
      kubectlApply: (manifests) => cp.kubectl(['apply', '-f', '-'], { stdin: toYaml(manifests) }),
      async getJson<T>(kind: string, name: string, namespace?: string): Promise<T | undefined> {
        const res = await cp.request('GET', apiPath(kind, name, namespace));
        if (res.status === 404) return undefined;
        if (res.status !== 200)
          throw new Error(`GET ${kind} ${namespace ?? ''}/${name}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
        return res.body as T;
      },
      diagnostics: () =>
        [diagnostics(p), v.logTail() && `--- ${v.version} log (tail)\n${v.logTail()}`].filter(Boolean).join('\n'),
      async stop() {
        if (stopped) return;
        stopped = true;
        const s = performance.now();
        await p.stopAll();
        await v.stop();
        if (ownsCp) await cp.stop();
        log(`[e2e] stack torn down in ${seconds(s)}s`);
      },
    };
    return stack;
  } catch (err) {
    const details = [procs && diagnostics(procs), vault?.logTail() && `--- Vault log (tail)\n${vault.logTail()}`]
      .filter(Boolean)
      .join('\n');
    await procs?.stopAll();
    await vault?.stop();
    if (ownsCp) await cp.stop();
    throw stepFailed(`e2e stack: ${step}`, err, details);
  }
}

/** Waits for a condition on an object read with kubectl; returns the object. */
export async function waitForObject<T extends Record<string, unknown>>(
  stack: E2EStack,
  kind: string,
  name: string,
  namespace: string | undefined,
  check: (obj: T | undefined) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<T | undefined> {
  let last: T | undefined;
  try {
    return await waitFor(
      async () => {
        last = await stack.getJson<T>(kind, name, namespace);
        return check(last) ? { value: last } : undefined;
      },
      { what, timeoutMs, intervalMs: 250 },
    ).then((r) => r.value);
  } catch (err) {
    throw new Error(
      `${(err as Error).message}\nlast seen: ${JSON.stringify(last?.status ?? last ?? null)}\n${stack.diagnostics()}`,
    );
  }
}

export type { Condition };

export function condition(obj: Record<string, unknown> | undefined, type = 'Ready'): Condition | undefined {
  return ((obj?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}
