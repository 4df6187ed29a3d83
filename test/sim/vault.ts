// A Vault HTTP API simulator for tests and benchmarks: what vaultgate uses, with Vault's status codes
// and `{"errors": [...]}` bodies. node:http cannot parse the LIST verb, so LIST is `GET ?list=true`
// (the adapter's default; real Vault accepts both).
//
// Implemented: token auth (root token, lookup-self, renew-self, revoke-self, create), sys/policies/acl
// and legacy sys/policy, sys/auth and sys/mounts enable/list/disable, sys/quotas/rate-limit, sys/health,
// sys/seal-status, sys/seal + sys/unseal, sys/capabilities-self; kubernetes, jwt and approle auth;
// KV v1 and v2 engines (`secret/` is KV v2, as in `vault server -dev`); ACL enforcement for non-root
// tokens via policy/acl.ts. Test controls: seal/unseal, rate-limit mode, latency / hang / failure
// injection per path, request counters (logins and reads per path) and the live token count.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { effectiveCapabilities, type CompiledAcl, type PolicyRules, type RequestCapability } from '../../policy/acl.ts';
import { aclAllows, compilePolicies, parsePolicy } from './vault-acl.ts';
import { AppRoleAuthEngine, JwtAuthEngine, KubernetesAuthEngine, type AuthEngine } from './vault-auth.ts';
import {
  SimError,
  badRequest,
  badToken,
  dataResponse,
  noContent,
  noHandler,
  notFound,
  permissionDenied,
  ttlSeconds,
  type SimOp,
  type SimResponse,
} from './vault-engine.ts';
import { FakeJwtIssuer, type JwtVerifier, type SaTokenVerifier } from './vault-jwt.ts';
import { KvV1Engine, KvV2Engine, type KvEngine } from './vault-kv.ts';
import { TokenStore, type SimToken } from './vault-tokens.ts';

export { DEFAULT_K8S_AUDIENCE, type SaTokenVerifier, type ServiceAccountIdentity } from './vault-jwt.ts';

export interface VaultSimOptions {
  /** Default `root`. */
  rootToken?: string;
  /** Mount a kubernetes auth method at this path (default `kubernetes`); `false` to start without one. */
  kubernetesMount?: string | false;
  /** TokenReview stand-in; default: verifies tokens minted by `sim.jwtFor`. */
  verifier?: SaTokenVerifier;
  /** jwt-auth verifier; default: tokens minted by `sim.signJwt`. */
  jwtVerifier?: JwtVerifier;
  /** Clock (ms) for token TTLs and KV timestamps. */
  now?: () => number;
}

/** Latency, hang or failure injected for requests whose path matches. */
export interface SimFault {
  /** Exact API path (after /v1/), a prefix ending in `*`, or a RegExp. */
  path: string | RegExp;
  /** HTTP method to match (GET, POST, …; LIST requests are GET); any when omitted. */
  method?: string;
  latencyMs?: number;
  /** Never answer (until the simulator stops). */
  hang?: boolean;
  /** Answer with this status and `{errors}` instead of handling the request. */
  status?: number;
  errors?: string[];
  /** Apply to this many matching requests, then remove itself. Default: until removed. */
  times?: number;
}

interface Mount {
  type: string;
  description: string;
  engine?: KvEngine;
  auth?: AuthEngine;
  options: Record<string, string>;
}
interface Quota {
  name: string;
  path: string;
  rate: number;
  intervalMs: number;
  windowStart: number;
  used: number;
}

const DEFAULT_POLICY = `# Allow tokens to look up, renew and revoke themselves (subset of Vault's default policy)
path "auth/token/lookup-self" { capabilities = ["read"] }
path "auth/token/renew-self" { capabilities = ["update"] }
path "auth/token/revoke-self" { capabilities = ["update"] }
path "sys/capabilities-self" { capabilities = ["update"] }
`;

/** Root-protected paths (Vault requires sudo on the matched rule). */
const SUDO_PATHS = [
  /^sys\/auth\/.+/,
  /^sys\/mounts\/.+/,
  /^sys\/audit/,
  /^sys\/seal$/,
  /^sys\/quotas\//,
  /^auth\/token\/create-orphan$/,
];

