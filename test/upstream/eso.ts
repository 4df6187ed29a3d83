// The real External Secrets Operator, for side-by-side tests: `github.com/external-secrets/external-secrets`
// v0.16.2 (the newest version the Go module proxy serves whole) built from the wrapper module
// test/upstream/eso/ (ESO's one replace directive copied: its Sprig fork), into the upstream cache,
// ${XDG_CACHE_HOME:-~/.cache}/vaultgate/upstream/eso-<hash>/eso. Its CRDs come from the same module
// (deploy/crds/bundle.yaml), so ESO and its CRDs are always the same version.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { upstreamCacheRoot, withLock } from './paths.ts';

export const ESO_VERSION = 'v0.16.2';
export const ESO_MODULE = 'github.com/external-secrets/external-secrets';
export const ESO_SRC = join(dirname(fileURLToPath(import.meta.url)), 'eso');

const goEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  CGO_ENABLED: '0',
  GOTOOLCHAIN: 'local',
  GOFLAGS: '-mod=readonly -buildvcs=false',
});

export function esoKey(): string {
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum']) h.update(`${f}\0`).update(readFileSync(join(ESO_SRC, f)));
  return `eso-${ESO_VERSION}-${h.digest('hex').slice(0, 12)}`;
}

export function esoPath(): string {
  return join(upstreamCacheRoot(), esoKey(), 'eso');
}

export function esoAvailable(): boolean {
  return existsSync(esoPath());
}

/** ESO's binary for a test: never built inside a test (setup.ts does it first); a missing one fails at once. */
export function requireEso(): string {
  const out = esoPath();
  if (!existsSync(out))
    throw new Error(
      `ESO ${ESO_VERSION} is not built (expected at ${out}); build it with \`npm run upstream\` (\`npm test\` does it before any test runs)`,
    );
  return out;
}

/**
 * Builds ESO if it is not in the cache yet (about 3 minutes on 2 idle cores); returns the binary's path.
 * `npm run upstream` builds it with the other binaries; test files that call this in parallel build it
 * once (the same lock as the other builds, keyed by ESO's cache key).
 */
export async function ensureEso(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<string> {
  const out = esoPath();
  if (existsSync(out)) return out;
  await withLock(esoKey(), log, () => buildEso(out, log));
  return out;
}

async function buildEso(out: string, log: (line: string) => void): Promise<void> {
  if (existsSync(out)) return; // built by the process we waited for
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.tmp-${process.pid}`;
  log(`[upstream] building ESO ${ESO_VERSION} into ${out} ...`);
  const started = performance.now();
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', tmp, ESO_MODULE], {
        cwd: ESO_SRC,
        env: goEnv(),
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        code === 0 ? resolve() : reject(new Error(`go build ${ESO_MODULE} failed: ${signal ?? `exit ${code}`}`)),
      );
    });
    renameSync(tmp, out); // atomic: a parallel test never runs half a binary
  } finally {
    rmSync(tmp, { force: true });
  }
  log(`[upstream] built ESO in ${((performance.now() - started) / 1000).toFixed(1)}s`);
}

/** ESO's own CRDs (deploy/crds/bundle.yaml of the module the binary was built from). */
export function esoCrdsYaml(): string {
  const r = spawnSync('go', ['list', '-m', '-f', '{{.Dir}}', ESO_MODULE], {
    cwd: ESO_SRC,
    env: goEnv(),
    encoding: 'utf8',
    timeout: 120_000,
  });
  const dir = r.stdout?.trim();
  if (r.status !== 0 || !dir) throw new Error(`cannot locate ${ESO_MODULE} in the Go module cache: ${r.stderr}`);
  return readFileSync(join(dir, 'deploy', 'crds', 'bundle.yaml'), 'utf8');
}
