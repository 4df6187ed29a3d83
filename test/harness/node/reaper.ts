// The node stack's reaper: a detached process that waits for the test process to die and then removes
// everything the stack left (teardown.ts), so a SIGKILLed, OOM-killed or timed-out test does not leave
// iptables/nftables rules, a bridge, mounts or containers behind on a machine others use.
// Usage (by cluster.ts): node --import tsx test/harness/node/reaper.ts <owner pid>
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { paths } from './layout.ts';
import { readState, teardownNode } from './teardown.ts';

const owner = Number(process.argv[2]);
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

for (;;) {
  // A clean stop removed the state (or another stack took it over): nothing to do.
  if (!existsSync(paths.state) || readState()?.ownerPid !== owner) process.exit(0);
  if (!alive(owner)) break;
  await sleep(1000);
}
const left = teardownNode((l) => process.stderr.write(`${l}\n`));
process.exit(left.length === 0 ? 0 : 1);
