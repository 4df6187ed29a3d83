// owner: A
// OpenBao (or Vault: same CLI and HTTP API) as `server -dev` on 127.0.0.1: in memory, unsealed, root
// token chosen by us, KV v2 at secret/. A dev server keeps NOTHING across a restart: stop()+start() gives
// an empty server, on which the harness re-enables kubernetes auth (policies, roles and secrets written
// by tests are gone, as after any dev-server restart).
//
// The root token and the token-reviewer JWT never go on a command line (visible in ps and in the
// process log header): the token is passed through the environment, the JWT through the HTTP API.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { harnessFetch } from './fetch.ts';
import type { ProcessGroup } from './processes.ts';
import { collectOutput } from './tools.ts';
import { waitFor } from './wait.ts';

export interface VaultEndpoint {
  addr: string; // http://127.0.0.1:<port>
  token: string;
}

export interface KubernetesAuthTarget {
  /** kube-apiserver URL as bao reaches it (loopback). */
  host: string;
  caPem: string;
  /** JWT of a ServiceAccount bound to system:auth-delegator: bao sends it with each TokenReview. */
  reviewerJwt: string;
  mount?: string;
}

export interface VaultResponse {
  status: number;
  body: unknown;
}

/** One HTTP call to the Vault API with the given token; JSON in, JSON (or nothing) out. */
export async function vaultRequest(
  v: VaultEndpoint,
  method: string,
  path: string,
  body?: unknown,
): Promise<VaultResponse> {
  // 30 s: a raft OpenBao's sys/init on 2 busy cores (two stacks starting at once) can take over 10 s.
  const res = await harnessFetch(`Vault ${method} /v1/${path}`, `${v.addr}/v1/${path.replace(/^\/+/, '')}`, {
    method,
    headers: { 'X-Vault-Token': v.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: 30_000,
  });
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: res.status, body: parsed };
}

async function must(v: VaultEndpoint, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await vaultRequest(v, method, path, body);
  if (res.status >= 300) {
    // Vault error bodies are {"errors":[...]}: safe to show, they never echo the token.
    throw new Error(`${method} /v1/${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body;
}

export interface BaoDevOptions {
  bin: string;
  port: number;
  token: string;
  /** Process name in the group (log file logs/<name>.log). */
  name?: string;
}

function devEnv(dir: string, token: string, addr: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: dir, // the token helper writes ~/.vault-token: keep it inside the run dir
    // OpenBao reads BAO_*, and VAULT_* for compatibility; Vault reads VAULT_*.
    BAO_DEV_ROOT_TOKEN_ID: token,
    VAULT_DEV_ROOT_TOKEN_ID: token,
    BAO_ADDR: addr,
    VAULT_ADDR: addr,
    BAO_TOKEN: token,
    VAULT_TOKEN: token,
  };
}

/** Starts `bao server -dev` and waits until /v1/sys/health reports it initialised and unsealed. */
export async function startBaoDev(group: ProcessGroup, opts: BaoDevOptions): Promise<VaultEndpoint> {
  const name = opts.name ?? 'bao';
  const addr = `http://127.0.0.1:${opts.port}`;
  const home = join(group.dir, name);
  mkdirSync(home, { recursive: true });
  const proc = group.spawn(
    name,
    opts.bin,
    ['server', '-dev', `-dev-listen-address=127.0.0.1:${opts.port}`],
    devEnv(home, opts.token, addr),
  );
  const endpoint = { addr, token: opts.token };
  try {
    await waitFor(
      async () => {
        const res = await fetch(`${addr}/v1/sys/health`, { signal: AbortSignal.timeout(2000) });
        const h = (await res.json()) as { initialized?: boolean; sealed?: boolean };
        return res.status === 200 && h.initialized === true && h.sealed === false ? true : undefined;
      },
      {
        what: `${name} dev server on ${addr}`,
        timeoutMs: 60_000,
        abort: proc.exited.then((r) => `${name} exited (${r})`),
      },
    );
  } catch (err) {
    const tail = group.logTail(name).split(opts.token).join('[REDACTED]'); // the dev banner prints the root token
    throw new Error(`${(err as Error).message}\n--- ${name} log ---\n${tail}`);
  }
  return endpoint;
}

/** Enables kubernetes auth at `mount` and points it at the apiserver (real TokenReview over loopback). */
export async function configureKubernetesAuth(v: VaultEndpoint, k: KubernetesAuthTarget): Promise<void> {
  const mount = k.mount ?? 'kubernetes';
  await must(v, 'POST', `sys/auth/${mount}`, { type: 'kubernetes' });
  await must(v, 'POST', `auth/${mount}/config`, {
    kubernetes_host: k.host,
    kubernetes_ca_cert: k.caPem,
    token_reviewer_jwt: k.reviewerJwt,
    disable_local_ca_jwt: true, // not running in a pod: no /var/run/secrets to fall back to
  });
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the bao CLI against the server; address and token come from the environment, not argv. */
export async function runBaoCli(
  bin: string,
  v: VaultEndpoint,
  args: string[],
  opts: { stdin?: string; home: string },
): Promise<CliResult> {
  const r = await collectOutput(bin, args, {
    env: devEnv(opts.home, v.token, v.addr),
    ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
  });
  return { code: r.code ?? 1, stdout: r.stdout, stderr: r.stderr };
}
