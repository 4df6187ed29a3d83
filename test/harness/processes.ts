// owner: B
// Child processes of one control plane, each in its own process group, logs in files, and three layers
// of clean-up so no server outlives the test run:
//  1. stop()/stopAll() from the test's after() hook;
//  2. a process 'exit' hook (test failed, forgot to stop, process.exit);
//  3. a detached shell reaper that notices the Node process died (SIGKILL, OOM, runner timeout) and
//     kills the recorded process groups and removes the temp dir.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves when the process has exited (with its exit code or signal). */
  readonly exited: Promise<string>;
  isRunning(): boolean;
}

interface Entry {
  proc: ManagedProcess;
  child: ChildProcess;
  running: boolean;
}

const liveGroups = new Set<ProcessGroup>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const g of liveGroups) g.killNowSync();
  });
}

export class ProcessGroup {
  readonly dir: string;
  readonly #entries = new Map<string, Entry>();
  readonly #pgidFile: string;
  #reaper: ChildProcess | undefined;

  /** `dir` is owned by the group: removed by stopAll() and by the reapers. */
  constructor(dir: string) {
    this.dir = dir;
    this.#pgidFile = join(dir, 'pgids');
    mkdirSync(join(dir, 'logs'), { recursive: true });
    writeFileSync(this.#pgidFile, '');
    liveGroups.add(this);
    installExitHook();
    this.#startReaper();
  }

  #startReaper(): void {
    // The process groups are remembered each second, not only read at the end: another reaper (the node
    // stack's) may remove the dir in the same second the owner dies, and the groups must die all the same.
    const script = [
      'pg=""',
      'while kill -0 "$0" 2>/dev/null; do [ -d "$1" ] || exit 0; pg=$(cat "$1/pgids" 2>/dev/null); sleep 1; done',
      'for g in $pg $(cat "$1/pgids" 2>/dev/null); do kill -9 "-$g" 2>/dev/null; done',
      'rm -rf "$1"',
    ].join('\n');
    this.#reaper = spawn('/bin/sh', ['-c', script, String(process.pid), this.dir], { detached: true, stdio: 'ignore' });
    this.#reaper.unref();
  }

  #recordPgids(): void {
    const pids = [...this.#entries.values()].filter((e) => e.running).map((e) => e.proc.pid);
    if (existsSync(this.dir)) writeFileSync(this.#pgidFile, pids.join('\n'));
  }

  /** Starts `cmd` detached (own process group); stdout+stderr appended to logs/<name>.log. */
  spawn(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): ManagedProcess {
    if (this.#entries.get(name)?.running) throw new Error(`${name} is already running`);
    const logPath = join(this.dir, 'logs', `${name}.log`);
    appendFileSync(logPath, `\n==== ${new Date().toISOString()} ${cmd} ${args.join(' ')}\n`);
    const fd = openSync(logPath, 'a');
    let child: ChildProcess;
    try {
      child = spawn(cmd, args, { detached: true, stdio: ['ignore', fd, fd], env });
    } finally {
      closeSync(fd);
    }
    // Not ref'd: a test that forgets stop() must not hang Node; the exit hook then kills the group.
    child.unref();
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start ${name} (${cmd})`);
    const exited = new Promise<string>((resolve) => {
      child.once('exit', (code, signal) => {
        entry.running = false;
        this.#recordPgids();
        resolve(signal ?? `exit code ${code}`);
      });
      child.once('error', (err) => {
        entry.running = false;
        resolve(`spawn error: ${err.message}`);
      });
    });
    const proc: ManagedProcess = { name, pid, logPath, exited, isRunning: () => entry.running };
    const entry: Entry = { proc, child, running: true };
    this.#entries.set(name, entry);
    this.#recordPgids();
    return proc;
  }

  /** SIGTERM (graceful, e.g. an apiserver restart), SIGKILL after `graceMs`. */
  async stop(name: string, graceMs = 10_000): Promise<void> {
    const e = this.#entries.get(name);
    if (!e?.running) return;
    e.child.ref(); // keep Node alive until the exit is observed
    killGroup(e.proc.pid, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        killGroup(e.proc.pid, 'SIGKILL');
        resolve();
      }, graceMs);
    });
    await Promise.race([e.proc.exited, killed]);
    clearTimeout(timer);
    await e.proc.exited;
    killGroup(e.proc.pid, 'SIGKILL'); // grandchildren left in the group
  }

  /** Last lines of a process log, for start-up failure messages (logs hold no secrets: no -v flags that dump tokens). */
  logTail(name: string, lines = 30): string {
    const p = join(this.dir, 'logs', `${name}.log`);
    if (!existsSync(p)) return '';
    return readFileSync(p, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Kills everything at once (no graceful shutdown: the data is thrown away) and removes the dir. */
  async stopAll(): Promise<void> {
    const running = [...this.#entries.values()].filter((e) => e.running);
    for (const e of running) {
      e.child.ref(); // keep Node alive until the exit is observed
      killGroup(e.proc.pid, 'SIGKILL');
    }
    await Promise.all(running.map((e) => e.proc.exited));
    this.#cleanupDir();
  }

  /** Synchronous variant for the process 'exit' hook. */
  killNowSync(): void {
    for (const e of this.#entries.values()) if (e.running) killGroup(e.proc.pid, 'SIGKILL');
    this.#cleanupDir();
  }

  #cleanupDir(): void {
    liveGroups.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
    // The reaper sees the dir gone within a second and exits on its own.
  }
}
