// `npm run upstream`: builds the missing upstream binaries into the cache and lists what is there.
// A second run with everything cached only stats files.
import { statSync } from 'node:fs';
import { BINARIES } from './catalog.ts';
import { ESO_VERSION, esoPath } from './eso.ts';
import { ensureNodeUpstream, NODE_BINARIES, nodeBinaryPath, nodePackageVersions, nodeUnsupportedReason } from './node-binaries.ts';
import { baoVersion } from './openbao.ts';
import { binaryPath, ensureUpstream, goAvailable, missingBinaries, upstreamBinDir } from './paths.ts';

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
console.log(`  ${'bao'.padEnd(24)} ${(statSync(binaryPath('bao')).size / 2 ** 20).toFixed(1).padStart(6)} MiB  ${baoVersion(binaryPath('bao')).line}  (${binaryPath('bao')})`);
console.log(`  ${'eso'.padEnd(24)} ${(statSync(esoPath()).size / 2 ** 20).toFixed(1).padStart(6)} MiB  External Secrets Operator ${ESO_VERSION}  (${esoPath()})`);
// The one-node cluster (test/real/pods.test.ts): Debian's containerd, runc, CNI plugins, nft, and the node binaries.
const nodeUnsupported = nodeUnsupportedReason();
if (nodeUnsupported) {
  console.log(`  one-node cluster: not set up here (${nodeUnsupported})`);
} else {
  await ensureNodeUpstream();
  for (const b of NODE_BINARIES) console.log(`  ${b.name.padEnd(24)} ${(statSync(nodeBinaryPath(b.name)).size / 2 ** 20).toFixed(1).padStart(6)} MiB  (${nodeBinaryPath(b.name)})`);
  console.log(`  ${'node packages'.padEnd(24)} ${nodePackageVersions().join('; ')}`);
}
console.log(`[upstream] ready in ${((performance.now() - started) / 1000).toFixed(1)}s`);
