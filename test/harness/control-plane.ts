// owner: B
// A real, throwaway Kubernetes control plane (etcd + kube-apiserver [+ kube-controller-manager]) and
// optionally an OpenBao/Vault dev server, all on 127.0.0.1 with random ports and one temp dir.
// One per test file, reused by its tests; `stop()` in after(). Binaries: test/upstream/README.md.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { baoAvailable, binaryPath, missingBinaries } from '../upstream/paths.ts';
import { type ControllerManagerOptions, startControllerManager } from './controller-manager.ts';
import { startEtcd } from './etcd.ts';
import { harnessFetch } from './fetch.ts';
import {
  type ApiserverFiles,
  type ApiserverOptions,
  SERVICE_CLUSTER_IP_RANGE,
  startApiserverProcess,
  waitApiserverReady,
} from './kube-apiserver.ts';
import { type KubeCredentials, type KubeResponse, kubeRequest, statusMessage } from './kube-http.ts';
import { kubeconfigYaml } from './kubeconfig.ts';
import { type CertAndKey, type CertificateAuthority, createCA, createServiceAccountSigningKey } from './pki.ts';
import { freePort } from './ports.ts';
import { type ManagedProcess, ProcessGroup } from './processes.ts';
import { CommandError, runTool, type RunOptions } from './tools.ts';
import { type OpenBaoServer, startOpenBao } from './openbao.ts';
import { configureKubernetesAuth, runBaoCli, type VaultEndpoint } from './vault.ts';
import { waitFor } from './wait.ts';
import { defaultWebhookConfig, pointWebhooksAt, PROBE_LABEL, probeConfig, type WebhookConfigKind } from './webhooks.ts';

export interface ControlPlaneOptions {
  /** Garbage collector, namespace and serviceaccount controllers (real ownerReference cascades), or the given ones. */
  controllerManager?: boolean | Pick<ControllerManagerOptions, 'controllers'>;
  /** Opt-in apiserver settings for a cluster with pods (test/harness/node/); default: envtest's, on 127.0.0.1. */
  apiserver?: ApiserverOptions;
  /** `bao server -dev` with kubernetes auth at `kubernetes/` configured against this apiserver. */
  vault?: boolean;
  log?: (line: string) => void;
}

export interface RegisterWebhooksOptions {
  /** Base URL of the webhook server under test, e.g. https://127.0.0.1:40123 */
  url: string;
  caBundlePem: string;
  /** Configurations to install (e.g. from `helm template`); each webhook's service path is appended to `url`. */
  mutatingYaml?: string;
  validatingYaml?: string;
  /** Paths for the built-in configurations used when no YAML is given. */
  mutatePath?: string;
  validatePath?: string;
}

export interface ServingCert extends CertAndKey {
  caPem: string;
}

/** ServiceAccount bound to system:auth-delegator whose token Vault uses for TokenReview. */
export const TOKEN_REVIEWER = { namespace: 'kube-system', name: 'vaultgate-harness-token-reviewer' };

const seconds = (startMs: number): number => Math.round(performance.now() - startMs) / 1000;

export class ControlPlane {
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly caPem: string;
  readonly admin: KubeCredentials;
  /** Seconds per start-up step, as printed. */
  readonly timings: Record<string, number> = {};
  vaultAddr: string | undefined;
  vaultToken: string | undefined;
  /** The OpenBao dev server (startControlPlane({ vault: true })): seal()/unseal(), version, log. */
  openbao: OpenBaoServer | undefined;

  readonly #group: ProcessGroup;
  readonly #apiserverFiles: ApiserverFiles;
  readonly #apiserverOptions: ApiserverOptions;
  readonly #etcdUrl: string;
  readonly #port: number;
  readonly #log: (line: string) => void;
  #apiserver: ManagedProcess;
  #vaultPort: number | undefined;
  #vaultHost: string | undefined;
  #webhookCA: Promise<CertificateAuthority> | undefined;
  #stopped = false;

