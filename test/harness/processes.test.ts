// owner: B
// The clean-up layers of ProcessGroup, with `sleep` standing in for a server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessGroup } from './processes.ts';
import { waitFor } from './wait.ts';

/** Alive and not a zombie (a zombie has exited; only its parent has not reaped it yet). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

void describe('ProcessGroup', () => {
  void test('stopAll() kills the process group (children of the server too) and removes the dir', async () => {
    const group = new ProcessGroup(mkdtempSync(join(tmpdir(), 'vaultgate-pg-')));
    // A shell whose own child `sleep` shares its process group: both must go.
    const proc = group.spawn('server', '/bin/sh', ['-c', 'sleep 300 & echo $! > "$0/child.pid"; wait', group.dir]);
    const childPid = await waitFor(
      () =>
        Promise.resolve(
          existsSync(join(group.dir, 'child.pid'))
            ? Number(readFileSync(join(group.dir, 'child.pid'), 'utf8')) || undefined
            : undefined,
        ),
      { what: 'child pid', timeoutMs: 5000 },
    );
    assert.ok(running(proc.pid) && running(childPid));
    await group.stopAll();
    assert.equal(existsSync(group.dir), false);
    await waitFor(() => Promise.resolve(!running(proc.pid) && !running(childPid) ? true : undefined), {
      what: 'processes gone',
      timeoutMs: 5000,
    });
  });

  void test('stop(name) ends one process gracefully (SIGTERM) and records its exit', async () => {
    const group = new ProcessGroup(mkdtempSync(join(tmpdir(), 'vaultgate-pg-')));
    try {
      const proc = group.spawn('server', 'sleep', ['300']);
      await group.stop('server', 5000);
      assert.equal(await proc.exited, 'SIGTERM');
      assert.equal(proc.isRunning(), false);
    } finally {
      await group.stopAll();
    }
  });

  void test('when the Node process is SIGKILLed, the reaper kills its servers and removes the dir', async () => {
    const script = [
      "import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';",
      `import { ProcessGroup } from ${JSON.stringify(join(import.meta.dirname, 'processes.ts'))};`,
      "const g = new ProcessGroup(mkdtempSync(join(tmpdir(), 'vaultgate-pg-')));",
      "const p = g.spawn('server', 'sleep', ['300']);",
      'process.stdout.write(JSON.stringify({ pid: p.pid, dir: g.dir }) + "\\n", () => process.kill(process.pid, "SIGKILL"));',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, sig) => resolve(sig)),
    );
    assert.equal(signal, 'SIGKILL');
    const { pid, dir } = JSON.parse(out) as { pid: number; dir: string };
    await waitFor(() => Promise.resolve(!running(pid) && !existsSync(dir) ? true : undefined), {
      what: 'orphaned server reaped',
      timeoutMs: 15_000,
      intervalMs: 200,
    });
  });

  void test('a server is killed even when another reaper removes the dir in the second its owner dies (the orphaned kube-scheduler)', async () => {
    const script = [
      "import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';",
      `import { ProcessGroup } from ${JSON.stringify(join(import.meta.dirname, 'processes.ts'))};`,
      "const g = new ProcessGroup(mkdtempSync(join(tmpdir(), 'vaultgate-pg-')));",
      "const p = g.spawn('server', 'sleep', ['300']);",
      // Long enough for the reaper to have seen the server (it looks once a second), as with any real server.
      'setTimeout(() => process.stdout.write(JSON.stringify({ pid: p.pid, dir: g.dir }) + "\\n", () => process.kill(process.pid, "SIGKILL")), 2500);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const { pid, dir } = JSON.parse(out) as { pid: number; dir: string };
    rmSync(dir, { recursive: true, force: true }); // what the node stack's reaper does to its own directory
    try {
      await waitFor(() => Promise.resolve(!running(pid) ? true : undefined), {
        what: 'server killed although its dir is gone',
        timeoutMs: 15_000,
        intervalMs: 200,
      });
    } finally {
      if (running(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
