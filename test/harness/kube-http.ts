// Minimal JSON client for the test apiserver (admin client cert), for the few calls the harness makes
// itself: readiness, TokenRequest, dry-run probes. Tests use client-node or kubectl instead.
import { request } from 'node:https';

export interface KubeCredentials {
  server: string; // https://127.0.0.1:<port>
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** Acting as a ServiceAccount: its TokenRequest token as a bearer token, no client certificate. */
export interface BearerCredentials {
  server: string;
  caPem: string;
  token: string;
}

export interface KubeResponse {
  status: number;
  body: unknown;
  text: string;
}

export function kubeRequest(
  creds: KubeCredentials | BearerCredentials,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<KubeResponse> {
  const url = new URL(path, creds.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        ca: creds.caPem,
        ...('token' in creds ? {} : { cert: creds.certPem, key: creds.keyPem }),
        agent: false, // no pooled sockets left to keep node alive after the suite
        timeout: timeoutMs,
        headers: {
          accept: 'application/json',
          ...('token' in creds ? { authorization: `Bearer ${creds.token}` } : {}),
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // plain-text answers (healthz) stay text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The message of a metav1.Status body, for errors. */
export function statusMessage(res: KubeResponse): string {
  const b = res.body as { message?: unknown } | undefined;
  return typeof b?.message === 'string' ? b.message : res.text.slice(0, 300);
}