  /** @internal use startControlPlane() */
  constructor(init: {
    group: ProcessGroup;
    port: number;
    etcdUrl: string;
    files: ApiserverFiles;
    apiserverOptions?: ApiserverOptions;
    apiserver: ManagedProcess;
    admin: KubeCredentials;
    kubeconfigPath: string;
    log: (line: string) => void;
  }) {
    this.#group = init.group;
    this.#port = init.port;
    this.#etcdUrl = init.etcdUrl;
    this.#apiserverFiles = init.files;
    this.#apiserverOptions = init.apiserverOptions ?? {};
    this.#apiserver = init.apiserver;
    this.admin = init.admin;
    this.server = init.admin.server;
    this.caPem = init.admin.caPem;
    this.kubeconfigPath = init.kubeconfigPath;
    this.#log = init.log;
  }

  /** The control plane's temp dir (logs/ holds each server's log). */
  get dir(): string {
    return this.#group.dir;
  }

  /** Environment for CLI tools: our kubeconfig, and a private HOME/XDG dirs for their caches. */
  toolEnv(): NodeJS.ProcessEnv {
    const home = join(this.#group.dir, 'home');
    return {
      ...process.env,
      KUBECONFIG: this.kubeconfigPath,
      HOME: home,
      XDG_CACHE_HOME: join(home, '.cache'),
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local/share'),
    };
  }

  kubectl(args: string[], opts: RunOptions = {}): Promise<string> {
    return runTool(binaryPath('kubectl'), args, { ...opts, env: { ...this.toolEnv(), ...opts.env } });
  }

  helm(args: string[], opts: RunOptions = {}): Promise<string> {
    return runTool(binaryPath('helm'), args, { ...opts, env: { ...this.toolEnv(), ...opts.env } });
  }

  /** The bao CLI against the dev server (address and token via the environment, never argv). */
  async bao(args: string[], opts: { stdin?: string } = {}): Promise<string> {
    const res = await runBaoCli(binaryPath('bao'), this.#vaultEndpoint(), args, {
      stdin: opts.stdin,
      home: join(this.#group.dir, 'home'),
    });
    if (res.code !== 0) throw new CommandError(`bao ${args.join(' ')}`, res.code, res.stdout, res.stderr);
    return res.stdout;
  }

  /** Raw apiserver request as the admin user (system:masters). */
  request(method: string, path: string, body?: unknown): Promise<KubeResponse> {
    return kubeRequest(this.admin, method, path, body);
  }

  /** Server-side apply of objects or (multi-document) YAML; returns kubectl's output. */
  apply(manifests: string | object | object[]): Promise<string> {
    const yaml =
      typeof manifests === 'string'
        ? manifests
        : (Array.isArray(manifests) ? manifests : [manifests]).map((o) => stringify(o)).join('---\n');
    return this.kubectl(
      ['apply', '--server-side', '--force-conflicts', '--field-manager=vaultgate-harness', '-f', '-'],
      { stdin: yaml },
    );
  }

  /** Applies every CRD manifest in `dir` and waits until each is Established; returns their names. */
  async installCRDs(dir: string): Promise<string[]> {
    const out = await this.kubectl([
      'apply',
      '--server-side',
      '--force-conflicts',
      '--field-manager=vaultgate-harness',
      '-f',
      dir,
      '-o',
      'name',
    ]);
    const names = out.split('\n').filter((l) => l.startsWith('customresourcedefinition'));
    if (names.length === 0) throw new Error(`no CustomResourceDefinitions found in ${dir}`);
    await this.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...names]);
    return names.map((n) => n.replace(/^[^/]+\//, ''));
  }

  /** A serving certificate for a test webhook server, from a per-control-plane webhook CA. */
  async issueServingCert(hosts: string[] = ['127.0.0.1', 'localhost']): Promise<ServingCert> {
    this.#webhookCA ??= createCA('vaultgate-test-webhook-ca');
    const ca = await this.#webhookCA;
    const isIp = (h: string): boolean => /^[\d.]+$/.test(h) || h.includes(':');
    const leaf = await ca.issue({
      commonName: hosts[0] ?? 'webhook',
      dnsNames: hosts.filter((h) => !isIp(h)),
      ipAddresses: hosts.filter(isIp),
      usage: 'server',
    });
    return { ...leaf, caPem: ca.certPem };
  }

  /**
   * Creates Mutating/ValidatingWebhookConfigurations that send our kinds to `url` (built-in
   * configurations unless YAML is given) and waits until the apiserver's admission plugin uses them.
   * Returns `Kind/name` of each configuration.
   */
  async registerWebhooks(opts: RegisterWebhooksOptions): Promise<string[]> {
    const started = performance.now();
    let configs: Array<Record<string, unknown>>;
    if (opts.mutatingYaml !== undefined || opts.validatingYaml !== undefined) {
      configs = [opts.mutatingYaml, opts.validatingYaml]
        .filter((y) => y !== undefined)
        .flatMap((y) => pointWebhooksAt(y, opts.url, opts.caBundlePem));
    } else {
      configs = [
        defaultWebhookConfig(
          'MutatingWebhookConfiguration',
          'vaultgate-test',
          new URL(opts.mutatePath ?? '/mutate', opts.url).toString(),
          opts.caBundlePem,
        ),
        defaultWebhookConfig(
          'ValidatingWebhookConfiguration',
          'vaultgate-test',
          new URL(opts.validatePath ?? '/validate', opts.url).toString(),
          opts.caBundlePem,
        ),
      ];
    }
    if (configs.length === 0) throw new Error('registerWebhooks: no webhook configurations in the given YAML');
    await this.apply(configs);
    await this.#waitWebhooksEffective();
    this.#log(`[harness] webhooks registered and in effect in ${seconds(started)}s`);
    return configs.map((c) => `${String(c.kind)}/${String((c.metadata as { name?: string }).name)}`);
  }

  async #waitWebhooksEffective(): Promise<void> {
    const kinds: WebhookConfigKind[] = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];
    // One kind at a time: a failing mutating probe would hide the validating one.
    for (const kind of kinds) {
      const token = randomBytes(6).toString('hex');
      const name = `vaultgate-harness-probe-${token}`;
      const plural =
        kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
      const base = `/apis/admissionregistration.k8s.io/v1/${plural}`;
      await this.#must('POST', base, probeConfig(kind, name, token, this.caPem));
      try {
        await waitFor(
          async () => {
            const res = await this.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { generateName: 'probe-', labels: { [PROBE_LABEL]: token } },
            });
            return res.status >= 400 && res.text.includes('probe.harness.vaultgate.io') ? true : undefined;
          },
          { what: `${kind} in effect`, timeoutMs: 30_000, intervalMs: 100 },
        );
      } finally {
        await kubeRequest(this.admin, 'DELETE', `${base}/${name}`);
      }
    }
  }

  /** A TokenRequest token (JWT) for an existing ServiceAccount. Never log it. */
  async serviceAccountToken(
    namespace: string,
    serviceAccount: string,
    audiences?: string[],
    expirationSeconds = 3600,
  ): Promise<string> {
    const res = await this.#must<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences, expirationSeconds } },
    );
    return res.status.token;
  }

  /** Graceful apiserver restart on the same port and etcd (state survives), waits for /readyz. */
  async restartApiserver(): Promise<void> {
    const started = performance.now();
    await this.#group.stop('kube-apiserver', 15_000);
    this.#apiserver = startApiserverProcess(
      this.#group,
      this.#port,
      this.#etcdUrl,
      this.#apiserverFiles,
      this.#apiserverOptions,
    );
    await waitApiserverReady(this.#group, this.#apiserver, this.admin);
    this.#log(`[harness] kube-apiserver restarted in ${seconds(started)}s`);
  }

  /**
   * Compacts etcd at its current revision (etcd's JSON gateway), then restarts the apiserver so its
   * watch cache starts over at the current RV: watches from older RVs get 410 "too old resource version"
   * and exact-RV reads of compacted revisions fail, as in a long-running cluster.
   */
  async compact(): Promise<void> {
    const post = async (path: string, body: unknown): Promise<unknown> => {
      const res = await harnessFetch(`etcd ${path}`, `${this.#etcdUrl}${path}`, {
        method: 'POST',
        body: JSON.stringify(body),
        timeoutMs: 30_000,
      });
      if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const range = (await post('/v3/kv/range', { key: Buffer.from('/').toString('base64') })) as {
      header?: { revision?: string };
    };
    const revision = range.header?.revision;
    if (!revision) throw new Error('etcd /v3/kv/range: no header.revision');
    await post('/v3/kv/compaction', { revision, physical: true });
    await this.restartApiserver();
  }

  /**
   * Starts bao dev (again) and configures kubernetes auth. A restarted dev server starts EMPTY.
   * `host`: listen there instead of 127.0.0.1 (pods of the one-node cluster reach it on the node IP).
   */
  async startVault(opts: { host?: string } = {}): Promise<void> {
    if (!baoAvailable())
      throw new Error(
        `no bao binary at ${binaryPath('bao')} (npm run upstream installs OpenBao 2.7.2; VAULTGATE_BAO_BIN overrides it)`,
      );
    const started = performance.now();
    this.#vaultPort ??= await freePort();
    this.#vaultHost = opts.host ?? this.#vaultHost;
    this.openbao = await startOpenBao({
      dev: true,
      dir: join(this.#group.dir, 'openbao'),
      port: this.#vaultPort,
      ...(this.#vaultHost ? { host: this.#vaultHost } : {}),
    });
    const endpoint = { addr: this.openbao.addr, token: this.openbao.rootToken };
    this.vaultAddr = endpoint.addr;
    this.vaultToken = endpoint.token;
    await this.#ensureTokenReviewer();
    const reviewerJwt = await this.serviceAccountToken(
      TOKEN_REVIEWER.namespace,
      TOKEN_REVIEWER.name,
      undefined,
      24 * 3600,
    );
    await configureKubernetesAuth(endpoint, { host: this.server, caPem: this.caPem, reviewerJwt });
    this.timings.vault = seconds(started);
    this.#log(
      `[harness] ${this.openbao.version.split(' (')[0]} dev server up at ${endpoint.addr} with kubernetes auth in ${this.timings.vault}s`,
    );
  }

  async stopVault(): Promise<void> {
    await this.openbao?.stop();
  }

  #vaultEndpoint(): VaultEndpoint {
    if (!this.vaultAddr || !this.vaultToken)
      throw new Error('vault is not started (startControlPlane({ vault: true }))');
    return { addr: this.vaultAddr, token: this.vaultToken };
  }

  async #ensureTokenReviewer(): Promise<void> {
    const createIgnoringConflict = async (path: string, body: unknown): Promise<void> => {
      const res = await this.request('POST', path, body);
      if (res.status !== 409 && (res.status < 200 || res.status > 299))
        throw new Error(`POST ${path}: ${res.status} ${statusMessage(res)}`);
    };
    const { namespace, name } = TOKEN_REVIEWER;
    await createIgnoringConflict(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name },
    });
    await createIgnoringConflict('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    });
  }

  /** A 2xx answer's body, or an error with the apiserver's Status message. */
  async #must<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.request(method, path, body);
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${statusMessage(res)}`);
    return res.body as T;
  }

  /** Kills every process (process groups) and removes the temp dir. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    const started = performance.now();
    await this.openbao?.stop();
    await this.#group.stopAll();
    this.#log(`[harness] control plane stopped in ${seconds(started)}s`);
  }
}

/** First address of a service range: the `kubernetes` Service's ClusterIP (in the serving certificate). */
function firstServiceIp(cidr: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = (cidr.split('/')[0] ?? '').split('.').map(Number);
  return `${a}.${b}.${c}.${d + 1}`;
}

async function writePki(
  dir: string,
  o: ApiserverOptions = {},
): Promise<{ files: ApiserverFiles; admin: Omit<KubeCredentials, 'server'> }> {
  const pki = join(dir, 'pki');
  mkdirSync(pki, { recursive: true });
  const ca = await createCA('vaultgate-test-ca');
  const serving = await ca.issue({
    commonName: 'kube-apiserver',
    dnsNames: [
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ],
    ipAddresses: [
      ...new Set([
        '127.0.0.1',
        '10.0.0.1',
        firstServiceIp(o.serviceClusterIpRange ?? SERVICE_CLUSTER_IP_RANGE),
        o.bindAddress ?? '127.0.0.1',
      ]),
    ],
    usage: 'server',
  });
  // Client-certificate user in system:masters, as envtest's admin user.
  const admin = await ca.issue({
    commonName: 'vaultgate-test-admin',
    organizations: ['system:masters'],
    usage: 'client',
  });
  const sa = createServiceAccountSigningKey();
  const file = (name: string, content: string): string => {
    const p = join(pki, name);
    writeFileSync(p, content, { mode: 0o600 });
    return p;
  };
  return {
    files: {
      certDir: pki,
      clientCaFile: file('ca.crt', ca.certPem),
      servingCertFile: file('apiserver.crt', serving.certPem),
      servingKeyFile: file('apiserver.key', serving.keyPem),
      saPublicKeyFile: file('sa.pub', sa.publicKeyPem),
      saSigningKeyFile: file('sa.key', sa.privateKeyPem),
    },
    admin: { caPem: ca.certPem, certPem: admin.certPem, keyPem: admin.keyPem },
  };
}

/**
 * Starts etcd + kube-apiserver (+ kube-controller-manager, + bao dev) and returns the handle.
 * The binaries must exist (realTier() builds or skips); start-up and teardown times are printed.
 */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const missing = missingBinaries();
  if (missing.length > 0)
    throw new Error(`upstream binaries missing: ${missing.join(', ')} (run \`npm run upstream\`)`);
  const started = performance.now();
  const group = new ProcessGroup(mkdtempSync(join(tmpdir(), 'vaultgate-cp-')));
  const timings: Record<string, number> = {};
  try {
    const [etcdClient, etcdPeer, port] = [await freePort(), await freePort(), await freePort()];
    let t = performance.now();
    const pkiPromise = writePki(group.dir, opts.apiserver);
    const etcd = await startEtcd(group, etcdClient, etcdPeer);
    timings.etcd = seconds(t);
    const { files, admin: adminCert } = await pkiPromise;
    t = performance.now();
    const admin: KubeCredentials = {
      server: `https://${opts.apiserver?.bindAddress ?? '127.0.0.1'}:${port}`,
      ...adminCert,
    };
    const apiserver = startApiserverProcess(group, port, etcd.clientUrl, files, opts.apiserver);
    await waitApiserverReady(group, apiserver, admin);
    timings['kube-apiserver'] = seconds(t);
    const kubeconfigPath = join(group.dir, 'kubeconfig');
    writeFileSync(
      kubeconfigPath,
      kubeconfigYaml(admin.server, admin.caPem, { name: 'vaultgate-test-admin', ...adminCert }),
      { mode: 0o600 },
    );
    mkdirSync(join(group.dir, 'home'), { recursive: true });
    const cp = new ControlPlane({
      group,
      port,
      etcdUrl: etcd.clientUrl,
      files,
      apiserverOptions: opts.apiserver ?? {},
      apiserver,
      admin,
      kubeconfigPath,
      log,
    });
    if (opts.controllerManager) {
      t = performance.now();
      const controllers = typeof opts.controllerManager === 'object' ? opts.controllerManager.controllers : undefined;
      // Pods mount the cluster CA from ConfigMap kube-root-ca.crt, which the publisher needs --root-ca-file for.
      const kcm = startControllerManager(group, kubeconfigPath, {
        ...(controllers ? { controllers, rootCaFile: files.clientCaFile } : {}),
      });
      // Ready signal: the serviceaccount controller has created `default` in the default namespace.
      await waitFor(
        async () =>
          (await cp.request('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200
            ? true
            : undefined,
        {
          what: 'kube-controller-manager (default ServiceAccount)',
          timeoutMs: 60_000,
          intervalMs: 200,
          abort: kcm.exited.then(
            (why) => `kube-controller-manager exited (${why}):\n${group.logTail('kube-controller-manager')}`,
          ),
        },
      );
      timings['kube-controller-manager'] = seconds(t);
    }
    Object.assign(cp.timings, timings);
    if (opts.vault) await cp.startVault();
    cp.timings.total = seconds(started);
    log(
      `[harness] control plane up at ${cp.server} in ${cp.timings.total}s (${Object.entries(cp.timings)
        .filter(([k]) => k !== 'total')
        .map(([k, v]) => `${k} ${v}s`)
        .join(', ')})`,
    );
    return cp;
  } catch (err) {
    await group.stopAll();
    throw err;
  }
}
