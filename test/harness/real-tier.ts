// owner: A
// Decides whether a real-cluster suite runs: binaries cached → run; missing with Go → build them now
// (the first run takes many minutes); no Go → skip loudly, or fail when VAULTGATE_REQUIRE_REAL_TIER=1
// (set by .ci/run, where a silently skipped tier would look green).
import { baoAvailable, binaryPath, ensureUpstream, goAvailable, missingBinaries } from '../upstream/paths.ts';

export interface RealTier {
  /** `false` to run, or the reason to skip: pass straight to describe(name, { skip }). */
  skip: false | string;
}

export const REQUIRE_ENV = 'VAULTGATE_REQUIRE_REAL_TIER';

function banner(lines: string[]): void {
  const bar = '='.repeat(78);
  process.stderr.write(`\n${bar}\n${lines.map((l) => `  ${l}`).join('\n')}\n${bar}\n\n`);
}

export async function realTier(): Promise<RealTier> {
  const missing = missingBinaries();
  if (missing.length === 0) return { skip: false };
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
  return { skip: false };
}

let baoAnnounced = false;

/**
 * `false` when a bao (or vault) binary is available, else why Vault-backed checks are skipped. Not an
 * error even with VAULTGATE_REQUIRE_REAL_TIER=1: the Go proxy refuses OpenBao v2.6.2's pseudo-version,
 * so on the build machines Vault stays simulated (test/sim/vault.ts) unless VAULTGATE_BAO_BIN is set.
 */
export function baoSkipReason(): false | string {
  if (baoAvailable()) return false;
  const reason = `no bao binary at ${binaryPath('bao')} (OpenBao v2.6.2 is refused by the Go module proxy; set VAULTGATE_BAO_BIN to a bao or vault binary)`;
  if (!baoAnnounced) banner([`real-cluster tier: OpenBao checks SKIPPED: ${reason}`]);
  baoAnnounced = true;
  return reason;
}
