// A throwaway PostgreSQL 15 cluster on loopback, for the database secrets engine: initdb as the `postgres`
// user (initdb and postgres refuse root) into a temp dir, the server on a random 127.0.0.1 port (its unix
// socket inside the dir; optionally also on the node IP for pods), in a harness ProcessGroup (killed on stop, on exit and by the reaper, which also
// removes the dir). The superuser's password is random and never goes on a command line.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, chownSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missingPostgresPackages, POSTGRES_BIN_DIR, postgresProgram } from '../upstream/postgresql.ts';
import { freePort } from './ports.ts';
import { ProcessGroup } from './processes.ts';
import { REQUIRE_ENV } from './real-tier.ts';
import type { VaultEndpoint } from './vault.ts';
import { vaultRequest } from './vault.ts';
import { waitFor } from './wait.ts';

const OS_USER = 'postgres';

export interface PostgresServer {
  host: string;
  port: number;
  /** The superuser OpenBao's database engine connects as. */
  superuser: string;
  superuserPassword: string;
  dir: string;
  /** psql -c `sql` as `user` over TCP; never throws on a failed login or query (the result says so). */
  query(
    sql: string,
    login?: { user: string; password: string },
  ): Promise<{ ok: boolean; stdout: string; stderr: string }>;
  /** Names of the login roles other than the superuser (what the engine created and has not dropped). */
  loginRoles(): Promise<string[]>;
  logTail(lines?: number): string;
  /** Kills the server and removes the dir; idempotent. */
  stop(): Promise<void>;
}

/**
 * Runs a program with no stdin (tools.ts' collectOutput writes to stdin, and pg_isready/psql often exit
 * before that write: EPIPE) and collects its output.
 */
export function runNoStdin(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 30_000,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('error', reject);
    child.once('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
  });
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const [u, g] = await Promise.all([runNoStdin('id', ['-u', OS_USER]), runNoStdin('id', ['-g', OS_USER])]);
  if (u.code !== 0 || g.code !== 0)
    throw new Error(`no OS user ${OS_USER} (the postgresql package creates it): ${u.stderr.trim()}`);
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

export interface PostgresOptions {
  /** The address the harness and OpenBao connect to (default 127.0.0.1). */
  host?: string;
  /**
   * A second listener for clients elsewhere, e.g. pods of the one-node cluster: PostgreSQL also listens on
   * `address` (it must exist on the host: start the node first) and admits TCP logins from `cidr` (SCRAM).
   */
  clients?: { address: string; cidr: string };
}

