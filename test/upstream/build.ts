// `npm run upstream` (and the first phase of `npm test`): builds or installs whatever the tiers need that is
// missing (setup.ts, with progress), then lists what is there. With everything cached it only stats files.
// Exit 1: a step failed (the message names it); exit 3: Go is missing, so nothing can be built here.
import { statSync } from 'node:fs';
import { BINARIES } from './catalog.ts';
import { ESO_VERSION, esoPath } from './eso.ts';
import { NODE_BINARIES, nodeBinaryPath, nodePackageVersions, nodeUnsupportedReason } from './node-binaries.ts';
import { baoVersion } from './openbao.ts';
import { binaryPath, goAvailable, upstreamBinDir } from './paths.ts';
import { formatDuration, missingSetup, runSetup, setupSteps } from './setup.ts';

const missing = missingSetup();
const needGo = setupSteps()
  .filter((s) => s.needsGo && missing.includes(s.name))
  .map((s) => s.name);
if (needGo.length > 0 && !goAvailable()) {
  console.error(
    `[upstream] missing ${needGo.join(', ')} and no Go toolchain on PATH to build them: install Go >= 1.24, then \`npm run upstream\``,
  );
  process.exit(3);
}
try {
  const report = await runSetup();
  const mib = (p: string): string => (statSync(p).size / 2 ** 20).toFixed(1).padStart(6);
  console.log(`[upstream] binaries in ${upstreamBinDir()}`);
  for (const b of BINARIES) console.log(`  ${b.name.padEnd(24)} ${mib(binaryPath(b.name))} MiB`);
  console.log(
    `  ${'bao'.padEnd(24)} ${mib(binaryPath('bao'))} MiB  ${baoVersion(binaryPath('bao')).line}  (${binaryPath('bao')})`,
  );
  console.log(`  ${'eso'.padEnd(24)} ${mib(esoPath())} MiB  External Secrets Operator ${ESO_VERSION}  (${esoPath()})`);
  const nodeUnsupported = nodeUnsupportedReason();
  if (nodeUnsupported) {
    console.log(`  one-node cluster: not set up here (${nodeUnsupported})`);
  } else {
    for (const b of NODE_BINARIES)
      console.log(`  ${b.name.padEnd(24)} ${mib(nodeBinaryPath(b.name))} MiB  (${nodeBinaryPath(b.name)})`);
    console.log(`  ${'node packages'.padEnd(24)} ${nodePackageVersions().join('; ')}`);
  }
  const ran = Object.entries(report.ran);
  console.log(
    `[upstream] ready in ${formatDuration(report.seconds)}${ran.length ? `: ${ran.map(([n, s]) => `${n} ${s.toFixed(1)}s`).join(', ')}` : ' (everything was cached)'}`,
  );
} catch (err) {
  console.error(`[upstream] ${(err as Error).message}`);
  process.exit(1);
}
