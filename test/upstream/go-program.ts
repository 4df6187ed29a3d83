// A small Go program of the test tier (an oracle: Go answers what Go code would), built on demand into
// the upstream cache, ${XDG_CACHE_HOME:-~/.cache}/vaultgate/upstream/<name>-<hash>/<name>, keyed by a hash
// of its sources and the Go version: a change rebuilds, an unchanged program costs no Go build.
// It reads one JSON request per line on stdin and answers one JSON line each, in order.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { upstreamCacheRoot } from './paths.ts';

export interface GoProgram<Req, Ans> {
  /** Where the binary for today's sources lives (built or not). */
  path(): string;
  /** Builds it if it is not in the cache yet; returns the binary's path. */
  ensure(log?: (line: string) => void): Promise<string>;
  /** Asks every request in one process run; answers in order. */
  ask(requests: readonly Req[]): Promise<Ans[]>;
}

export function goProgram<Req, Ans>(opts: {
  name: string;
  srcDir: string;
  sources: readonly string[];
  buildNote?: string;
}): GoProgram<Req, Ans> {
  const { name, srcDir } = opts;
  const path = (): string => {
    const h = createHash('sha256');
    for (const f of opts.sources) h.update(`${f}\0`).update(readFileSync(join(srcDir, f)));
    h.update(spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8', timeout: 30_000 }).stdout?.trim() ?? '');
    return join(upstreamCacheRoot(), `${name}-${h.digest('hex').slice(0, 12)}`, name);
  };
  const ensure = async (log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<string> => {
    const out = path();
    if (existsSync(out)) return out;
    mkdirSync(dirname(out), { recursive: true });
    const tmp = `${out}.tmp-${process.pid}`;
    log(`[${name}] building ${out}${opts.buildNote ? ` (${opts.buildNote})` : ''}`);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CGO_ENABLED: '0',
      GOTOOLCHAIN: 'local',
      GOFLAGS: '-mod=readonly -buildvcs=false',
    };
    try {
      await new Promise<void>((resolve, reject) => {
        const child = spawn('go', ['build', '-trimpath', '-o', tmp, '.'], {
          cwd: srcDir,
          env,
          stdio: ['ignore', 'inherit', 'inherit'],
        });
        child.once('error', reject);
        child.once('exit', (code, signal) =>
          code === 0 ? resolve() : reject(new Error(`go build of ${name} failed: ${signal ?? `exit ${code}`}`)),
        );
      });
      renameSync(tmp, out); // atomic: parallel test files never run half a binary
    } finally {
      rmSync(tmp, { force: true });
    }
    return out;
  };
  const ask = async (requests: readonly Req[]): Promise<Ans[]> => {
    const bin = await ensure();
    const res = spawnSync(bin, [], {
      input: requests.map((r) => JSON.stringify(r)).join('\n') + '\n',
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      timeout: 120_000,
    });
    if (res.status !== 0) throw new Error(`${name} failed: ${res.error?.message ?? res.stderr}`);
    const lines = res.stdout.split('\n').filter((l) => l !== '');
    if (lines.length !== requests.length)
      throw new Error(`${name} answered ${lines.length} of ${requests.length} requests`);
    return lines.map((l) => JSON.parse(l) as Ans);
  };
  return { path, ensure, ask };
}
