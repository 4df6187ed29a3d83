// Small synchronous helpers over the host's tools (ip, nft, iptables-save, umount) and /proc, /sys.
// Synchronous on purpose: teardown also runs from a process 'exit' hook and from the reaper.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ShResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function sh(cmd: string, args: string[], opts: { input?: string; timeoutMs?: number } = {}): ShResult {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input: opts.input, timeout: opts.timeoutMs ?? 30_000 });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? (r.error ? r.error.message : '') };
}

/** Runs and throws with the command's stderr on failure. */
export function must(cmd: string, args: string[], opts: { input?: string; timeoutMs?: number } = {}): string {
  const r = sh(cmd, args, opts);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}

export function readSysctl(name: string): string | undefined {
  try {
    return readFileSync(join('/proc/sys', name), 'utf8').trim();
  } catch {
    return undefined;
  }
}

export function writeSysctl(name: string, value: string): void {
  try {
    writeFileSync(join('/proc/sys', name), value);
  } catch {
    // not writable here (e.g. a read-only /proc/sys): nothing to restore then either
  }
}

/** Mount points (from /proc/self/mountinfo), deepest first. */
export function mountPoints(): string[] {
  const lines = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter(Boolean);
  // Field 5 is the mount point, with spaces etc. octal-escaped.
  const points = lines.map((l) =>
    (l.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))),
  );
  return points.filter(Boolean).sort((a, b) => b.length - a.length);
}

export interface ProcInfo {
  pid: number;
  cmdline: string;
}

export function processes(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      out.push({ pid: Number(e), cmdline: readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').join(' ').trim() });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

export function kill(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}

export function linkExists(name: string): boolean {
  return sh('ip', ['link', 'show', 'dev', name]).code === 0;
}
