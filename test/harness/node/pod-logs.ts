// Container logs of the one-node cluster's pods, kept after the pods are gone. The kubelet writes them in
// CRI format under its podLogsDir (<namespace>_<pod>_<uid>/<container>/<restart>.log) and removes a pod's
// directory once the pod is deleted, a moment after its container exits; a hard link taken when the file
// first appears keeps every line the container wrote, its last ones included, whenever the poll runs.
// (The apiserver's pods/log would need a kubelet client certificate the harness does not configure.)
import { copyFileSync, existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { paths } from './layout.ts';

export interface ContainerLog {
  namespace: string;
  pod: string;
  container: string;
  /** The file's name: the container's restart count. */
  restart: number;
  /** Lines of stdout and stderr, partial lines joined, in order. */
  lines: string[];
}

/** CRI log format (kubernetes/cri-api logging): `<RFC3339Nano> <stream> <P|F> <content>`. */
export function parseCriLog(text: string): string[] {
  const lines: string[] = [];
  let partial = '';
  for (const raw of text.split('\n')) {
    const m = /^\S+ (?:stdout|stderr) ([PF]) ?(.*)$/.exec(raw);
    if (!m) continue;
    partial += m[2] ?? '';
    if (m[1] === 'F') {
      lines.push(partial);
      partial = '';
    }
  }
  return lines;
}

export class PodLogCollector {
  readonly #dir = mkdtempSync(join(tmpdir(), 'vaultgate-pod-logs-'));
  readonly #files = new Map<string, Omit<ContainerLog, 'lines'> & { kept: string }>();

  constructor(private readonly namespace: string) {}

  /** Keeps (hard-links) every log file of the namespace's pods not kept yet. */
  poll(): void {
    if (!existsSync(paths.kubelet.podLogs)) return;
    for (const podDir of readdirSync(paths.kubelet.podLogs)) {
      const [ns, pod] = podDir.split('_');
      if (ns !== this.namespace || !pod) continue;
      try {
        for (const container of readdirSync(join(paths.kubelet.podLogs, podDir))) {
          for (const f of readdirSync(join(paths.kubelet.podLogs, podDir, container))) {
            const src = join(paths.kubelet.podLogs, podDir, container, f);
            if (!/^\d+\.log$/.test(f) || this.#files.has(src)) continue;
            const kept = join(this.#dir, `${podDir}__${container}__${f}`);
            try {
              linkSync(src, kept);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
              copyFileSync(src, kept); // another filesystem: a copy, later lines lost
            }
            this.#files.set(src, { namespace: ns, pod, container, restart: Number(f.split('.')[0]), kept });
          }
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // the pod went meanwhile
      }
    }
  }

  logs(): ContainerLog[] {
    return [...this.#files.values()].map(({ kept, ...rest }) => ({
      ...rest,
      lines: parseCriLog(readFileSync(kept, 'utf8')),
    }));
  }

  dispose(): void {
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
