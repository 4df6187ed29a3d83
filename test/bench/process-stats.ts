// Resident memory and CPU time of a process from /proc (Linux), for benchmarks of child processes.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessStats {
  rssMb: number;
  /** High-water mark of the resident set since the process started (VmHWM). */
  peakRssMb: number;
  /** User + system CPU seconds since the process started. */
  cpuSeconds: number;
}

// USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK)); Node has no binding for sysconf.
const CLOCK_TICKS = 100;

export function processStats(pid: number): ProcessStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  // Fields after the command name (which may hold spaces, hence the last ')'): utime is 14th, stime 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(rest[11]) + Number(rest[12]);
  return {
    rssMb: Math.round(kb('VmRSS') / 1024),
    peakRssMb: Math.round(kb('VmHWM') / 1024),
    cpuSeconds: Math.round((ticks / CLOCK_TICKS) * 100) / 100,
  };
}

/** The process and every descendant of it (a node:cluster primary and its workers), from /proc. */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${out[i]!}/task`);
    } catch {
      continue; // exited meanwhile
    }
    for (const t of tasks) {
      try {
        const kids = readFileSync(`/proc/${out[i]!}/task/${t}/children`, 'utf8').trim();
        if (kids) out.push(...kids.split(' ').map(Number));
      } catch {
        // the thread ended meanwhile
      }
    }
  }
  return out;
}

/** User + system CPU seconds of a process and its descendants (those alive now). */
export function treeCpuSeconds(pid: number): number {
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      total += processStats(p).cpuSeconds;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}
