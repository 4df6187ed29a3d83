// One node stack per machine at a time (fixed bridge, ranges and directories): a lock directory with
// the owner's pid. A stale lock (its owner died) is taken over; the caller then removes that run's
// leftovers before building anything.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { paths } from './layout.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockOwner(): number | undefined {
  try {
    const pid = Number(readFileSync(join(paths.lock, 'pid'), 'utf8'));
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Waits (up to `timeoutMs`) for the node lock; returns its release function. */
export async function acquireNodeLock(log: (line: string) => void, timeoutMs = 20 * 60_000): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  let announced = false;
  for (;;) {
    try {
      mkdirSync(paths.lock);
      writeFileSync(join(paths.lock, 'pid'), String(process.pid));
      return () => {
        if (lockOwner() === process.pid) rmSync(paths.lock, { recursive: true, force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = lockOwner();
      if (owner === undefined || !alive(owner)) {
        rmSync(paths.lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another node stack (pid ${owner}) holds ${paths.lock}`);
      if (!announced) log(`[node] waiting for the node stack of pid ${owner} to finish ...`);
      announced = true;
      await sleep(2000);
    }
  }
}
