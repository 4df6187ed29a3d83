// Builds upstream binaries with `go build` inside the wrapper modules. Pure I/O around the Go tool;
// which binaries and where they go is decided by the caller (paths.ts).
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type BinarySpec, UPSTREAM_DIR } from './catalog.ts';

export interface BuildResult {
  name: string;
  seconds: number;
  bytes: number;
}

export type Log = (line: string) => void;

function ldflags(spec: BinarySpec<string>): string {
  // -s -w as upstream release builds (kube's hack/lib/golang.sh, helm's Makefile): no symbol/DWARF tables.
  const stamps = Object.entries(spec.stamps).map(([k, v]) => `-X ${k}=${v}`);
  return ['-s', '-w', ...stamps].join(' ');
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    // stdout/stderr pass through: `go build` is silent unless something is wrong.
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed: ${signal ?? `exit ${code}`}`));
    });
  });
}

/** Builds each spec into `binDir/<name>` (via a temp name + rename, so a reader never sees half a file). */
export async function buildBinaries(
  specs: readonly BinarySpec<string>[],
  binDir: string,
  log: Log,
): Promise<BuildResult[]> {
  mkdirSync(binDir, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Static binaries as upstream releases of these components; no C toolchain needed.
    CGO_ENABLED: '0',
    // Never download another toolchain; the wrapper modules need go >= 1.24 (the `tool` directive).
    GOTOOLCHAIN: 'local',
    GOFLAGS: '-mod=readonly -buildvcs=false',
  };
  const results: BuildResult[] = [];
  for (const [i, spec] of specs.entries()) {
    const out = join(binDir, spec.name);
    const tmp = join(binDir, `.${spec.name}.tmp-${process.pid}`);
    log(`[upstream] building ${spec.name} (${i + 1}/${specs.length}) from ${spec.pkg} ...`);
    const started = performance.now();
    try {
      await run(
        'go',
        ['build', '-trimpath', '-ldflags', ldflags(spec), '-o', tmp, spec.pkg],
        join(UPSTREAM_DIR, spec.module),
        env,
      );
      renameSync(tmp, out);
    } finally {
      rmSync(tmp, { force: true });
    }
    const seconds = (performance.now() - started) / 1000;
    const bytes = statSync(out).size;
    results.push({ name: spec.name, seconds, bytes });
    log(`[upstream] built ${spec.name} in ${seconds.toFixed(1)}s (${(bytes / 2 ** 20).toFixed(1)} MiB)`);
  }
  return results;
}
