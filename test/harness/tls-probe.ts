// A test pod's check that its TLS certificate still works (bundled by probe-bundle.ts, run by the
// vaultgate image's Node from a ConfigMap): the pod serves TLS on loopback with TLS_CRT/TLS_KEY (from a
// kubernetes.io/tls Secret through env valueFrom, so only a restart brings a new one) and, once a
// second, connects to itself verifying the chain against CA_CRT for TLS_NAME at the current time, with
// the CRL fetched from CRL_URL (OpenBao's unauthenticated pki/crl/pem) just before: a certificate that
// expired or was revoked under the running pod fails the handshake (CERT_HAS_EXPIRED, CERT_REVOKED), as
// it would for the pod's clients. Lines name the certificate by its serial (probe-loop.ts).
import { X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import { type CheckResult, probeMain, runProbeLoop } from './probe-loop.ts';

/** OpenBao's form of a serial (lowercase hex pairs joined by colons, pki/cert/<serial>). */
export function vaultSerial(c: X509Certificate): string {
  const hex = c.serialNumber.toLowerCase();
  return (hex.length % 2 ? `0${hex}` : hex).match(/../g)!.join(':');
}

export function runTlsProbe(env: NodeJS.ProcessEnv, write?: (line: string) => void): { stop: () => void } {
  const cert = env.TLS_CRT ?? '';
  const own = vaultSerial(new X509Certificate(cert));
  const server = createServer({ cert, key: env.TLS_KEY ?? '' }, (s) => s.end()).listen(0, '127.0.0.1');
  const listening = new Promise<number>((resolve) =>
    server.once('listening', () => resolve((server.address() as AddressInfo).port)),
  );
  const check = async (): Promise<CheckResult> => {
    const port = await listening;
    const res = await fetch(env.CRL_URL ?? '', { signal: AbortSignal.timeout(3000) });
    const crl = await res.text();
    if (res.status !== 200) return { ok: false, code: `CRL_HTTP_${res.status}`, error: crl.slice(0, 200) };
    return new Promise<CheckResult>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, servername: env.TLS_NAME, ca: env.CA_CRT, crl, timeout: 5000 });
      socket.once('secureConnect', () => {
        const peer = vaultSerial(socket.getPeerX509Certificate()!);
        socket.destroy();
        resolve(peer === own ? { ok: true } : { ok: false, code: 'CLIENT', error: `served serial ${peer}` });
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve({ ok: false, code: 'TIMEOUT', error: 'TLS handshake took over 5 s' });
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, code: err.code, error: err.message }));
    });
  };
  const loop = runProbeLoop({
    user: own,
    check,
    ...(env.PROBE_PORT ? { port: Number(env.PROBE_PORT) } : {}),
    ...(write ? { write } : {}),
  });
  return {
    stop: () => {
      loop.stop();
      server.close();
    },
  };
}

export function tlsProbeMain(): void {
  probeMain(() => runTlsProbe(process.env));
}
