#!/usr/bin/env node
// Runs every test file explicitly: on Node 20 a bare `node --test` finds no .ts files and exits 0.
// Fast tier: test/**/*.test.ts outside test/real/. Real-cluster tier: test/real/*.test.ts.
// --fast skips the real tier.
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
const files = find(join(root, 'test')).sort().filter((f) => !(fast && f.startsWith('test/real/')));
if (files.length === 0) {
  console.error('no test files found under test/');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files], {
  cwd: root,
  stdio: 'inherit',
  env: process.env,
});
process.exit(r.status ?? 1);
