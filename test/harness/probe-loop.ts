// The loop a credential probe runs in a test pod (tls-probe.ts, token-probe.ts; bundled by
// probe-bundle.ts): one check a second with the credential the pod was started with, one JSON line per
// check on stdout ({"at","ok","user","ms"} and, on failure, a code and message, never the credential);
// Ready (GET /ready on PROBE_PORT) while the last check passed; SIGTERM ends it at once, so a replaced pod
// stops using its credential when the kubelet stops it. The same line shape as pg-probe.ts.
import { createServer } from 'node:http';
import type { ProbeLine } from './pg-probe.ts';

export interface CheckResult {
  ok: boolean;
  code?: string;
  error?: string;
}

export interface ProbeLoop {
  /** What the lines name as the credential: a certificate serial, a ServiceAccount name (never a secret). */
  user: string;
  check: () => Promise<CheckResult>;
  intervalMs?: number;
  /** Readiness port; none when undefined. */
  port?: number;
  write?: (line: string) => void;
}

export function runProbeLoop(p: ProbeLoop): { stop: () => void } {
  const write = p.write ?? ((l: string) => process.stdout.write(l));
  const intervalMs = p.intervalMs ?? 1000;
  let lastOk = false;
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  const server =
    p.port === undefined
      ? undefined
      : createServer((req, res) => {
          res.writeHead(req.url === '/ready' && lastOk ? 200 : 503).end();
        }).listen(p.port);
  const attempt = async (): Promise<void> => {
    const t = performance.now();
    const r = await p.check().catch((err: unknown) => ({ ok: false, code: 'PROBE', error: String(err) }));
    if (!running) return;
    lastOk = r.ok;
    const line: ProbeLine = {
      at: new Date().toISOString(),
      ok: r.ok,
      user: p.user,
      ms: Math.round(performance.now() - t),
    };
    if (!r.ok) Object.assign(line, { code: r.code, error: r.error });
    write(`${JSON.stringify(line)}\n`);
    timer = setTimeout(() => void attempt(), Math.max(0, intervalMs - (performance.now() - t)));
  };
  const stop = (): void => {
    running = false;
    clearTimeout(timer);
    server?.close();
  };
  void attempt();
  return { stop };
}

/** A pod's entry point: stop on SIGTERM/SIGINT and exit (as PID 1, Node ignores SIGTERM without a handler). */
export function probeMain(start: () => { stop: () => void }): void {
  const probe = start();
  for (const sig of ['SIGTERM', 'SIGINT'] as const)
    process.once(sig, () => {
      probe.stop();
      process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), stopped: sig })}\n`, () =>
        process.exit(0),
      );
    });
}
