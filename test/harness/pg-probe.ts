// The program a test pod runs (bundled by pg-probe-script.ts into one file for the vaultgate image's
// Node): it logs in to PostgreSQL with the credential it was started with (PGUSER/PGPASSWORD, from a
// Secret through env valueFrom, so only a restart brings a new one) once a second, runs a query and
// prints one JSON line per attempt on stdout: {"at","ok","user"} and, on failure, PostgreSQL's SQLSTATE
// and message (never the password). Ready (GET /ready on PROBE_PORT) while its last login succeeded;
// SIGTERM ends it at once, so a replaced pod stops using its credential when the kubelet stops it (the
// loop, readiness and signals: probe-loop.ts).
import { pgQuery } from './pg-wire.ts';
import { probeMain, runProbeLoop } from './probe-loop.ts';

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
  return runProbeLoop({
    user: login.user,
    intervalMs: Number(env.PROBE_INTERVAL_MS ?? 1000),
    ...(env.PROBE_PORT ? { port: Number(env.PROBE_PORT) } : {}),
    write,
    check: async () => {
      const r = await pgQuery(login, 'SELECT current_user');
      if (!r.ok) return { ok: false, code: r.code, error: r.message };
      if (r.rows[0]?.[0] !== login.user) return { ok: false, code: 'CLIENT', error: 'logged in as another user' };
      return { ok: true };
    },
  });
}

/** The pod's entry point: stop on SIGTERM/SIGINT and exit (probe-loop.ts probeMain). */
export function pgProbeMain(): void {
  probeMain(() => runPgProbe(process.env));
}
