// Polling for readiness, where a server offers no event to await (health endpoints, informer-fed
// admission configuration). Fails fast when the process being waited on exits.
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** What is awaited, for the timeout message. */
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
  /** Rejects the wait early (e.g. the server process exited). */
  abort?: Promise<string>;
}

/** Calls check until it returns a value other than undefined; rethrows nothing, reports the last error. */
export async function waitFor<T>(check: () => Promise<T | undefined>, opts: WaitOptions): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let lastError = '';
  let aborted: string | undefined;
  void opts.abort?.then((reason) => {
    aborted = reason;
  });
  for (;;) {
    if (aborted !== undefined) throw new Error(`${opts.what}: ${aborted}`);
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${opts.what}${lastError ? ` (last error: ${lastError})` : ''}`);
    }
    await sleep(opts.intervalMs ?? 100);
  }
}
