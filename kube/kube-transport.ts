// HTTP(S) to the apiserver with the KubeConfig's TLS material and auth headers, on node:http(s) directly.
// Why not client-node's generated APIs / Watch: they have no per-call timeout (a hung apiserver holds a call forever), the
// 1.4 Watch drops its own timeout signal, every call builds a fresh non-keep-alive agent, and errors carry
// raw bodies and headers in their messages. Auth stays client-node's (KubeConfig.applyToHTTPSOptions:
// token files re-read, exec plugins, client certs), so nothing about credentials is re-implemented here.
import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { createHash } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { errorFromResponse, KubeApiError, toKubeError } from './errors.ts';

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Default: the transport's `defaultTimeoutMs`. Not applied to streams (watches time out server-side). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface KubeTransportOptions {
  /** Per-call timeout for non-streaming requests. Default 30 s. */
  defaultTimeoutMs?: number;
  /** Cap on a response body. Default 64 MiB. */
  maxBodyBytes?: number;
  userAgent?: string;
}

const MAX_EVENT_LINE = 16 * 1024 * 1024;
/** How long the authenticator's answer is reused (see authOptions). */
const AUTH_REUSE_MS = 1000;

export class KubeTransport {
  private agent?: { key: string; agent: http.Agent };
  private auth?: { at: number; opts: https.RequestOptions; tlsKey: string };
  private readonly defaultTimeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly userAgent: string;

  constructor(
    private readonly kc: KubeConfig,
    opts: KubeTransportOptions = {},
  ) {
    this.defaultTimeoutMs = opts.defaultTimeoutMs ?? 30_000;
    this.maxBodyBytes = opts.maxBodyBytes ?? 64 * 1024 * 1024;
    this.userAgent = opts.userAgent ?? 'vaultgate';
  }

