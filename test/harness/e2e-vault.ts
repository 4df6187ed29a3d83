// The Vault side of the real tier. OpenBao cannot be built here (the Go proxy refuses its module), so
// Vault is the API simulator (test/sim/vault.ts), made as real as the substrate allows: its kubernetes
// auth verifies ServiceAccount JWTs with a real TokenReview against the real kube-apiserver, using a
// reviewer ServiceAccount bound to system:auth-delegator, exactly as Vault's kubernetes auth is set up.
// Clients reach it through a TCP front on a fixed port, so "Vault is down" can be a real refused
// connection and "Vault is back" the same address with its state intact.
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { type ControlPlane, TOKEN_REVIEWER } from './control-plane.ts';
import { VaultSim } from '../sim/vault.ts';
import { type TokenReviewOutcome, tokenReviewVerifier } from './tokenreview-verifier.ts';

export const SIMULATED_VAULT_BANNER =
  'Vault is SIMULATED (test/sim/vault.ts: OpenBao cannot be built from the Go module proxy here); its kubernetes-auth logins are verified by a real TokenReview against the real kube-apiserver';

/** A TCP listener on one port forwarding to the simulator; stop() refuses connections, start() takes the same port again. */
export class TcpFront {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  #port = 0;

  constructor(private readonly targetPort: number) {}

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
        s.on('error', () => { client.destroy(); upstream.destroy(); });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
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
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  ]);
  return cp.serviceAccountToken(namespace, name, undefined, 24 * 3600);
}

export async function startSimulatedVault(cp: ControlPlane, opts: { log?: (line: string) => void } = {}): Promise<SimulatedVault> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const started = performance.now();
  const reviewerJwt = await ensureTokenReviewer(cp);
  const reviews: TokenReviewOutcome[] = [];
  const rootToken = `root-${randomBytes(12).toString('hex')}`;
  const sim = await VaultSim.start({
    rootToken,
    verifier: tokenReviewVerifier({ server: cp.server, caPem: cp.caPem, reviewerJwt, onReview: (o) => reviews.push(o) }),
  });
  const front = new TcpFront(Number(new URL(sim.addr).port));
  await front.start();
  const addr = `http://127.0.0.1:${front.port}`;
  // The same configuration a real Vault gets (auth/kubernetes/config), so reads of it look right.
  const res = await fetch(`${addr}/v1/auth/kubernetes/config`, {
    method: 'POST',
    headers: { 'x-vault-token': rootToken, 'content-type': 'application/json' },
    body: JSON.stringify({ kubernetes_host: cp.server, kubernetes_ca_cert: cp.caPem, token_reviewer_jwt: reviewerJwt }),
  });
  if (res.status !== 204) throw new Error(`configuring kubernetes auth on the simulator: HTTP ${res.status}`);
  log(`[e2e] ${SIMULATED_VAULT_BANNER}`);
  log(`[e2e] simulated Vault at ${addr} in ${((performance.now() - started) / 1000).toFixed(2)}s`);
  return {
    sim, addr, rootToken, reviews,
    down: () => front.stop(),
    up: () => front.start(),
    async stop() {
      await front.stop();
      await sim.stop();
    },
  };
}

/** A raw Vault API call (tests read back what the controller wrote). */
export async function vaultCall(addr: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${addr}/v1/${path}`, {
    method,
    headers: { ...(token ? { 'x-vault-token': token } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
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
