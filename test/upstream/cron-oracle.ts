// The cron oracle (test/upstream/cron-oracle/): robfig/cron v3.0.1, the parser ESO evaluates
// ExternalSecret syncWindows with, and ESO's isWithinSyncWindow, as a small Go program. Built on demand
// into the upstream cache (${XDG_CACHE_HOME:-~/.cache}/vaultgate/upstream/cron-oracle-<hash>/), keyed by
// its sources and the Go version (go-program.ts), like the template oracle (go-oracle.ts).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { goProgram } from './go-program.ts';

export interface CronRequest {
  schedule: string;
  duration?: string;
  /** ms since the epoch */ at: number;
}
export interface CronAnswer {
  error?: string;
  next?: number;
  active?: boolean;
}

export const cronOracle = goProgram<CronRequest, CronAnswer>({
  name: 'cron-oracle',
  srcDir: join(dirname(fileURLToPath(import.meta.url)), 'cron-oracle'),
  sources: ['go.mod', 'go.sum', 'main.go'],
});

/** Asks robfig every request in one process run; answers in order. */
export const askCron = (requests: readonly CronRequest[]): Promise<CronAnswer[]> => cronOracle.ask(requests);
