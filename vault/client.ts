// The one place node-vault is imported. Everything goes through node-vault's generic `request()` so
// that we, not its generated command table, choose path, method and token:
// - auth mounts are always explicit in the path (node-vault#300: `kubernetesLogin` posts to `auth//login`
//   unless `mount_point` is passed), and logins never set the shared `client.token` (its `tokenSource`
//   commands do, which would leak one identity's token into another's requests);
// - the token travels per request in `X-Vault-Token`; the node-vault instance holds none, and the
//   VAULT_TOKEN / VAULT_NAMESPACE / VAULT_PREFIX / VAULT_SKIP_VERIFY environment defaults it would pick up
//   are overridden, so configuration is only what the caller passed;
// - node-vault's `debug` output is replaced by a no-op: with DEBUG=node-vault it prints request bodies
//   (secret values written to KV, login JWTs). We neutralise it rather than refuse to start, and warn once.
import http from 'node:http';
import https from 'node:https';
import nodeVault from 'node-vault';
import { silentLogger, type Logger } from '../observability/log.ts';
import { VaultError, errorKind, toVaultError } from './errors.ts';
import { RequestLimiter, type LimiterOptions } from './limiter.ts';
import { VaultRateLimits } from './rate-limits.ts';
import { noopVaultMetrics, type VaultMetrics } from './metrics.ts';
import { vaultPathProblems } from './paths.ts';
import type { VaultClient, VaultRequest } from './types.ts';

export interface VaultTlsOptions {
  /** PEM CA bundle to trust (ESO `caBundle` / `caProvider`). Without it, Node's default roots apply. */
  ca?: string | Buffer;
  /** Client certificate and key for mTLS (ESO `tls.certSecretRef` / `keySecretRef`). */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Disable certificate verification. Only honoured when set here; VAULT_SKIP_VERIFY is ignored on purpose. */
  insecureSkipVerify?: boolean;
}

export interface VaultClientOptions {
  /** e.g. `https://vault.vault.svc:8200`. */
  address: string;
  /** Required: deadline for every request in ms (node-vault has none by default; a hung Vault would hang reconciles). */
  timeoutMs: number;
  /** Vault Enterprise / OpenBao namespace (`X-Vault-Namespace`). */
  namespace?: string;
  tls?: VaultTlsOptions;
  /** Extra headers on every request (ESO `provider.vault.headers`). */
  headers?: Record<string, string>;
  /**
   * Concurrency + token bucket for this server; a RequestLimiter to share one between clients, or the
   * process's VaultRateLimits to use the one limiter of this client's server.
   */
  limiter?: LimiterOptions | RequestLimiter | VaultRateLimits;
  /**
   * How LIST is sent. `GET` (default) sends `GET <path>?list=true`, which every Vault and OpenBao accepts
   * and which node:http servers (the simulator) and some proxies can parse; `LIST` uses the custom verb.
   */
  listMethod?: 'GET' | 'LIST';
  metrics?: VaultMetrics;
  logger?: Logger;
}

// node-vault's debug hook receives request bodies and JWTs: swallow everything.
const noDebug = (): void => {};

/** Whether the `debug` package would enable the `node-vault` namespace for this DEBUG value (pure). */
export function debugEnablesNodeVault(debugEnv: string | undefined): boolean {
  if (!debugEnv) return false;
  let enabled = false;
  for (const raw of debugEnv.split(/[\s,]+/)) {
    if (!raw) continue;
    const negate = raw.startsWith('-');
    const pattern = new RegExp(
      `^${(negate ? raw.slice(1) : raw).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*?')}$`,
    );
    if (pattern.test('node-vault')) enabled = !negate;
  }
  return enabled;
}

let warnedDebug = false;

