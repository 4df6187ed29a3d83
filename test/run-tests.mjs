#!/usr/bin/env node
// Runs every test file explicitly: on Node 20 a bare `node --test` finds no .ts files and exits 0.
// Fast tier: test/**/*.test.ts outside test/real/ and the whole-project static checks. Real-cluster tier: test/real/*.test.ts.
// --fast skips the real tier. Each test has a timeout (2 min fast, 10 min real), so a regression that
// hangs fails `npm test` instead of stalling it.
// Without --fast, setup comes first (test/upstream/build.ts: the upstream binaries, OpenBao, ESO, the
// one-node cluster's packages and binaries, the Go oracles), outside every per-test timeout, with progress:
// a cold machine spends its first minutes there, not inside a test. Then the fast tier runs with helm present.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out;
}
const fast = process.argv.includes('--fast');
const all = find(join(root, 'test')).sort();
// test/static/ (tsc and type-checked eslint over the whole project) runs as one process per check that
// cannot be interrupted; on a loaded 2-core machine it takes minutes, so it gets the real tier's bound.
const isStatic = (f) => f.startsWith('test/static/') && !f.endsWith('architecture.test.ts');
const tiers = [
  { name: 'fast', timeoutMs: 120_000, files: all.filter((f) => !f.startsWith('test/real/') && !isStatic(f)) },
  { name: 'static', timeoutMs: 600_000, files: all.filter(isStatic) },
  { name: 'real', timeoutMs: 600_000, files: fast ? [] : all.filter((f) => f.startsWith('test/real/')) },
].filter((t) => t.files.length > 0);
if (tiers.length === 0) {
  console.error('no test files found under test/');
  process.exit(1);
}
let status = 0;
if (!fast) {
  const started = performance.now();
  console.log('# setup: what the tiers need from outside the repository (npm run upstream)');
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'test/upstream/build.ts'], {
    cwd: root,
    stdio: 'inherit',
    env: process.env,
  });
  const took = ((performance.now() - started) / 1000).toFixed(1);
  // Exit 3: no Go toolchain, so nothing can be built; the real-cluster tests then skip loudly, or fail
  // at once under VAULTGATE_REQUIRE_REAL_TIER=1. Any other failure names its step and stops the run.
  if (r.status !== 0 && !(r.status === 3 && process.env.VAULTGATE_REQUIRE_REAL_TIER !== '1')) {
    console.error(`# setup FAILED after ${took}s (exit ${r.status ?? r.signal}): no test was run`);
    process.exit(1);
  }
  console.log(`# setup took ${took}s`);
}
for (const tier of tiers) {
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-reporter=spec',
      '--test-concurrency=2',
      `--test-timeout=${tier.timeoutMs}`,
      ...tier.files,
    ],
    {
      cwd: root,
      stdio: 'inherit',
      env: process.env,
    },
  );
  if (r.status !== 0) status = r.status ?? 1;
}
process.exit(status);