export class VaultSim {
  readonly rootToken: string;
  readonly unsealKey = 'sim-unseal-key';
  /** Mints fake SA tokens the default verifier accepts (see vault-jwt.ts). */
  readonly jwt: FakeJwtIssuer;
  sealed = false;
  /** When true every request except health/seal-status gets 429. */
  rateLimited = false;
  /** X-Vault-Namespace values seen (the simulator ignores namespaces otherwise). */
  readonly namespacesSeen = new Set<string>();

  private readonly now: () => number;
  private readonly tokens: TokenStore;
  private readonly policies = new Map<string, { text: string; rules: PolicyRules['rules'] }>();
  private readonly mounts = new Map<string, Mount>();
  private readonly authMounts = new Map<string, Mount>();
  private readonly quotas = new Map<string, Quota>();
  private faults: Array<SimFault & { remaining: number }> = [];
  private readonly counters = new Map<string, number>();
  private requests = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly verifier: SaTokenVerifier;
  private readonly jwtVerifier: JwtVerifier;
  private server!: http.Server;
  private address = '';

  private constructor(opts: VaultSimOptions) {
    this.now = opts.now ?? Date.now;
    this.rootToken = opts.rootToken ?? 'root';
    this.jwt = new FakeJwtIssuer(this.now);
    this.verifier = opts.verifier ?? this.jwt.verifyServiceAccount;
    this.jwtVerifier = opts.jwtVerifier ?? this.jwt.verify;
    this.tokens = new TokenStore(this.now);
    this.tokens.createRoot(this.rootToken);
    this.setPolicy('default', DEFAULT_POLICY);
    this.mounts.set('secret', {
      type: 'kv',
      description: 'key/value secret storage',
      engine: new KvV2Engine(this.now),
      options: { version: '2' },
    });
    this.mounts.set('cubbyhole', {
      type: 'cubbyhole',
      description: 'per-token private secret storage',
      engine: new KvV1Engine(),
      options: {},
    });
    this.authMounts.set('token', { type: 'token', description: 'token based credentials', options: {} });
    const k8s = opts.kubernetesMount === undefined ? 'kubernetes' : opts.kubernetesMount;
    if (k8s) this.enableAuth(k8s, 'kubernetes');
  }

