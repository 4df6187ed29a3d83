#!/usr/bin/env node
// Runs every test file explicitly: on Node 20 a bare `node --test` finds no .ts files and exits 0.
// Fast tier: test/**/*.test.ts outside test/real/ and the whole-project static checks. Real-cluster tier: test/real/*.test.ts.
// --fast skips the real tier. Each test has a timeout (2 min fast, 10 min real), so a regression that
// hangs fails `npm test` instead of stalling it.
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
for (const tier of tiers) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', `--test-timeout=${tier.timeoutMs}`, ...tier.files], {
    cwd: root,
    stdio: 'inherit',
    env: process.env,
  });
  if (r.status !== 0) status = r.status ?? 1;
}
process.exit(status);
