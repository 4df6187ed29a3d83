// Serving side of rotation: the webhook polls its mounted cert/key files and swaps the TLS context of the
// running server, no restart (ESO's webhook *exits* on an expiring cert and relies on a restart: #3471).
// Polling, not fs.watch: Secret volumes change by an atomic `..data` symlink swap that inotify watchers
// miss or see half-done (controller-runtime's certwatcher adds a 10 s poll for the same reason).
// A poll stats both files and reads them only when a stat changed (the `..data` swap gives new inodes): an
// idle webhook's poll is two stat calls, not two reads and a hash (issue #24.5).
// A pair is taken only when it parses, the key matches the certificate and it is valid now; otherwise the
// previous pair keeps serving (a half-written cert/key pair is skipped and picked up at the next poll; a
// pair not valid yet is looked at again at every poll).
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { SecureContextOptions } from 'node:tls';
import { Counter, Gauge, type Registry } from 'prom-client';
import { silentLogger, type Logger } from '../observability/log.ts';
import { certFacts, keyMatchesCert } from './pem.ts';

export interface LoadedPair {
  cert: string;
  /** Secret: never log it. */
  key: string;
  fingerprint: string;
  notBefore: number;
  notAfter: number;
  subject: string;
  dnsNames: string[];
}

/** Anything whose TLS context can be swapped: node's https/tls Server, or webhook/server.ts's WebhookServer. */
export type SecureContextTarget =
  | { updateCertificate(pair: { cert: string; key: string }): void }
  | { setSecureContext(options: SecureContextOptions): void };

export interface CertReloaderOptions {
  certFile: string;
  keyFile: string;
  /** Poll period (default 10 s, as controller-runtime's certwatcher). */
  intervalMs?: number;
  /** For tests: how the files are stat'ed and read (default node:fs; undefined = missing). */
  files?: PairFiles;
  /** After a new pair is in use by every started server. */
  onReload?: (pair: LoadedPair) => void;
  log?: Logger;
  now?: () => number;
  registry?: Registry;
}

export interface CertReloader {
  /** The pair in use, if any. */
  current(): LoadedPair | undefined;
  /** Apply the current pair to `server` (if any) and keep it updated; the first poll runs synchronously. */
  start(server?: SecureContextTarget): void;
  stop(): void;
  /** Readiness gate: a valid, unexpired pair is loaded. */
  ready(): boolean;
  /** Poll now; true when a new pair was taken. */
  check(): boolean;
  /** Resolves with the first valid pair (polling on the interval until then). */
  waitUntilReady(signal?: AbortSignal): Promise<LoadedPair>;
}

export interface PairFiles {
  /** What changes when the file's content is replaced (following symlinks), or undefined when missing. */
  stat: (file: string) => string | undefined;
  read: (file: string) => string | undefined;
}