  /** Start on 127.0.0.1, a free port. */
  static async start(opts: VaultSimOptions = {}): Promise<VaultSim> {
    const sim = new VaultSim(opts);
    sim.server = http.createServer((req, res) => {
      void sim.serve(req, res);
    });
    sim.server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve) => sim.server.listen(0, '127.0.0.1', resolve));
    sim.address = `http://127.0.0.1:${(sim.server.address() as AddressInfo).port}`;
    return sim;
  }

  /** e.g. `http://127.0.0.1:41234`. */
  get addr(): string {
    return this.address;
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ------------------------------------------------------------------------------ test controls

  /** A service-account JWT the kubernetes mount accepts (audience default: the apiserver's). */
  jwtFor(
    namespace: string,
    serviceAccount: string,
    opts: { audiences?: string[]; expiresInSeconds?: number } = {},
  ): string {
    return this.jwt.serviceAccountToken(namespace, serviceAccount, opts);
  }

  seal(): void {
    this.sealed = true;
  }

  unseal(): void {
    this.sealed = false;
  }

  /** Inject a fault; returns a function removing it. */
  inject(fault: SimFault): () => void {
    const f = { ...fault, remaining: fault.times ?? Infinity };
    this.faults.push(f);
    return () => {
      this.faults = this.faults.filter((x) => x !== f);
    };
  }

  clearFaults(): void {
    this.faults = [];
  }

  /** Requests counted as `<kind> <path>`, kind = login|read|list|write|delete|patch. */
  count(kind: 'login' | 'read' | 'list' | 'write' | 'delete' | 'patch', pathPrefix = ''): number {
    let n = 0;
    const prefix = `${kind} ${pathPrefix}`;
    for (const [k, v] of this.counters) if (k.startsWith(prefix)) n += v;
    return n;
  }

  /** Login attempts on an auth mount (all mounts when omitted). */
  loginCount(mount?: string): number {
    return this.count('login', mount ? `auth/${mount}/` : '');
  }

  /** All counters, for benchmark reports. */
  counts(): Record<string, number> {
    return Object.fromEntries([...this.counters].sort());
  }

  get requestCount(): number {
    return this.requests;
  }

  resetCounts(): void {
    this.counters.clear();
    this.requests = 0;
  }

  /** Unexpired non-root tokens: what a lease explosion would grow. */
  get liveTokens(): number {
    return this.tokens.liveCount;
  }

  /** Direct access for tests: issue a token with `policies` (as `auth/token/create` would). */
  createToken(policies: string[], opts: { ttlSeconds?: number; maxTtlSeconds?: number } = {}): string {
    return this.tokens.issue({
      policies,
      ...(opts.ttlSeconds ? { ttl: opts.ttlSeconds } : {}),
      ...(opts.maxTtlSeconds ? { maxTtl: opts.maxTtlSeconds } : {}),
      path: 'auth/token/create',
      displayName: 'token',
    }).id;
  }

  // ------------------------------------------------------------------------------ HTTP

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.requests++;
    let answer: SimResponse;
    try {
      const raw = await readBody(req);
      answer = await this.dispatch(req, raw);
    } catch (err) {
      if (err instanceof HangError) return; // left open until stop()
      answer =
        err instanceof SimError
          ? { status: err.status, body: { errors: err.errors } }
          : { status: 500, body: { errors: [`internal error: ${(err as Error).message}`] } };
    }
    if (answer.status === 204 || answer.body === undefined) {
      res.writeHead(answer.status === 200 ? 204 : answer.status);
      res.end();
      return;
    }
    const text = JSON.stringify(answer.body);
    res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  private async dispatch(req: http.IncomingMessage, raw: string): Promise<SimResponse> {
    const url = new URL(req.url ?? '/', 'http://sim');
    if (!url.pathname.startsWith('/v1/')) throw new SimError(404, []);
    const path = decodeURIComponent(url.pathname.slice('/v1/'.length));
    const method = (req.method ?? 'GET').toUpperCase();
    const listFlag = url.searchParams.get('list');
    const isList = method === 'LIST' || (method === 'GET' && (listFlag === 'true' || listFlag === '1'));
    const ns = req.headers['x-vault-namespace'];
    if (typeof ns === 'string') this.namespacesSeen.add(ns);

    for (const f of this.faults) {
      if (f.remaining <= 0 || (f.method && f.method.toUpperCase() !== method) || !faultMatches(f.path, path)) continue;
      f.remaining--;
      if (f.latencyMs) await this.sleep(f.latencyMs);
      if (f.hang) throw new HangError();
      if (f.status) throw new SimError(f.status, f.errors ?? []);
    }
    this.faults = this.faults.filter((f) => f.remaining > 0);

    if (path === 'sys/health') return this.health();
    if (path === 'sys/seal-status') return dataResponse(undefined, this.sealStatus());
    if (path === 'sys/unseal' && (method === 'PUT' || method === 'POST')) return this.unsealRequest(parseJson(raw));
    if (this.sealed) throw new SimError(503, ['Vault is sealed']);
    if (this.rateLimited) throw new SimError(429, [`request path "${path}": rate limit quota exceeded`]);
    this.checkQuotas(path);

    let op: SimOp;
    if (isList) op = 'list';
    else if (method === 'GET') op = 'read';
    else if (method === 'POST' || method === 'PUT') op = 'update';
    else if (method === 'DELETE') op = 'delete';
    else if (method === 'PATCH') op = 'patch';
    else throw new SimError(405, ['unsupported operation']);
    const body = op === 'update' || op === 'patch' ? parseJson(raw) : {};

    const token = this.tokens.lookup(headerValue(req.headers['x-vault-token']));
    let route: Route;
    try {
      route = this.route(path);
    } catch (err) {
      // OpenBao checks the token before routing: without a valid one, a missing route is a plain refusal.
      throw token || !(err instanceof SimError) ? err : badToken();
    }
    if (route.kind === 'auth' && route.mount.auth?.unauthenticated(route.rest)) {
      this.bump(`login ${path}`);
      return route.mount.auth.handle(op, route.rest, body, route.mountPath);
    }
    this.bump(`${op === 'update' ? 'write' : op} ${path}`);

    if (!token) throw badToken();
    if (op === 'update') op = this.exists(route) ? 'update' : 'create';
    if (!token.root) {
      const acl = this.aclFor(token);
      const capability: RequestCapability = op;
      const aclPath = op === 'list' && !path.endsWith('/') ? `${path}/` : path;
      const requiresSudo = SUDO_PATHS.some((re) => re.test(path));
      if (
        !aclAllows(acl, aclPath, capability, {
          ...(op === 'create' || op === 'update' ? { parameters: body } : {}),
          requiresSudo,
        })
      )
        throw permissionDenied();
    }
    return this.handle(route, op, body, url.searchParams, token, path);
  }

  private bump(key: string): void {
    this.counters.set(key, (this.counters.get(key) ?? 0) + 1);
  }

  private aclFor(token: SimToken): CompiledAcl {
    return compilePolicies(
      token.policies.flatMap((name) => {
        const p = this.policies.get(name);
        return p ? [{ name, rules: p.rules }] : [];
      }),
    );
  }

  private route(path: string): Route {
    if (path.startsWith('sys/')) return { kind: 'sys', rest: path.slice(4) };
    if (path.startsWith('auth/')) {
      const mountPath = longestMount(this.authMounts, path.slice(5));
      if (mountPath === undefined) throw noHandler(path);
      const mount = this.authMounts.get(mountPath);
      if (!mount) throw noHandler(path);
      return { kind: 'auth', mount, mountPath, rest: path.slice(5 + mountPath.length + 1) };
    }
    const mountPath = longestMount(this.mounts, path);
    const mount = mountPath === undefined ? undefined : this.mounts.get(mountPath);
    if (!mount || mountPath === undefined) throw noHandler(path);
    return { kind: 'secret', mount, mountPath, rest: path.slice(mountPath.length + 1) };
  }

  private exists(route: Route): boolean {
    if (route.kind === 'secret') return route.mount.engine?.exists(route.rest) ?? false;
    if (route.kind === 'auth') return route.mount.auth?.exists(route.rest) ?? true; // token store: no existence check
    return true; // sys paths have no existence check: writes need `update`
  }

  private async handle(
    route: Route,
    op: SimOp,
    body: Record<string, unknown>,
    query: URLSearchParams,
    token: SimToken,
    path: string,
  ): Promise<SimResponse> {
    if (route.kind === 'sys') return this.sys(op, route.rest, body, token);
    if (route.kind === 'auth') {
      if (route.mountPath === 'token') return this.tokenAuth(op, route.rest, body, token);
      if (!route.mount.auth) throw noHandler(path);
      return route.mount.auth.handle(op, route.rest, body, route.mountPath);
    }
    if (!route.mount.engine) throw noHandler(path);
    return route.mount.engine.handle(op, route.rest, body, query, path);
  }

  // ------------------------------------------------------------------------------ sys

  private health(): SimResponse {
    const body = {
      initialized: true,
      sealed: this.sealed,
      standby: false,
      performance_standby: false,
      replication_performance_mode: 'disabled',
      replication_dr_mode: 'disabled',
      server_time_utc: Math.floor(this.now() / 1000),
      version: '1.99.0-sim',
      cluster_name: 'vault-sim',
    };
    return { status: this.sealed ? 503 : 200, body };
  }

  private sealStatus(): Record<string, unknown> {
    return {
      type: 'shamir',
      initialized: true,
      sealed: this.sealed,
      t: 1,
      n: 1,
      progress: 0,
      nonce: '',
      version: '1.99.0-sim',
      build_date: '',
      migration: false,
      recovery_seal: false,
      storage_type: 'inmem',
    };
  }

  private unsealRequest(body: Record<string, unknown>): SimResponse {
    if (body.reset === true) return dataResponse(undefined, this.sealStatus());
    if (body.key !== this.unsealKey) throw badRequest('Unseal failed, invalid key');
    this.sealed = false;
    return { status: 200, body: this.sealStatus() };
  }

  private setPolicy(name: string, text: string): void {
    const parsed = parsePolicy(text);
    if (!parsed.ok) throw badRequest(parsed.error);
    this.policies.set(name, { text, rules: parsed.rules });
  }

  private enableAuth(path: string, type: string): void {
    const tokens = this.tokens;
    let auth: AuthEngine;
    if (type === 'kubernetes') auth = new KubernetesAuthEngine(tokens, this.verifier);
    else if (type === 'jwt' || type === 'oidc') auth = new JwtAuthEngine(tokens, this.jwtVerifier);
    else if (type === 'approle') auth = new AppRoleAuthEngine(tokens);
    else throw badRequest(`plugin not found in the catalog: ${type}`);
    this.authMounts.set(path, { type, description: '', auth, options: {} });
  }

  private sys(op: SimOp, rest: string, body: Record<string, unknown>, token: SimToken): SimResponse {
    const seg = rest.split('/');
    // sys/policies/acl[/name]
    if (seg[0] === 'policies' && seg[1] === 'acl') {
      const name = seg.slice(2).join('/').toLowerCase();
      if (!name) {
        if (op !== 'list' && op !== 'read') throw new SimError(405, ['unsupported operation']);
        return dataResponse({ keys: this.policyNames() }, { keys: this.policyNames() });
      }
      return this.policy(op, name, typeof body.policy === 'string' ? body.policy : undefined, false);
    }
    // Legacy sys/policy[/name]
    if (seg[0] === 'policy') {
      const name = seg.slice(1).join('/').toLowerCase();
      if (!name)
        return dataResponse(
          { keys: this.policyNames(), policies: this.policyNames() },
          { keys: this.policyNames(), policies: this.policyNames() },
        );
      const text =
        typeof body.policy === 'string' ? body.policy : typeof body.rules === 'string' ? body.rules : undefined;
      return this.policy(op, name, text, true);
    }
    if (seg[0] === 'auth') return this.sysMounts(op, seg.slice(1).join('/'), body, this.authMounts, true);
    if (seg[0] === 'mounts') return this.sysMounts(op, seg.slice(1).join('/'), body, this.mounts, false);
    if (seg[0] === 'quotas' && seg[1] === 'rate-limit') return this.sysQuota(op, seg.slice(2).join('/'), body);
    if (rest === 'seal' && (op === 'update' || op === 'create')) {
      this.sealed = true;
      return noContent();
    }
    if (rest === 'capabilities-self' && (op === 'update' || op === 'create')) {
      const paths = Array.isArray(body.paths)
        ? body.paths.filter((p): p is string => typeof p === 'string')
        : typeof body.path === 'string'
          ? [body.path]
          : [];
      const acl = this.aclFor(token);
      const out: Record<string, string[]> = {};
      for (const p of paths) out[p] = token.root ? ['root'] : effectiveCapabilities(acl, p);
      const first = paths[0];
      return dataResponse(out, { ...out, ...(first ? { capabilities: out[first] } : {}) });
    }
    throw noHandler(`sys/${rest}`);
  }

  private policyNames(): string[] {
    return [...this.policies.keys(), 'root'].sort();
  }

  private policy(op: SimOp, name: string, text: string | undefined, legacy: boolean): SimResponse {
    switch (op) {
      case 'read': {
        if (name === 'root') return dataResponse({ name: 'root', [legacy ? 'rules' : 'policy']: '' });
        const p = this.policies.get(name);
        if (!p) throw notFound();
        const data = legacy ? { name, rules: p.text } : { name, policy: p.text };
        return dataResponse(data, legacy ? data : {});
      }
      case 'create':
      case 'update':
        if (name === 'root') throw badRequest('cannot update "root" policy');
        if (!text) throw badRequest("'policy' parameter not supplied or empty");
        this.setPolicy(name, text);
        return noContent();
      case 'delete':
        if (name === 'root') throw badRequest('cannot delete "root" policy');
        if (name === 'default') throw badRequest('cannot delete "default" policy');
        this.policies.delete(name);
        return noContent();
      default:
        throw new SimError(405, ['unsupported operation']);
    }
  }

  private sysMounts(
    op: SimOp,
    path: string,
    body: Record<string, unknown>,
    table: Map<string, Mount>,
    auth: boolean,
  ): SimResponse {
    const p = path.replace(/\/+$/, '');
    if (!p) {
      if (op !== 'read') throw new SimError(405, ['unsupported operation']);
      const out: Record<string, unknown> = {};
      for (const [k, m] of table)
        out[`${k}/`] = {
          type: m.type,
          description: m.description,
          options: m.options,
          accessor: `${m.type}_sim`,
          config: {},
          local: false,
          seal_wrap: false,
        };
      return dataResponse(out, out);
    }
    switch (op) {
      case 'read': {
        const m = table.get(p);
        if (!m) throw badRequest(`No ${auth ? 'auth' : 'secret'} engine at ${p}/`);
        return dataResponse({ type: m.type, options: m.options, description: m.description });
      }
      case 'create':
      case 'update': {
        if (table.has(p)) throw badRequest(`path is already in use at ${p}/`);
        const type = typeof body.type === 'string' ? body.type : '';
        const options = (body.options && typeof body.options === 'object' ? body.options : {}) as Record<
          string,
          unknown
        >;
        if (auth) {
          this.enableAuth(p, type);
          const m = this.authMounts.get(p);
          if (m && typeof body.description === 'string') m.description = body.description;
          return noContent();
        }
        const version =
          type === 'kv-v2'
            ? '2'
            : type === 'kv'
              ? options.version === 2 || options.version === '2'
                ? '2'
                : '1'
              : undefined;
        if (version === undefined) throw badRequest(`plugin not found in the catalog: ${type}`);
        table.set(p, {
          type: 'kv',
          description: typeof body.description === 'string' ? body.description : '',
          engine: version === '2' ? new KvV2Engine(this.now) : new KvV1Engine(),
          options: { version },
        });
        return noContent();
      }
      case 'delete':
        if (p === 'token' || p === 'sys' || p === 'cubbyhole') throw badRequest(`cannot unmount "${p}/"`);
        table.delete(p);
        return noContent();
      default:
        throw new SimError(405, ['unsupported operation']);
    }
  }

  private sysQuota(op: SimOp, name: string, body: Record<string, unknown>): SimResponse {
    if (!name) {
      if (op !== 'list') throw new SimError(405, ['unsupported operation']);
      const keys = [...this.quotas.keys()].sort();
      if (keys.length === 0) throw notFound();
      return dataResponse({ keys });
    }
    switch (op) {
      case 'read': {
        const q = this.quotas.get(name);
        if (!q) throw notFound();
        return dataResponse({ name, path: q.path, rate: q.rate, interval: q.intervalMs / 1000, type: 'rate-limit' });
      }
      case 'create':
      case 'update': {
        const rate = typeof body.rate === 'number' ? body.rate : Number(body.rate);
        if (!(rate > 0)) throw badRequest('rate must be positive');
        const interval = ttlSeconds(body.interval, 'interval') ?? 1;
        this.quotas.set(name, {
          name,
          path: typeof body.path === 'string' ? body.path : '',
          rate,
          intervalMs: Math.max(1, interval) * 1000,
          windowStart: this.now(),
          used: 0,
        });
        return noContent();
      }
      case 'delete':
        this.quotas.delete(name);
        return noContent();
      default:
        throw new SimError(405, ['unsupported operation']);
    }
  }

  /** Vault rate-limit quotas: `rate` requests per `interval` for paths under the quota's path ('' = all). */
  /**
   * As OpenBao matches a quota's path (test/contract/openbao-answers.json, "quota"): a mount covers
   * everything under it, `prefix*` everything starting with prefix, any other path only itself.
   */
  private quotaApplies(quotaPath: string, path: string): boolean {
    if (quotaPath.endsWith('*')) return path.startsWith(quotaPath.slice(0, -1));
    const trimmed = quotaPath.replace(/\/+$/, '');
    const isMount = trimmed.startsWith('auth/') ? this.authMounts.has(trimmed.slice(5)) : this.mounts.has(trimmed);
    return isMount ? path === trimmed || path.startsWith(`${trimmed}/`) : path === trimmed;
  }

  private checkQuotas(path: string): void {
    if (path.startsWith('sys/quotas/')) return;
    for (const q of this.quotas.values()) {
      if (q.path && !this.quotaApplies(q.path, path)) continue;
      const now = this.now();
      if (now - q.windowStart >= q.intervalMs) {
        q.windowStart = now;
        q.used = 0;
      }
      if (q.used >= Math.ceil(q.rate)) throw new SimError(429, [`request path "${path}": rate limit quota exceeded`]);
      q.used++;
    }
  }

  // ------------------------------------------------------------------------------ auth/token

  private tokenAuth(op: SimOp, rest: string, body: Record<string, unknown>, token: SimToken): SimResponse {
    switch (rest) {
      case 'lookup-self':
        if (op !== 'read') break;
        return dataResponse(this.tokens.lookupData(token));
      case 'renew-self': {
        if (op !== 'update' && op !== 'create') break;
        if (!token.renewable || token.root) throw badRequest('lease is not renewable');
        const { ttl, warnings } = this.tokens.renew(token, ttlSeconds(body.increment, 'increment'));
        return dataResponse(null, { auth: this.tokens.authBlock(token, ttl), warnings });
      }
      case 'revoke-self':
        if (op !== 'update' && op !== 'create') break;
        this.tokens.revoke(token.id);
        return noContent();
      case 'create': {
        if (op !== 'update' && op !== 'create') break;
        const policies = Array.isArray(body.policies)
          ? body.policies.filter((p): p is string => typeof p === 'string')
          : [];
        if (!token.root && !policies.every((p) => token.policies.includes(p)))
          throw badRequest('child policies must be subset of parent');
        const ttl = ttlSeconds(body.ttl, 'ttl');
        const maxTtl = ttlSeconds(body.explicit_max_ttl, 'explicit_max_ttl');
        const t = this.tokens.issue({
          policies,
          ...(ttl ? { ttl } : {}),
          ...(maxTtl ? { maxTtl } : {}),
          noDefaultPolicy: body.no_default_policy === true,
          renewable: body.renewable !== false,
          path: 'auth/token/create',
          displayName: typeof body.display_name === 'string' ? `token-${body.display_name}` : 'token',
        });
        return dataResponse(null, { auth: this.tokens.authBlock(t) });
      }
      default:
        break;
    }
    throw noHandler(`auth/token/${rest}`);
  }
}

type Route =
  | { kind: 'sys'; rest: string }
  | { kind: 'auth'; mount: Mount; mountPath: string; rest: string }
  | { kind: 'secret'; mount: Mount; mountPath: string; rest: string };

class HangError extends Error {}

function longestMount(table: Map<string, Mount>, path: string): string | undefined {
  let best: string | undefined;
  for (const m of table.keys()) {
    if ((path === m || path.startsWith(`${m}/`)) && (best === undefined || m.length > best.length)) best = m;
  }
  return best;
}

function faultMatches(p: string | RegExp, path: string): boolean {
  if (p instanceof RegExp) return p.test(path);
  return p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : path === p;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function parseJson(raw: string): Record<string, unknown> {
  if (raw.trim() === '') return {};
  try {
    const v = JSON.parse(raw) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch (err) {
    throw badRequest(`failed to parse JSON input: ${(err as Error).message}`);
  }
  throw badRequest('failed to parse JSON input: expected an object');
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 32 * 1024 * 1024) reject(new SimError(413, ['request body too large']));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
