// Where audit lines go: stdout as JSON lines (for log shippers), a file with size-based rotation, or
// both. Rotation renames `audit.log` → `audit.log.1` → `audit.log.2` …; the chain simply continues in
// the new file (its first record's prev is the hash of the last record of `audit.log.1`), so
// `vaultgate audit verify audit.log.2 audit.log.1 audit.log` checks continuity across files. Dropping
// the oldest file loses the start of the chain, which the verifier reports as a notice, not a break.
import { closeSync, existsSync, fstatSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import type { AuditRecord } from './record.ts';
import type { AuditSink } from './trail.ts';

/** JSON lines to a stream (default process.stdout). Cannot be read back: a restart starts a new chain. */
export function stdoutSink(stream: NodeJS.WritableStream = process.stdout): AuditSink {
  return { write: (line) => { stream.write(`${line}\n`); } };
}

/** Fan out to several sinks; the first one that can be read back provides the resume point. */
export function teeSink(...sinks: AuditSink[]): AuditSink {
  const readable = sinks.find((s) => s.lastLine !== undefined);
  return {
    write: async (line, record: AuditRecord) => { for (const s of sinks) await s.write(line, record); },
    ...(readable ? { lastLine: () => readable.lastLine?.() ?? Promise.resolve(undefined) } : {}),
    ...(readable ? { tailDamaged: () => readable.tailDamaged?.() ?? Promise.resolve(false) } : {}),
    close: async () => { for (const s of sinks) await s.close?.(); },
  };
}

export interface FileSinkOptions {
  path: string;
  /** Rotate before a write would take the file past this size. Default 10 MiB. */
  maxBytes?: number;
  /** Rotated files kept (`path.1` … `path.N`). Default 5. */
  maxFiles?: number;
  /** Mode of new files. Default 0o600: the trail names users and objects. */
  mode?: number;
}

export interface FileSink extends AuditSink {
  lastLine(): Promise<string | undefined>;
  tailDamaged(): Promise<boolean>;
  close(): Promise<void>;
  /** Files holding the trail, oldest first (what `audit verify` should be given). */
  files(): string[];
}

const TAIL_CHUNK = 1 << 20;

/**
 * Appends whole lines synchronously with O_APPEND (one write per record, so a line is never interleaved
 * and the order on disk is the chain's order). A partial last line left by a crash is sealed off with a
 * newline before the next write, so it stays one visibly broken line instead of corrupting the next.
 */
export function fileSink(opts: FileSinkOptions): FileSink {
  const maxBytes = opts.maxBytes ?? 10 * 1024 * 1024;
  const maxFiles = Math.max(1, opts.maxFiles ?? 5);
  const mode = opts.mode ?? 0o600;
  let fd: number | undefined;
  let size = 0;
  let sealed = false;

  const open = () => {
    fd = openSync(opts.path, 'a', mode);
    size = fstatSync(fd).size;
    sealed = false;
  };
  const rotate = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    rmSync(`${opts.path}.${maxFiles}`, { force: true });
    for (let i = maxFiles - 1; i >= 1; i--) if (existsSync(`${opts.path}.${i}`)) renameSync(`${opts.path}.${i}`, `${opts.path}.${i + 1}`);
    renameSync(opts.path, `${opts.path}.1`);
    open();
  };
  const tail = (file: string): { lines: string[]; partial: boolean } | undefined => {
    if (!existsSync(file)) return undefined;
    const total = statSync(file).size;
    if (total === 0) return undefined;
    const start = Math.max(0, total - TAIL_CHUNK);
    const buf = Buffer.alloc(total - start);
    const f = openSync(file, 'r');
    try { readSync(f, buf, 0, buf.length, start); } finally { closeSync(f); }
    const text = buf.toString('utf8');
    const partial = !text.endsWith('\n');
    const lines = text.split('\n');
    if (start > 0) lines.shift(); // the chunk may start mid-line
    lines.pop(); // '' after the final newline, or the partial line
    return { lines: lines.filter((l) => l.length > 0), partial };
  };
  const newest = (): { lines: string[]; partial: boolean } | undefined => tail(opts.path) ?? tail(`${opts.path}.1`);

  return {
    write(line) {
      if (fd === undefined) open();
      let damaged = !sealed && size > 0 && tail(opts.path)?.partial === true;
      sealed = true;
      if (size > 0 && size + Buffer.byteLength(line) + 1 + (damaged ? 1 : 0) > maxBytes) {
        rotate();
        damaged = false;
        sealed = true;
      }
      const text = `${damaged ? '\n' : ''}${line}\n`;
      writeSync(fd!, text);
      size += Buffer.byteLength(text);
    },
    lastLine: () => Promise.resolve(newest()?.lines.at(-1)),
    tailDamaged: () => Promise.resolve(newest()?.partial ?? false),
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      return Promise.resolve();
    },
    files() {
      const out: string[] = [];
      for (let i = maxFiles; i >= 1; i--) if (existsSync(`${opts.path}.${i}`)) out.push(`${opts.path}.${i}`);
      if (existsSync(opts.path)) out.push(opts.path);
      return out;
    },
  };
}
