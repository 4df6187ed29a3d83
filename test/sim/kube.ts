// A Kubernetes API simulator over HTTP (node:http on 127.0.0.1, port 0; HTTPS when given a key pair):
// discovery, CRUD, list/watch, status and token subresources, TokenReview, server-side apply, on top of
// KubeStore (kube-store.ts documents the rules it mirrors and where it simplifies). Status bodies, codes
// and watch event shapes follow the real apiserver: a simulator that disagrees with a real one is a bug
// here (the contract suite in test/contract/kube.contract.ts runs against both).
//
// Test hooks: inject(fault) makes matching requests fail (status code, hang, dropped connection);
// compact() makes older resourceVersions 410; closeWatches()/dropWatches() end open watches cleanly or
// abruptly; bookmarkAll() sends a BOOKMARK on every watch that asked for them; `requests` logs calls.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import type { KubeObject, WatchEvent } from '../../kube/objects.ts';
import { apiVersionOf } from '../../kube/resources.ts';
import { KubeStore, SimError, type KubeStoreOptions, type RegisteredResource } from './kube-store.ts';

export interface KubeSimOptions extends KubeStoreOptions {
  /** Bearer token clients must send. Default: random. */
  token?: string;
  /** Periodic BOOKMARK on watches that allow them (the apiserver sends one about every minute). Default 60 s. */
  bookmarkIntervalMs?: number;
  /** Watch length when the client sends no timeoutSeconds. Default 1800 s. */
  defaultWatchTimeoutSeconds?: number;
  /** Serve HTTPS with this key pair (PEM). */
  tls?: { key: string; cert: string };
}

export type FaultAction = 'hang' | 'drop' | { status: number; reason?: string; message?: string };

export interface Fault {
  /** Matched against the URL path (a string must equal it or be a prefix followed by `/`). */
  path: string | RegExp;
  method?: string;
  /** Only watch requests (true) or only non-watch requests (false). */
  watch?: boolean;
  /** How many requests to fail; default unlimited until removed. */
  times?: number;
  action: FaultAction;
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  watch: boolean;
  contentType?: string;
}

interface OpenWatch {
  allowBookmarks: boolean;
  resource: RegisteredResource;
  send(ev: WatchEvent): void;
  end(): void;
  destroy(): void;
}

const REASON_TEXT: Record<number, string> = {
  500: 'InternalError',
  503: 'ServiceUnavailable',
  429: 'TooManyRequests',
  410: 'Expired',
  403: 'Forbidden',
};

export class KubeSim {
  readonly store: KubeStore;
  readonly token: string;
  readonly requests: LoggedRequest[] = [];
  private readonly faults: (Fault & { remaining: number })[] = [];
  private readonly watches = new Set<OpenWatch>();
  private readonly hung = new Set<http.ServerResponse>();
  private server!: http.Server;
  private port = 0;
  private scheme: 'http' | 'https' = 'http';

  private constructor(private readonly opts: KubeSimOptions) {
    this.store = new KubeStore(opts);
    this.token = opts.token ?? randomBytes(16).toString('hex');
  }

