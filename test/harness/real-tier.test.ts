// A real-tier test never waits for a build: with the binaries missing it fails at once, naming them and the
// command that builds them (before, it started the build inside its own 10-minute timeout and timed out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const realTierModule = join(import.meta.dirname, 'real-tier.ts');

function realTierIn(env: NodeJS.ProcessEnv): { status: number | null; stderr: string; ms: number } {
  const started = performance.now();
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { realTier } from ${JSON.stringify(realTierModule)}; await realTier();`,
    ],
    {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { status: r.status, stderr: r.stderr, ms: performance.now() - started };
}

void test('with VAULTGATE_REQUIRE_REAL_TIER=1 and an empty upstream directory, realTier() fails at once with the command', () => {
  const empty = mkdtempSync(join(tmpdir(), 'vaultgate-empty-upstream-'));
  try {
    const r = realTierIn({ VAULTGATE_UPSTREAM_DIR: empty, VAULTGATE_REQUIRE_REAL_TIER: '1', VAULTGATE_BAO_BIN: '' });
    assert.notEqual(r.status, 0);
    assert.match(
      r.stderr,
      /upstream binaries missing: etcd, kube-apiserver, kubectl, kube-controller-manager, helm, bao; build them with `npm run upstream`/,
    );
    assert.ok(r.ms < 30_000, `took ${r.ms} ms`);
    assert.deepEqual(readdirSync(empty), [], 'nothing was built');
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});
