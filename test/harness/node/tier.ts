// Whether the one-node cluster can run: the real tier's binaries (realTier()), then the node's Debian
// packages and binaries, which setup (`npm run upstream`, the first phase of `npm test`) installs; a test
// never builds them. Without root or Linux the node tests skip loudly; with VAULTGATE_REQUIRE_REAL_TIER=1
// (CI) they fail, as they do when setup has not installed what the node needs.
import { REQUIRE_ENV, type RealTier, realTier } from '../real-tier.ts';
import { nodeSkipReason } from './cluster.ts';

export async function nodeTier(): Promise<RealTier> {
  const base = await realTier();
  if (base.skip) return base;
  const reason = nodeSkipReason();
  if (!reason) return { skip: false };
  const msg = `one-node cluster tier SKIPPED: ${reason}`;
  if (process.env[REQUIRE_ENV] === '1') throw new Error(`${msg}; ${REQUIRE_ENV}=1 requires this tier`);
  process.stderr.write(`\n${'='.repeat(78)}\n  ${msg}\n${'='.repeat(78)}\n\n`);
  return { skip: msg };
}