export function createVaultClient(opts: VaultClientOptions): VaultClient {
  if (!(opts.timeoutMs > 0))
    throw new Error('createVaultClient: timeoutMs is required and must be > 0 (node-vault has no default timeout)');
  const address = opts.address.replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new Error(`createVaultClient: invalid Vault address ${JSON.stringify(address)}`);
  }
  const logger = opts.logger ?? silentLogger;
  if (!warnedDebug && debugEnablesNodeVault(process.env.DEBUG)) {
    warnedDebug = true;
    logger.warn(
      'DEBUG enables node-vault, whose debug output prints secret values and login JWTs; vaultgate disables node-vault debug output',
    );
  }
  const metrics = opts.metrics ?? noopVaultMetrics;
  const limiter =
    opts.limiter instanceof RequestLimiter
      ? opts.limiter
      : opts.limiter instanceof VaultRateLimits
        ? opts.limiter.limiterFor(address)
        : new RequestLimiter(opts.limiter);
  const listViaGet = (opts.listMethod ?? 'GET') === 'GET';

  // Our own agents (keep-alive, TLS as configured), destroyed by close().
  const httpAgent = new http.Agent({ keepAlive: true });
  const httpsAgent = new https.Agent({
    keepAlive: true,
    ...(opts.tls?.ca !== undefined ? { ca: opts.tls.ca } : {}),
    ...(opts.tls?.cert !== undefined ? { cert: opts.tls.cert } : {}),
    ...(opts.tls?.key !== undefined ? { key: opts.tls.key } : {}),
    rejectUnauthorized: opts.tls?.insecureSkipVerify !== true,
  });

  const vault = nodeVault({
    endpoint: address,
    apiVersion: 'v1',
    pathPrefix: '',
    debug: noDebug,
    noCustomHTTPVerbs: listViaGet,
    // Overrides node-vault's `strictSSL: !process.env.VAULT_SKIP_VERIFY`; our httpsAgent decides.
    rpDefaults: { strictSSL: true },
  } as Parameters<typeof nodeVault>[0]);
  // node-vault falls back to VAULT_TOKEN / VAULT_NAMESPACE when these are unset: pin them.
  (vault as { token: string | undefined }).token = undefined;
  (vault as unknown as { namespace: string | undefined }).namespace = opts.namespace || undefined;
  const agentOption = url.protocol === 'https:' ? { httpsAgent } : { httpAgent };

  async function send<T>(req: VaultRequest): Promise<T | undefined> {
    const timeoutMs = req.timeoutMs ?? opts.timeoutMs;
    const isList = req.method === 'LIST';
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.query ?? {})) query[k] = String(v);
    if (isList && listViaGet) query.list = 'true';
    const qs = new URLSearchParams(query).toString();
    const headers: Record<string, string> = { ...opts.headers };
    if (req.token) headers['X-Vault-Token'] = req.token;
    const options: Record<string, unknown> = {
      path: `/${encodePath(req.path)}${qs ? `?${qs}` : ''}`,
      method: isList && listViaGet ? 'GET' : req.method,
      headers,
      timeout: timeoutMs,
      ...agentOption,
    };
    if (req.body !== undefined) options.json = req.body;

    // axios' timeout is a socket-idle timeout; this deadline bounds the whole call whatever Vault does.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new VaultError(
              'unavailable',
              `${req.operation}: no answer from Vault within ${timeoutMs}ms`,
              undefined,
              req.operation,
            ),
          ),
        timeoutMs,
      );
    });
    try {
      const body = (await Promise.race([
        vault.request(options as { path: string; method: string }),
        deadline,
      ])) as unknown;
      return body === '' || body === null ? undefined : (body as T);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    address,
    namespace: opts.namespace || undefined,
    async request<T>(req: VaultRequest): Promise<T | undefined> {
      // The last check before a request leaves: the path as it is sent must name itself (no `..`, no
      // empty segment, nothing a URL parser reads differently), whoever built it.
      const problems = vaultPathProblems(req.path);
      if (problems.length > 0)
        throw new VaultError(
          'invalid',
          `${req.operation}: refused to send: ${problems.map((p) => p.message).join('; ')}`,
          undefined,
          req.operation,
        );
      const sensitive = [...(req.token ? [req.token] : []), ...(req.sensitive ?? [])];
      return limiter.run(async () => {
        const started = performance.now();
        const logged = { vault: address, operation: req.operation, method: req.method, path: req.path };
        /** Counts the request by its outcome; its duration in ms, for the log. */
        const finished = (outcome: Parameters<typeof metrics.request>[1]): number => {
          const seconds = (performance.now() - started) / 1000;
          metrics.request(req.operation, outcome, seconds);
          return Math.round(seconds * 1000);
        };
        try {
          const out = await send<T>(req);
          logger.debug({ ...logged, ms: finished('success') }, 'vault request');
          return out;
        } catch (err) {
          const verr = toVaultError(err, req.operation, sensitive);
          const ms = finished(errorKind(verr));
          logger.debug({ ...logged, kind: verr.kind, status: verr.status, ms }, 'vault request failed');
          throw verr;
        }
      });
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/** Percent-encode each path segment (KV keys may hold spaces or `#`), keeping `/` separators. */
export function encodePath(path: string): string {
  return path
    .replace(/^\/+/, '')
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
}
