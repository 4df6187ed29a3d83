// Where audit lines go: stdout as JSON lines (for log shippers), a file with size-based rotation, or
// both. Rotation renames `audit.log` → `audit.log.1` → `audit.log.2` …; the chain simply continues in
// the new file (its first record's prev is the hash of the last record of `audit.log.1`), so
// `vaultgate audit verify audit.log.2 audit.log.1 audit.log` checks continuity across files. Dropping
// the oldest file loses the start of the chain, which the verifier reports as a notice, not a break.
import { once } from 'node:events';
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import type { AuditRecord } from './record.ts';
import type { AuditSink } from './trail.ts';

/**
 * JSON lines to a stream (default process.stdout). Cannot be read back: a restart starts a new chain.
 * A batch is one write; when the stream buffers (write returns false) the batch resolves only once it
 * drained, so a slow reader slows the trail (and admission) down instead of piling records up in memory.
 * (On Linux, Node writes stdout to a pipe or file synchronously: the lines are in the kernel when this returns.)
 */
export function stdoutSink(stream: NodeJS.WritableStream = process.stdout): AuditSink {
  const put = async (text: string): Promise<void> => {
    if (!stream.write(text)) await once(stream, 'drain');
  };
  return {
    write: (line) => put(`${line}\n`),
    writeBatch: (lines) => put(`${lines.join('\n')}\n`),
  };
}

/** Fan out to several sinks; the first one that can be read back provides the resume point. */
export function teeSink(...sinks: AuditSink[]): AuditSink {
  const readable = sinks.find((s) => s.lastLine !== undefined);
  return {
    write: async (line, record: AuditRecord) => {
      for (const s of sinks) await s.write(line, record);
    },
    writeBatch: async (lines, records) => {
      for (const s of sinks) {
        if (s.writeBatch) await s.writeBatch(lines, records);
        else for (let i = 0; i < lines.length; i++) await s.write(lines[i]!, records[i]!);
      }
    },
    ...(readable ? { lastLine: () => readable.lastLine?.() ?? Promise.resolve(undefined) } : {}),
    ...(readable ? { tailDamaged: () => readable.tailDamaged?.() ?? Promise.resolve(false) } : {}),
    close: async () => {
      for (const s of sinks) await s.close?.();
    },
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
  /**
   * fdatasync after every batch, before its decisions are answered: the records survive a node crash or
   * power loss, not only a process kill. Default off (a written batch is in the page cache: a SIGKILL or
   * OOM kill of the process loses nothing; a kernel crash can).
   */
  fsync?: boolean;
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
    for (let i = maxFiles - 1; i >= 1; i--)
      if (existsSync(`${opts.path}.${i}`)) renameSync(`${opts.path}.${i}`, `${opts.path}.${i + 1}`);
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
    try {
      readSync(f, buf, 0, buf.length, start);
    } finally {
      closeSync(f);
    }
    const text = buf.toString('utf8');
    const partial = !text.endsWith('\n');
    const lines = text.split('\n');
    if (start > 0) lines.shift(); // the chunk may start mid-line
    lines.pop(); // '' after the final newline, or the partial line
    return { lines: lines.filter((l) => l.length > 0), partial };
  };
  const newest = (): { lines: string[]; partial: boolean } | undefined => tail(opts.path) ?? tail(`${opts.path}.1`);

  /** One write of whole lines (a batch stays in one file: rotation happens before it, never inside). */
  const put = (body: string): void => {
    if (fd === undefined) open();
    const bytes = Buffer.byteLength(body);
    let damaged = !sealed && size > 0 && tail(opts.path)?.partial === true;
    sealed = true;
    if (size > 0 && size + bytes + (damaged ? 1 : 0) > maxBytes) {
      rotate();
      damaged = false;
      sealed = true;
    }
    const buf = Buffer.from(damaged ? `\n${body}` : body, 'utf8');
    let off = 0;
    while (off < buf.length) off += writeSync(fd!, buf, off, buf.length - off);
    if (opts.fsync) fdatasyncSync(fd!);
    size += buf.length;
  };

  return {
    write(line) {
      put(`${line}\n`);
    },
    writeBatch(lines) {
      put(`${lines.join('\n')}\n`);
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
