// The program a test pod runs (bundled by pg-probe-script.ts into one file for the vaultgate image's
// Node): it logs in to PostgreSQL with the credential it was started with (PGUSER/PGPASSWORD, from a
// Secret through env valueFrom, so only a restart brings a new one) once a second, runs a query and
// prints one JSON line per attempt on stdout: {"at","ok","user"} and, on failure, PostgreSQL's SQLSTATE
// and message (never the password). Ready (GET /ready on PROBE_PORT) while its last login succeeded;
// SIGTERM ends it at once, so a replaced pod stops using its credential when the kubelet stops it.
import { createServer } from 'node:http';
import { pgQuery } from './pg-wire.ts';

export interface ProbeLine {
  at: string;
  ok: boolean;
  user: string;
  code?: string;
  error?: string;
  ms: number;
}

export function runPgProbe(
  env: NodeJS.ProcessEnv,
  write: (line: string) => void = (l) => process.stdout.write(l),
): { stop: () => void } {
  const login = {
    host: env.PGHOST ?? '127.0.0.1',
    port: Number(env.PGPORT ?? 5432),
    user: env.PGUSER ?? '',
    password: env.PGPASSWORD ?? '',
    database: env.PGDATABASE ?? 'postgres',
    timeoutMs: 5000,
  };
  const intervalMs = Number(env.PROBE_INTERVAL_MS ?? 1000);
  let lastOk = false;
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  const server = env.PROBE_PORT
    ? createServer((req, res) => {
        res.writeHead(req.url === '/ready' && lastOk ? 200 : 503).end();
      }).listen(Number(env.PROBE_PORT))
    : undefined;
  const attempt = async (): Promise<void> => {
    const t = performance.now();
    const r = await pgQuery(login, 'SELECT current_user');
    if (!running) return;
    lastOk = r.ok && r.rows[0]?.[0] === login.user;
    const line: ProbeLine = {
      at: new Date().toISOString(),
      ok: lastOk,
      user: login.user,
      ms: Math.round(performance.now() - t),
    };
    if (!r.ok) Object.assign(line, { code: r.code, error: r.message });
    else if (!lastOk) Object.assign(line, { code: 'CLIENT', error: 'logged in as another user' });
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

/** The pod's entry point: stop on SIGTERM/SIGINT and exit (as PID 1, Node ignores SIGTERM without a handler). */
export function pgProbeMain(): void {
  const probe = runPgProbe(process.env);
  for (const sig of ['SIGTERM', 'SIGINT'] as const)
    process.once(sig, () => {
      probe.stop();
      process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), stopped: sig })}\n`, () =>
        process.exit(0),
      );
    });
}
