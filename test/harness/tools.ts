// owner: B
// Running CLI tools (kubectl, helm, bao) to completion with captured output.
import { spawn } from 'node:child_process';

export class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly code: number | null,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`${command} failed (exit ${code ?? 'signal'}): ${stderr.trim().slice(0, 2000)}`);
    this.name = 'CommandError';
  }
}

export interface RunOptions {
  stdin?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Runs `cmd` to completion and collects its output, whatever the exit code. */
export function collectOutput(
  cmd: string,
  args: string[],
  opts: RunOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: opts.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 120_000,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('error', reject);
    child.once('close', (code) => {
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

/** Resolves with stdout; rejects with CommandError (stderr included) on a non-zero exit. */
export async function runTool(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  const { code, stdout, stderr } = await collectOutput(cmd, args, opts);
  if (code !== 0) throw new CommandError(`${cmd.replace(/^.*\//, '')} ${args.join(' ')}`, code, stdout, stderr);
  return stdout;
}
