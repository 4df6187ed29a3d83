// Shared setup for the Vault adapter tests: a simulator, a client on it, a root requester, a fake clock.
import {
  createVaultClient,
  type VaultClient,
  type VaultClientOptions,
  type VaultRequest,
  type VaultRequester,
} from '../../vault/index.ts';
import { VaultSim, type VaultSimOptions } from '../sim/vault.ts';

export interface Harness {
  sim: VaultSim;
  client: VaultClient;
  root: VaultRequester;
  close(): Promise<void>;
}

export async function startHarness(
  simOpts: VaultSimOptions = {},
  clientOpts: Partial<VaultClientOptions> = {},
): Promise<Harness> {
  const sim = await VaultSim.start(simOpts);
  const client = createVaultClient({ address: sim.addr, timeoutMs: 5_000, ...clientOpts });
  const root: VaultRequester = {
    request: <T>(req: VaultRequest) => client.request<T>({ ...req, token: sim.rootToken }),
  };
  return {
    sim,
    client,
    root,
    async close() {
      client.close();
      await sim.stop();
    },
  };
}

/** A clock tests move by hand; shared by the simulator and the token cache. */
export function fakeClock(start = Date.parse('2026-01-01T00:00:00Z')): {
  now: () => number;
  advance(ms: number): void;
} {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

/** Resolves on the first event matching `pred` (events pushed through `push`). */
export function eventWaiter<E>(): { push(e: E): void; next(pred: (e: E) => boolean): Promise<E> } {
  const waiting: Array<{ pred: (e: E) => boolean; resolve(e: E): void }> = [];
  return {
    push(e) {
      for (const w of [...waiting]) {
        if (w.pred(e)) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve(e);
        }
      }
    },
    next(pred) {
      return new Promise((resolve) => waiting.push({ pred, resolve }));
    },
  };
}
