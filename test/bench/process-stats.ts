// Resident memory and CPU time of a process from /proc (Linux), for benchmarks of child processes.
import { readFileSync } from 'node:fs';

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
