// A test pod's check that its Kubernetes token still works (bundled by probe-bundle.ts, run by the
// vaultgate image's Node from a ConfigMap): once a second a GET of KUBE_PATH on the apiserver KUBE_SERVER
// (verified against KUBE_CA) with KUBE_TOKEN, a token minted by OpenBao's kubernetes secrets engine (from
// a Secret through env valueFrom, so only a restart brings a new one). Anything but 200 fails: 401 once
// the token's ServiceAccount is deleted (its lease revoked) or the token expired, 403 when its generated
// Role is gone. Lines name the credential by its ServiceAccount, KUBE_USER (probe-loop.ts).
import { request } from 'node:https';
import { type CheckResult, probeMain, runProbeLoop } from './probe-loop.ts';

export function runTokenProbe(env: NodeJS.ProcessEnv, write?: (line: string) => void): { stop: () => void } {
  const url = new URL(env.KUBE_PATH ?? '/', env.KUBE_SERVER);
  const check = (): Promise<CheckResult> =>
    new Promise<CheckResult>((resolve) => {
      const req = request(
        url,
        { ca: env.KUBE_CA, headers: { authorization: `Bearer ${env.KUBE_TOKEN ?? ''}` }, timeout: 5000 },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => {
            if (res.statusCode === 200) return resolve({ ok: true });
            let message = body.slice(0, 200);
            try {
              const status = JSON.parse(body) as { message?: unknown };
              if (typeof status.message === 'string') message = status.message;
            } catch {
              // not a Status object: the body's start
            }
            resolve({ ok: false, code: `HTTP_${res.statusCode}`, error: message });
          });
        },
      );
      req.once('timeout', () => req.destroy(new Error('no answer in 5 s')));
      req.once('error', (err: NodeJS.ErrnoException) =>
        resolve({ ok: false, code: err.code ?? 'ERROR', error: err.message }),
      );
      req.end();
    });
  return runProbeLoop({
    user: env.KUBE_USER ?? '',
    check,
    ...(env.PROBE_PORT ? { port: Number(env.PROBE_PORT) } : {}),
    ...(write ? { write } : {}),
  });
}

export function tokenProbeMain(): void {
  probeMain(() => runTokenProbe(process.env));
}
