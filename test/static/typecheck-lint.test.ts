// The whole project typechecks (TypeScript 6, strict) and passes type-checked lint (no floating
// promises, no unsafe any): `npm test` is the one command CI runs, so these checks live in it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

const root = new URL('../..', import.meta.url).pathname;

function run(bin: string, args: string[]): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [`${root}node_modules/${bin}`, ...args], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

test('tsc --noEmit reports no type errors', () => {
  const r = run('typescript/bin/tsc', ['-p', '.', '--noEmit']);
  assert.equal(r.status, 0, r.output.slice(0, 20_000));
});

test('eslint (typescript-eslint type-checked rules) reports no problems', () => {
  const r = run('eslint/bin/eslint.js', ['.', '--max-warnings', '0']);
  assert.equal(r.status, 0, r.output.slice(0, 20_000));
});

test('prettier: every TypeScript and JavaScript source is formatted (npm run format)', () => {
  const r = run('prettier/bin/prettier.cjs', ['--check', '--log-level', 'warn', '**/*.{ts,mjs,js}']);
  assert.equal(r.status, 0, `unformatted (run \`npm run format\`):\n${r.output.slice(0, 20_000)}`);
});