  /** One request/response; the parsed JSON body on 2xx, a KubeApiError otherwise. */
  async request(req: KubeRequest): Promise<unknown> {
    // A timer cleared when the answer is in, not AbortSignal.timeout: that one cannot be cancelled, so
    // after a burst of 3,000 requests 3,000 timers fired 30 s later, each making a DOMException, the
    // main cost of an idle controller.
    const timeoutCtl = new AbortController();
    const timer = setTimeout(() => timeoutCtl.abort(), req.timeoutMs ?? this.defaultTimeoutMs).unref();
    const timeout = timeoutCtl.signal;
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    try {
      const res = await this.send(req, signal);
      const text = await readBody(res, this.maxBodyBytes);
      const parsed = parseJson(text);
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) throw errorFromResponse(status, parsed);
      return parsed;
    } catch (err) {
      if (timeout.aborted && !req.signal?.aborted)
        throw new KubeApiError(
          0,
          'ClientTimeout',
          `${req.method} timed out after ${req.timeoutMs ?? this.defaultTimeoutMs} ms`,
        );
      throw toKubeError(err);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A streaming GET (watch): yields each JSON line. Ends when the server closes the stream or `signal`
   * aborts; rejects with a KubeApiError for a non-2xx answer or a broken connection.
   */
  async *lines(req: KubeRequest): AsyncGenerator<unknown> {
    const signal = req.signal;
    let res: http.IncomingMessage;
    try {
      res = await this.send(req, signal);
    } catch (err) {
      if (signal?.aborted) return;
      throw toKubeError(err);
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text = await readBody(res, this.maxBodyBytes).catch(() => '');
      throw errorFromResponse(status, parseJson(text));
    }
    // TCP keep-alive probes surface a half-open connection as an error instead of silence.
    res.socket?.setKeepAlive(true, 30_000);
    const rl = createInterface({ input: res, crlfDelay: Infinity });
    let aborted = false;
    try {
      for await (const line of rl) {
        if (!line) continue;
        if (line.length > MAX_EVENT_LINE) throw new KubeApiError(0, 'NetworkError', 'watch event too large');
        const ev = parseJson(line);
        if (ev === undefined) throw new KubeApiError(0, 'NetworkError', 'malformed watch event');
        yield ev;
      }
      // readline ends quietly on a reset socket: tell a clean end from a broken one
      if (!res.complete && !signal?.aborted)
        throw new KubeApiError(0, 'NetworkError', 'watch connection closed before the end of the stream');
    } catch (err) {
      aborted = signal?.aborted ?? false;
      if (!aborted) throw toKubeError(err);
    } finally {
      rl.close();
      res.destroy();
    }
  }

  private async send(req: KubeRequest, signal: AbortSignal | undefined): Promise<http.IncomingMessage> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new KubeApiError(0, 'NetworkError', 'kubeconfig has no current cluster');
    const base = new URL(cluster.server);
    const url = new URL(base.pathname.replace(/\/$/, '') + req.path, base);
    for (const [k, v] of Object.entries(req.query ?? {}))
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));

    const { opts, tlsKey } = await this.authOptions();
    const headers: http.OutgoingHttpHeaders = {
      ...(opts.headers as http.OutgoingHttpHeaders | undefined),
      accept: 'application/json',
      'user-agent': this.userAgent,
    };
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    let payload: Buffer | undefined;
    if (req.body !== undefined) {
      payload = Buffer.from(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = payload.length;
    }
    const isHttps = url.protocol === 'https:';
    const agent = cluster.proxyUrl ? (opts.agent as http.Agent) : this.pooledAgent(isHttps, opts, tlsKey);
    const request = (isHttps ? https.request : http.request)(url, { method: req.method, headers, agent, signal });
    return new Promise((resolve, reject) => {
      request.once('response', resolve);
      request.once('error', reject);
      request.end(payload);
    });
  }

  /**
   * KubeConfig.applyToHTTPSOptions (auth headers + TLS material, and a throwaway agent we replace), reused
   * for up to a second, with the hash of its TLS material: it decodes the certificates and asks the
   * authenticator on every call, and hashing them for the agent's key each time was most of the
   * controller's CPU per request when 1,000 ExternalSecrets sync. A rotated token or certificate is
   * picked up within that second.
   */
  private async authOptions(): Promise<{ opts: https.RequestOptions; tlsKey: string }> {
    const now = Date.now();
    if (!this.auth || now - this.auth.at >= AUTH_REUSE_MS) {
      const opts: https.RequestOptions = {};
      await this.kc.applyToHTTPSOptions(opts);
      const pem = (v: unknown): string =>
        Buffer.isBuffer(v) ? v.toString('base64') : typeof v === 'string' ? v : JSON.stringify(v ?? '');
      // the key material itself is hashed into the cache key, never kept in clear beside the agent
      const tlsKey = createHash('sha256')
        .update(JSON.stringify([pem(opts.ca), pem(opts.cert), pem(opts.key), opts.rejectUnauthorized, opts.servername]))
        .digest('hex');
      this.auth = { at: now, opts, tlsKey };
    }
    const { opts, tlsKey } = this.auth;
    return { opts: { ...opts, headers: { ...(opts.headers as http.OutgoingHttpHeaders | undefined) } }, tlsKey };
  }

  /** One keep-alive agent, rebuilt only when the TLS material changes (e.g. a rotated client cert). */
  private pooledAgent(isHttps: boolean, o: https.RequestOptions, tlsKey: string): http.Agent {
    const key = `${isHttps}|${tlsKey}`;
    if (this.agent?.key === key) return this.agent.agent;
    this.agent?.agent.destroy();
    const agent = isHttps
      ? new https.Agent({
          keepAlive: true,
          ca: o.ca,
          cert: o.cert,
          key: o.key,
          pfx: o.pfx,
          passphrase: o.passphrase,
          rejectUnauthorized: o.rejectUnauthorized,
          servername: o.servername,
        })
      : new http.Agent({ keepAlive: true });
    this.agent = { key, agent };
    return agent;
  }

  /** Close pooled connections (shutdown, tests). */
  close(): void {
    this.agent?.agent.destroy();
    this.agent = undefined;
  }
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function readBody(res: http.IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        res.destroy();
        reject(new KubeApiError(0, 'NetworkError', 'response body too large'));
        return;
      }
      chunks.push(c);
    });
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.once('error', reject);
    res.once('aborted', () => reject(new KubeApiError(0, 'NetworkError', 'connection closed mid-response')));
  });
}
