// `npm run upstream`: builds the missing upstream binaries into the cache and lists what is there.
// A second run with everything cached only stats files.
import { statSync } from 'node:fs';
import { BINARIES } from './catalog.ts';
import { baoAvailable, binaryPath, ensureUpstream, goAvailable, missingBinaries, upstreamBinDir } from './paths.ts';

const started = performance.now();
if (missingBinaries().length > 0 && !goAvailable()) {
  console.error(`[upstream] missing ${missingBinaries().join(', ')} and no Go toolchain: cannot build (the real-cluster tier will be skipped)`);
  process.exit(1);
}
await ensureUpstream();
console.log(`[upstream] binaries in ${upstreamBinDir()}`);
for (const b of BINARIES) {
  console.log(`  ${b.name.padEnd(24)} ${(statSync(binaryPath(b.name)).size / 2 ** 20).toFixed(1).padStart(6)} MiB`);
}
console.log(`  ${'bao'.padEnd(24)} ${baoAvailable() ? binaryPath('bao') : 'not available (OpenBao refused by the Go proxy; set VAULTGATE_BAO_BIN)'}`);
console.log(`[upstream] ready in ${((performance.now() - started) / 1000).toFixed(1)}s`);