  static async start(opts: KubeSimOptions = {}): Promise<KubeSim> {
    const sim = new KubeSim(opts);
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => sim.handle(req, res);
    sim.server = opts.tls
      ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert }, handler)
      : http.createServer(handler);
    sim.scheme = opts.tls ? 'https' : 'http';
    await new Promise<void>((resolve) => sim.server.listen(0, '127.0.0.1', resolve));
    sim.port = (sim.server.address() as AddressInfo).port;
    return sim;
  }

  get url(): string {
    return `${this.scheme}://127.0.0.1:${this.port}`;
  }

  /** A client-node KubeConfig for this server (skipTLSVerify: client-node refuses plain http otherwise). */
  kubeConfig(namespace = 'default'): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'sim', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'sim', token: this.token }],
      contexts: [{ name: 'sim', cluster: 'sim', user: 'sim', namespace }],
      currentContext: 'sim',
    });
    return kc;
  }

  /** Make matching requests fail; returns a function that removes the fault. */
  inject(fault: Fault): () => void {
    const entry = { ...fault, remaining: fault.times ?? Infinity };
    this.faults.push(entry);
    return () => {
      const i = this.faults.indexOf(entry);
      if (i >= 0) this.faults.splice(i, 1);
    };
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  compact(): void {
    this.store.compact();
  }

  get openWatches(): number {
    return this.watches.size;
  }

  /** End every open watch cleanly (as the apiserver does when timeoutSeconds expires). */
  closeWatches(): void {
    for (const w of [...this.watches]) w.end();
  }

  /** Cut every open watch's connection (a reset socket, not a clean end). */
  dropWatches(): void {
    for (const w of [...this.watches]) w.destroy();
  }

  bookmarkAll(): void {
    for (const w of this.watches) if (w.allowBookmarks) w.send(this.store.bookmark(w.resource));
  }

  /** Requests matching a predicate (e.g. LISTs of one resource). */
  countRequests(pred: (r: LoggedRequest) => boolean): number {
    return this.requests.filter(pred).length;
  }

  async close(): Promise<void> {
    for (const w of [...this.watches]) w.destroy();
    for (const res of this.hung) res.destroy();
    this.hung.clear();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ---- request handling ----

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://sim');
    const query = Object.fromEntries(url.searchParams);
    const isWatch = query.watch === 'true' || query.watch === '1';
    const method = req.method ?? 'GET';
    this.requests.push({ method, path: url.pathname, query, watch: isWatch, contentType: req.headers['content-type'] });

    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return this.sendStatus(
        res,
        new SimError({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'Unauthorized',
          reason: 'Unauthorized',
          code: 401,
        }),
      );
    }
    const fault = this.faults.find(
      (f) =>
        f.remaining > 0 &&
        matchPath(f.path, url.pathname) &&
        (!f.method || f.method === method) &&
        (f.watch === undefined || f.watch === isWatch),
    );
    if (fault) {
      fault.remaining--;
      if (fault.action === 'hang') {
        this.hung.add(res);
        res.on('close', () => this.hung.delete(res));
        return;
      }
      if (fault.action === 'drop') {
        req.socket.destroy();
        return;
      }
      const { status, reason, message } = fault.action;
      return this.sendStatus(
        res,
        new SimError({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: message ?? `injected failure ${status}`,
          reason: reason ?? REASON_TEXT[status] ?? 'InternalError',
          code: status,
        }),
      );
    }

    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        this.route(req, res, url, query, isWatch, Buffer.concat(chunks).toString('utf8'));
      } catch (err) {
        if (err instanceof SimError) return this.sendStatus(res, err);
        this.sendStatus(
          res,
          new SimError({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `internal error: ${(err as Error).message}`,
            reason: 'InternalError',
            code: 500,
          }),
        );
      }
    });
  }

  private route(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    url: URL,
    query: Record<string, string>,
    isWatch: boolean,
    rawBody: string,
  ): void {
    const method = req.method ?? 'GET';
    const segs = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    // discovery
    if (method === 'GET') {
      if (url.pathname === '/version')
        return this.json(res, 200, { major: '1', minor: '34', gitVersion: 'v1.34.0-vaultgate-sim' });
      if (url.pathname === '/api')
        return this.json(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
      if (url.pathname === '/apis') return this.json(res, 200, this.groupList());
      if ((segs[0] === 'api' && segs.length === 2) || (segs[0] === 'apis' && segs.length === 3))
        return this.json(res, 200, this.resourceList(segs[0] === 'api' ? '' : segs[1]!, segs[segs.length - 1]!));
    }
    if (method === 'POST' && url.pathname === '/apis/authentication.k8s.io/v1/tokenreviews')
      return this.tokenReview(res, rawBody);

    const target = this.parseResourcePath(segs);
    if (!target) throw notFoundPath();
    const { r, namespace, name, subresource } = target;
    const contentType = req.headers['content-type'] ?? 'application/json';
    const body = (): unknown => {
      if (!rawBody) return undefined;
      try {
        return contentType.startsWith('application/apply-patch+yaml')
          ? (parseYaml(rawBody) as unknown)
          : (JSON.parse(rawBody) as unknown);
      } catch {
        throw new SimError({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'the body of the request could not be decoded',
          reason: 'BadRequest',
          code: 400,
        });
      }
    };
    const ctx = { fieldManager: query.fieldManager, dryRun: query.dryRun === 'All' };
    if (
      subresource &&
      !(subresource === 'status' && r.statusSubresource) &&
      !(subresource === 'token' && r.plural === 'serviceaccounts' && r.group === '')
    )
      throw notFoundPath();

    switch (method) {
      case 'GET':
        if (name === undefined) {
          if (isWatch) return this.serveWatch(req, res, r, namespace, query);
          const page = this.store.list(r, {
            namespace,
            labelSelector: query.labelSelector,
            fieldSelector: query.fieldSelector,
            limit: query.limit ? Number(query.limit) : undefined,
            continue: query.continue,
          });
          // built-in lists (protobuf-backed) carry no apiVersion/kind on items; custom resources do
          const items = r.custom ? page.items : page.items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
          return this.json(res, 200, {
            apiVersion: apiVersionOf(r),
            kind: `${r.kind}List`,
            metadata: {
              resourceVersion: page.resourceVersion,
              ...(page.continue ? { continue: page.continue, remainingItemCount: page.remainingItemCount } : {}),
            },
            items,
          });
        }
        return this.json(res, 200, this.store.get(r, namespace, name));
      case 'POST': {
        if (subresource === 'token' && name) {
          const tr = (body() ?? {}) as {
            spec?: { audiences?: string[]; expirationSeconds?: number; boundObjectRef?: unknown };
          };
          const issued = this.store.issueToken(namespace!, name, tr.spec ?? {});
          return this.json(res, 201, {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenRequest',
            metadata: { name, namespace, creationTimestamp: null },
            spec: {
              audiences: tr.spec?.audiences ?? [],
              expirationSeconds: tr.spec?.expirationSeconds ?? 3600,
              boundObjectRef: tr.spec?.boundObjectRef ?? null,
            },
            status: issued,
          });
        }
        if (name !== undefined) throw methodNotAllowed();
        return this.json(res, 201, this.store.create(r, namespace, asObject(body()), ctx));
      }
      case 'PUT':
        if (name === undefined) throw methodNotAllowed();
        return this.json(res, 200, this.store.update(r, namespace, name, asObject(body()), { ...ctx, subresource }));
      case 'PATCH': {
        if (name === undefined) throw methodNotAllowed();
        const existed = this.exists(r, namespace, name);
        const out = this.store.patch(r, namespace, name, body(), contentType, {
          ...ctx,
          subresource,
          force: query.force === 'true',
        });
        return this.json(res, existed ? 200 : 201, out);
      }
      case 'DELETE': {
        if (name === undefined) throw methodNotAllowed();
        const opts = (body() ?? {}) as {
          preconditions?: { uid?: string; resourceVersion?: string };
          propagationPolicy?: string;
        };
        const { obj, gone } = this.store.delete(r, namespace, name, opts);
        if (!gone || r.custom) return this.json(res, 200, obj);
        return this.json(res, 200, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          details: { name, group: r.group, kind: r.plural, uid: obj.metadata.uid },
        });
      }
      default:
        throw methodNotAllowed();
    }
  }

  private exists(r: RegisteredResource, namespace: string | undefined, name: string): boolean {
    try {
      this.store.get(r, namespace, name);
      return true;
    } catch {
      return false;
    }
  }

  private serveWatch(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    r: RegisteredResource,
    namespace: string | undefined,
    query: Record<string, string>,
  ): void {
    const timeoutSeconds = query.timeoutSeconds
      ? Number(query.timeoutSeconds)
      : (this.opts.defaultWatchTimeoutSeconds ?? 1800);
    const allowBookmarks = query.allowWatchBookmarks === 'true';
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
    const timers: NodeJS.Timeout[] = [];
    let closed = false;
    const cleanup = (): void => {
      if (closed) return;
      closed = true;
      for (const t of timers) clearTimeout(t);
      handle.cancel();
      this.watches.delete(w);
    };
    const w: OpenWatch = {
      allowBookmarks,
      resource: r,
      send: (ev) => {
        if (!closed) res.write(`${JSON.stringify(ev)}\n`);
      },
      end: () => {
        cleanup();
        res.end();
      },
      destroy: () => {
        cleanup();
        res.destroy();
        req.socket.destroy();
      },
    };
    let handle: { cancel: () => void; ended: boolean } = { cancel: () => undefined, ended: false };
    handle = this.store.watch(
      r,
      {
        namespace,
        labelSelector: query.labelSelector,
        fieldSelector: query.fieldSelector,
        resourceVersion: query.resourceVersion,
      },
      w,
    );
    if (handle.ended) return w.end();
    this.watches.add(w);
    res.on('close', cleanup);
    timers.push(setTimeout(() => w.end(), timeoutSeconds * 1000));
    if (allowBookmarks) {
      // as the apiserver's cacheWatcher: a bookmark shortly (2 s) before the watch times out, and periodically
      if (timeoutSeconds > 2)
        timers.push(setTimeout(() => w.send(this.store.bookmark(r)), (timeoutSeconds - 2) * 1000));
      const every = this.opts.bookmarkIntervalMs ?? 60_000;
      const tick = (): void => {
        w.send(this.store.bookmark(r));
        timers.push(setTimeout(tick, every));
      };
      timers.push(setTimeout(tick, every));
    }
  }

  private tokenReview(res: http.ServerResponse, rawBody: string): void {
    const review = JSON.parse(rawBody || '{}') as { spec?: { token?: string; audiences?: string[] } };
    const result = this.store.reviewToken(review.spec?.token ?? '', review.spec?.audiences);
    const c = result.claims;
    this.json(res, 201, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      metadata: { creationTimestamp: null },
      spec: { audiences: review.spec?.audiences }, // the token itself is not echoed back
      status:
        result.authenticated && c
          ? {
              authenticated: true,
              user: {
                username: c.sub,
                uid: c['kubernetes.io'].serviceaccount.uid,
                groups: [
                  'system:serviceaccounts',
                  `system:serviceaccounts:${c['kubernetes.io'].namespace}`,
                  'system:authenticated',
                ],
              },
              audiences: c.aud,
            }
          : { authenticated: false, error: result.error, user: {} },
    });
  }

  private parseResourcePath(
    segs: string[],
  ): { r: RegisteredResource; namespace?: string; name?: string; subresource?: string } | undefined {
    let group: string;
    let version: string;
    let rest: string[];
    if (segs[0] === 'api' && segs.length >= 3) [group, version, rest] = ['', segs[1]!, segs.slice(2)];
    else if (segs[0] === 'apis' && segs.length >= 4) [group, version, rest] = [segs[1]!, segs[2]!, segs.slice(3)];
    else return undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      const r = this.store.resource(group, version, rest[2]!);
      if (r?.namespaced) return { r, namespace: rest[1], name: rest[3], subresource: rest[4] };
    }
    const r = this.store.resource(group, version, rest[0]!);
    if (!r || rest.length > 3) return undefined;
    return { r, name: rest[1], subresource: rest[2] };
  }

  private groupList(): unknown {
    const groups = new Map<string, Set<string>>();
    for (const r of this.store.allResources())
      if (r.group) (groups.get(r.group) ?? groups.set(r.group, new Set()).get(r.group)!).add(r.version);
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [...groups].map(([name, versions]) => {
        const vs = [...versions].map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
        return { name, versions: vs, preferredVersion: vs[0] };
      }),
    };
  }

  private resourceList(group: string, version: string): unknown {
    const rs = this.store.allResources().filter((r) => r.group === group && r.version === version);
    if (!rs.length) throw notFoundPath();
    const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
    const resources = rs.flatMap((r) => [
      {
        name: r.plural,
        singularName: r.singular,
        namespaced: r.namespaced,
        kind: r.kind,
        verbs,
        ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
      },
      ...(r.statusSubresource
        ? [
            {
              name: `${r.plural}/status`,
              singularName: '',
              namespaced: r.namespaced,
              kind: r.kind,
              verbs: ['get', 'patch', 'update'],
            },
          ]
        : []),
      ...(r.plural === 'serviceaccounts' && !group
        ? [
            {
              name: 'serviceaccounts/token',
              singularName: '',
              namespaced: true,
              group: 'authentication.k8s.io',
              version: 'v1',
              kind: 'TokenRequest',
              verbs: ['create'],
            },
          ]
        : []),
    ]);
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources,
    };
  }

  private json(res: http.ServerResponse, code: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private sendStatus(res: http.ServerResponse, err: SimError): void {
    this.json(res, err.status.code, err.status);
  }
}

function matchPath(pattern: string | RegExp, path: string): boolean {
  if (pattern instanceof RegExp) return pattern.test(path);
  return path === pattern || path.startsWith(pattern.endsWith('/') ? pattern : `${pattern}/`);
}

function asObject(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new SimError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the body of the request must be an object',
      reason: 'BadRequest',
      code: 400,
    });
  }
  return v as Record<string, unknown>;
}

const notFoundPath = (): SimError =>
  new SimError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    code: 404,
    details: {},
  });
const methodNotAllowed = (): SimError =>
  new SimError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server does not allow this method on the requested resource',
    reason: 'MethodNotAllowed',
    code: 405,
    details: {},
  });

export type { KubeObject };