export const nodeFiles: PairFiles = {
  stat: (file) => {
    try {
      const st = statSync(file, { throwIfNoEntry: false });
      return st && `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    } catch {
      return undefined;
    }
  },
  read: (file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  },
};

function apply(target: SecureContextTarget, pair: LoadedPair): void {
  if ('updateCertificate' in target) target.updateCertificate({ cert: pair.cert, key: pair.key });
  else target.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' });
}

export function createCertReloader(opts: CertReloaderOptions): CertReloader {
  const log = opts.log ?? silentLogger;
  const now = opts.now ?? Date.now;
  const intervalMs = opts.intervalMs ?? 10_000;
  const targets = new Set<SecureContextTarget>();
  const waiters = new Set<() => void>();
  let current: LoadedPair | undefined;
  const files = opts.files ?? nodeFiles;
  let lastSeen = '';
  let lastStat: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  const metrics = opts.registry
    ? {
        reloads: new Counter({
          name: 'vaultgate_webhook_certificate_reloads_total',
          help: 'Certificate files seen changed, by result (loaded, rejected).',
          labelNames: ['result'] as const,
          registers: [opts.registry],
        }),
        expiry: new Gauge({
          name: 'vaultgate_webhook_certificate_expiry_timestamp_seconds',
          help: 'notAfter of the serving certificate in use.',
          registers: [opts.registry],
        }),
      }
    : undefined;

  /** Why `cert`/`key` cannot serve now, or undefined. Reasons never include key material. */
  function problem(cert: string, key: string): { reason?: string; pair?: LoadedPair; notYet?: boolean } {
    let facts;
    try {
      facts = certFacts(cert);
    } catch {
      return { reason: 'certificate file does not hold a PEM certificate' };
    }
    if (!keyMatchesCert(key, facts)) return { reason: "key file does not hold the certificate's private key" };
    const t = now();
    if (t >= facts.notAfter) return { reason: `certificate expired at ${new Date(facts.notAfter).toISOString()}` };
    if (t < facts.notBefore)
      return { reason: `certificate not valid before ${new Date(facts.notBefore).toISOString()}`, notYet: true };
    return {
      pair: {
        cert,
        key,
        fingerprint: facts.fingerprint,
        notBefore: facts.notBefore,
        notAfter: facts.notAfter,
        subject: facts.subject,
        dnsNames: facts.dnsNames,
      },
    };
  }

  function check(): boolean {
    const certStat = files.stat(opts.certFile);
    const keyStat = files.stat(opts.keyFile);
    const stat = certStat && keyStat ? `${certStat}|${keyStat}` : undefined;
    if (stat && stat === lastStat) return false;
    lastStat = undefined; // set again below once this content has been looked at for good
    const cert = files.read(opts.certFile);
    const key = files.read(opts.keyFile);
    if (!cert || !key) {
      if (lastSeen !== 'missing')
        log.info({ certFile: opts.certFile, keyFile: opts.keyFile }, 'waiting for the serving certificate files');
      lastSeen = 'missing';
      return false;
    }
    const seen = createHash('sha256').update(cert).update('\0').update(key).digest('hex');
    const { reason, pair, notYet } = problem(cert, key);
    // Not valid yet: time alone changes the answer, so these files are looked at again at the next poll.
    if (!notYet) lastStat = stat;
    const firstLook = seen !== lastSeen;
    lastSeen = seen;
    if (!pair) {
      if (firstLook) {
        metrics?.reloads.inc({ result: 'rejected' });
        log.warn(
          { certFile: opts.certFile, reason, serving: current?.fingerprint },
          'certificate files not taken; the previous pair keeps serving',
        );
      }
      return false;
    }
    if (pair.fingerprint === current?.fingerprint && pair.key === current.key) return false;
    for (const t of targets) apply(t, pair);
    const previous = current?.fingerprint;
    current = pair;
    metrics?.reloads.inc({ result: 'loaded' });
    metrics?.expiry.set(pair.notAfter / 1000);
    log.info(
      { fingerprint: pair.fingerprint, previous, notAfter: new Date(pair.notAfter).toISOString() },
      'serving certificate loaded',
    );
    for (const w of [...waiters]) w();
    opts.onReload?.(pair);
    return true;
  }

  function ready(): boolean {
    const t = now();
    return !!current && t >= current.notBefore && t < current.notAfter;
  }

  function tick(): void {
    try {
      check();
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'certificate poll failed');
    }
  }

  const reloader: CertReloader = {
    current: () => current,
    check,
    ready,
    start(server) {
      if (server) {
        targets.add(server);
        if (current) apply(server, current);
      }
      tick();
      if (!timer) {
        timer = setInterval(tick, intervalMs);
        timer.unref(); // never keeps the process alive on its own
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      targets.clear();
      for (const w of [...waiters]) w();
    },
    waitUntilReady(signal) {
      return new Promise<LoadedPair>((resolve, reject) => {
        const done = (): void => {
          if (ready()) {
            cleanup();
            resolve(current!);
          } else if (signal?.aborted || !timer) {
            cleanup();
            reject(new Error('stopped before a valid serving certificate was loaded'));
          }
        };
        const cleanup = (): void => {
          waiters.delete(done);
          signal?.removeEventListener('abort', done);
          if (waiters.size === 0) timer?.unref();
        };
        waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
        if (!timer) reloader.start();
        timer?.ref(); // someone awaits the certificate: the poll must keep the process alive meanwhile
        done();
      });
    },
  };
  return reloader;
}