export async function startPostgres(opts: PostgresOptions = {}): Promise<PostgresServer> {
  const host = opts.host ?? '127.0.0.1';
  const dir = mkdtempSync(join(tmpdir(), 'vaultgate-pg-'));
  const group = new ProcessGroup(dir);
  try {
    const { uid, gid } = await postgresIds();
    chmodSync(dir, 0o755);
    const data = join(dir, 'data');
    const sock = join(dir, 'sock');
    mkdirSync(data, { mode: 0o700 });
    mkdirSync(sock, { mode: 0o700 });
    chownSync(data, uid, gid);
    chownSync(sock, uid, gid);
    const superuser = 'vaultgate_admin';
    const superuserPassword = randomBytes(18).toString('base64url');
    const pwfile = join(dir, 'pwfile');
    writeFileSync(pwfile, `${superuserPassword}\n`, { mode: 0o600 });
    chownSync(pwfile, uid, gid);
    const asPostgres = (prog: string, args: string[]): [string, string[]] => [
      'setpriv',
      [`--reuid=${uid}`, `--regid=${gid}`, '--init-groups', postgresProgram(prog), ...args],
    ];
    // Local (socket) connections trusted for the harness's own checks; TCP needs a password (SCRAM), as
    // OpenBao's connection and the credentials it mints use.
    const [initCmd, initArgs] = asPostgres('initdb', [
      '-D',
      data,
      '-U',
      superuser,
      `--pwfile=${pwfile}`,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    const init = await runNoStdin(initCmd, initArgs, {
      env: { ...process.env, LC_ALL: 'C.UTF-8' },
      timeoutMs: 120_000,
    });
    if (init.code !== 0) throw new Error(`initdb failed (exit ${init.code}): ${init.stderr.trim().slice(-2000)}`);
    // initdb's pg_hba.conf admits loopback only; first match wins, so the line goes after its own.
    if (opts.clients) appendFileSync(join(data, 'pg_hba.conf'), `host all all ${opts.clients.cidr} scram-sha-256\n`);
    const port = await freePort();
    const [pgCmd, pgArgs] = asPostgres('postgres', [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      sock,
      '-c',
      `listen_addresses=${[host, ...(opts.clients ? [opts.clients.address] : [])].join(',')}`,
      '-c',
      'fsync=off',
      '-c',
      'max_connections=200',
    ]);
    const proc = group.spawn('postgres', pgCmd, pgArgs, { ...process.env, LC_ALL: 'C.UTF-8' });
    await waitFor(
      async () => {
        const r = await runNoStdin(postgresProgram('pg_isready'), ['-h', host, '-p', String(port), '-t', '2'], {
          timeoutMs: 5_000,
        });
        return r.code === 0 ? true : undefined;
      },
      {
        what: `PostgreSQL on ${host}:${port}`,
        timeoutMs: 60_000,
        intervalMs: 100,
        abort: proc.exited.then((why) => `postgres exited (${why})\n${group.logTail('postgres')}`),
      },
    );

    const query: PostgresServer['query'] = async (sql, login = { user: superuser, password: superuserPassword }) => {
      const r = await runNoStdin(
        postgresProgram('psql'),
        [
          '-h',
          host,
          '-p',
          String(port),
          '-U',
          login.user,
          '-d',
          'postgres',
          '-X',
          '-tA',
          '-v',
          'ON_ERROR_STOP=1',
          '-c',
          sql,
        ],
        {
          env: {
            PATH: `${POSTGRES_BIN_DIR}:${process.env.PATH ?? ''}`,
            PGPASSWORD: login.password,
            PGCONNECT_TIMEOUT: '5',
            LC_ALL: 'C.UTF-8',
          },
          timeoutMs: 15_000,
        },
      );
      return { ok: r.code === 0, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
    };
    return {
      host,
      port,
      superuser,
      superuserPassword,
      dir,
      query,
      async loginRoles() {
        const r = await query(
          `SELECT rolname FROM pg_roles WHERE rolcanlogin AND rolname <> '${superuser}' ORDER BY 1`,
        );
        if (!r.ok) throw new Error(`listing roles failed: ${r.stderr}`);
        return r.stdout ? r.stdout.split('\n') : [];
      },
      logTail: (lines = 30) => group.logTail('postgres', lines),
      stop: () => group.stopAll(),
    };
  } catch (err) {
    await group.stopAll();
    throw err;
  }
}

export interface DatabaseRole {
  /** Engine mount (default `database`). */
  mount?: string;
  /** Connection name (default `pg`). */
  connection?: string;
  role: string;
  /** Vault durations: seconds or "1m" etc. */
  defaultTtl: string | number;
  maxTtl: string | number;
}

/**
 * Enables OpenBao's `database` engine at `mount` (once), points connection `connection` at the cluster with
 * postgresql-database-plugin and writes `role`: each credential is a LOGIN role valid until its lease
 * expires (renewals move VALID UNTIL), dropped on revocation.
 */
export async function configureDatabaseEngine(
  v: VaultEndpoint,
  pg: PostgresServer,
  r: DatabaseRole,
): Promise<{ credsPath: string }> {
  const mount = r.mount ?? 'database';
  const connection = r.connection ?? 'pg';
  const must = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await vaultRequest(v, method, path, body);
    if (res.status >= 300) throw new Error(`${method} /v1/${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const mounts = (await must('GET', 'sys/mounts')) as { data?: Record<string, unknown> };
  if (!mounts.data?.[`${mount}/`]) await must('POST', `sys/mounts/${mount}`, { type: 'database' });
  await must('POST', `${mount}/config/${connection}`, {
    plugin_name: 'postgresql-database-plugin',
    connection_url: `postgresql://{{username}}:{{password}}@${pg.host}:${pg.port}/postgres?sslmode=disable`,
    username: pg.superuser,
    password: pg.superuserPassword,
    allowed_roles: '*',
    verify_connection: true,
  });
  await must('POST', `${mount}/roles/${r.role}`, {
    db_name: connection,
    creation_statements: [
      `CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';`,
      'GRANT pg_read_all_data TO "{{name}}";',
    ],
    default_ttl: r.defaultTtl,
    max_ttl: r.maxTtl,
  });
  return { credsPath: `${mount}/creds/${r.role}` };
}

/**
 * `false` when PostgreSQL's programs are installed, else why database checks are skipped; with
 * VAULTGATE_REQUIRE_REAL_TIER=1 a missing PostgreSQL fails instead (`npm run upstream` installs it).
 */
export function postgresSkipReason(): false | string {
  const missing = missingPostgresPackages();
  if (missing.length === 0) return false;
  const reason = `PostgreSQL missing (${missing.join(', ')}); \`npm run upstream\` installs it with apt-get`;
  if (process.env[REQUIRE_ENV] === '1') throw new Error(`${reason}; ${REQUIRE_ENV}=1 requires it`);
  return reason;
}
