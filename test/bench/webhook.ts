// Admission benchmark: throughput and latency over HTTPS keep-alive for a 20-rule VaultPolicy CREATE,
// against three targets measured in the same run: the webhook as the chart runs it (`trail`: the
// webhook process with the audit trail on, records on stdout into a file as a container runtime keeps
// them), the webhook app with the trail off (`vaultgate`), and a bare Node HTTPS server answering a
// fixed allow (`bare`). The ratios to bare are the tracked figures (goal ≥ 0.8 trail off), plus the
// in-process cost of one decision (goal ≤ 50 µs). For the trail it reports the signing lag (decision →
// record written under a signed checkpoint: max and mean), records per checkpoint, decisions answered
// but not recorded when the load stops (0 by design: the answer waits for the record) and how long the
// trail still wrote after the last request; for every target the RSS high-water mark during the load.
//
// Fairness and stability on a small shared machine: each target runs in its own child process, both
// are warmed up (JIT, TLS sessions) before anything is measured, and the measured runs alternate
// bare / vaultgate so that load from other processes falls on both alike. The figures are medians over
// the runs (BENCH_RUNS, default 3). Besides requests per second, each target reports the CPU time it
// spent per request (from its own process.cpuUsage): the throughput ratio moves with whatever else the
// machine runs, the CPU cost per request much less.
//
// What runs is what production runs: the target is bundled with the production build options
// (cli/build.ts: esbuild, no keepNames) into the run's temporary directory. BENCH_FROM_SOURCE=1 runs
// it through tsx instead (the figures then include tsx's keepNames wrappers).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, writeFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { selfSignedTls } from '../support/tls.ts';
import { twentyRulePolicyReview } from './fixtures.ts';
import { bundle } from '../../cli/build.ts';

const root = new URL('../..', import.meta.url).pathname;
/** trail-workers: the peer bench's admission row only (webhook-target.ts). */
type Mode = 'bare' | 'vaultgate' | 'trail' | 'trail-workers';
const MODES: readonly Mode[] = ['bare', 'vaultgate', 'trail'];

interface Target {
  mode: Mode;
  child: ChildProcess;
  port: number;
}

interface TargetStats {
  rssPeakBytes: number;
  records?: number;
  batches?: number;
  queuedHighWater?: number;
  lagMaxMs?: number;
  lagTotalMs?: number;
  queued?: number;
}

interface RunFigures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  cpuUsPerRequest: number;
  rssPeakMiB: number;
  /** trail only */
  lagMaxMs?: number;
  lagMeanMs?: number;
  recordsPerCheckpoint?: number;
  answeredUnrecorded?: number;
  writingAfterLoadMs?: number;
  queueHighWater?: number;
}

const TARGET_SOURCE = 'test/bench/webhook-target.ts';

/** node argv prefix that runs the target: the production-shaped bundle, or the source under tsx. */
export async function targetCommand(dir: string, fromSource: boolean): Promise<string[]> {
  if (fromSource) return ['--import', 'tsx', TARGET_SOURCE];
  const outfile = join(dir, 'webhook-target.mjs');
  await bundle(join(root, TARGET_SOURCE), outfile);
  return [outfile];
}

export async function startTarget(
  command: string[],
  mode: Mode,
  certFile: string,
  keyFile: string,
  stdoutFile: string,
): Promise<Target> {
  const out = openSync(stdoutFile, 'a');
  // BENCH_CPU_PROF_DIR: each target writes a V8 CPU profile there when it exits (the profiles behind #24's decisions).
  const prof = process.env.BENCH_CPU_PROF_DIR;
  const profile = prof
    ? ['--cpu-prof', `--cpu-prof-dir=${prof}`, `--cpu-prof-name=${mode}-${Date.now()}.cpuprofile`]
    : [];
  const child = spawn(process.execPath, [...profile, ...command, mode, certFile, keyFile], {
    cwd: root,
    stdio: ['ignore', out, 'inherit', 'ipc'],
  });
  closeSync(out);
  const [m] = (await once(child, 'message')) as [{ port: number }];
  return { mode, child, port: m.port };
}

async function stats(target: Target): Promise<TargetStats> {
  const reply = once(target.child, 'message') as Promise<[{ stats: TargetStats }]>;
  target.child.send('stats');
  const [m] = await reply;
  return m.stats;
}

async function cpuMicros(target: Target): Promise<number> {
  const reply = once(target.child, 'message') as Promise<[{ cpuMicros: number }]>;
  target.child.send('cpu');
  const [m] = await reply;
  return m.cpuMicros;
}

/** One request before any load: the target must answer the fixture with an allowed AdmissionReview. */
async function checkAnswer(target: Target, body: string, ca: string): Promise<void> {
  const text = await new Promise<string>((resolve, reject) => {
    const req = https.request(
      `https://127.0.0.1:${target.port}/validate`,
      { method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          data += c;
        });
        res.on('end', () => {
          resolve(res.statusCode === 200 ? data : `HTTP ${String(res.statusCode)}: ${data}`);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  const review = JSON.parse(text.startsWith('HTTP') ? '{}' : text) as {
    response?: { uid?: string; allowed?: boolean };
  };
  if (review.response?.uid !== 'bench-0000' || review.response.allowed !== true) {
    throw new Error(`benchmark: the ${target.mode} target does not allow the fixture: ${text.slice(0, 300)}`);
  }
}

function load(port: number, body: string, seconds: number, connections: number): Promise<autocannon.Result> {
  return autocannon({
    url: `https://127.0.0.1:${port}/validate`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration: seconds,
  });
}

async function measuredRun(target: Target, body: string, seconds: number, connections: number): Promise<RunFigures> {
  const before = await stats(target);
  const cpuBefore = await cpuMicros(target);
  const r = await load(target.port, body, seconds, connections);
  const loadEnd = performance.now();
  const cpuAfter = await cpuMicros(target);
  let after = await stats(target);
  const figures: RunFigures = {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.non2xx,
    cpuUsPerRequest: r.requests.total > 0 ? (cpuAfter - cpuBefore) / r.requests.total : Number.NaN,
    rssPeakMiB: after.rssPeakBytes / 1024 / 1024,
  };
  if (target.mode === 'trail' && after.records !== undefined && before.records !== undefined) {
    const records = after.records - before.records;
    figures.answeredUnrecorded = Math.max(0, r.requests.total - records);
    figures.lagMaxMs = after.lagMaxMs;
    figures.lagMeanMs = records > 0 ? ((after.lagTotalMs ?? 0) - (before.lagTotalMs ?? 0)) / records : Number.NaN;
    figures.recordsPerCheckpoint = records / Math.max(1, (after.batches ?? 0) - (before.batches ?? 0));
    figures.queueHighWater = after.queuedHighWater;
    // How long the trail still had records to write after the last request (the old design: ~25 s):
    // 0 when its queue was already empty at the first look (an IPC round trip after the load).
    const backlog = (after.queued ?? 0) > 0;
    while ((after.queued ?? 0) > 0) after = await stats(target);
    figures.writingAfterLoadMs = backlog ? performance.now() - loadEnd : 0;
  }
  return figures;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const round = (v: number, digits = 0): number => Number(v.toFixed(digits));

/** Per-review cost of the pure core, measured inside the target process (so under the same build). */
async function decisionCost(target: Target): Promise<Record<string, number>> {
  const reply = once(target.child, 'message') as Promise<[{ decision: Record<string, number> }]>;
  target.child.send('decision');
  const [m] = await reply;
  return m.decision;
}

export async function benchWebhook(
  opts: { seconds?: number; runs?: number; connections?: number } = {},
): Promise<Record<string, number | string>> {
  const seconds = opts.seconds ?? Number(process.env.BENCH_SECONDS ?? 5);
  const runs = opts.runs ?? Number(process.env.BENCH_RUNS ?? 3);
  const connections = opts.connections ?? Number(process.env.BENCH_CONNECTIONS ?? 16);
  const body = JSON.stringify(twentyRulePolicyReview());
  const dir = mkdtempSync(join(tmpdir(), 'vaultgate-bench-'));
  const tls = await selfSignedTls('127.0.0.1');
  writeFileSync(join(dir, 'tls.crt'), tls.cert);
  writeFileSync(join(dir, 'tls.key'), tls.key);
  const fromSource = process.env.BENCH_FROM_SOURCE === '1';
  const targets: Target[] = [];
  const results: Record<string, number | string> = {
    target: fromSource ? 'tsx (source)' : 'bundle (production build)',
    runs,
    seconds_per_run: seconds,
    connections,
  };
  try {
    const command = await targetCommand(dir, fromSource);
    for (const mode of MODES)
      targets.push(
        await startTarget(command, mode, join(dir, 'tls.crt'), join(dir, 'tls.key'), join(dir, `${mode}.stdout`)),
      );
    for (const t of targets) {
      await checkAnswer(t, body, tls.ca);
      await load(t.port, body, 2, connections); // warm-up: JIT, TLS sessions, connection pools
    }
    const figures: Record<Mode, RunFigures[]> = { bare: [], vaultgate: [], trail: [], 'trail-workers': [] };
    for (let run = 0; run < runs; run++) {
      // Rotate which target goes first so a slow spell of the machine does not always hit the same one.
      const order = targets.map((_, i) => targets[(i + run) % targets.length]!);
      for (const t of order) figures[t.mode].push(await measuredRun(t, body, seconds, connections));
    }
    for (const mode of MODES) {
      const f = figures[mode];
      results[`${mode}_rps`] = Math.round(median(f.map((x) => x.rps)));
      results[`${mode}_p50_ms`] = median(f.map((x) => x.p50));
      results[`${mode}_p99_ms`] = median(f.map((x) => x.p99));
      results[`${mode}_errors`] = f.reduce((s, x) => s + x.errors, 0);
      results[`${mode}_cpu_us_per_request`] = round(median(f.map((x) => x.cpuUsPerRequest)));
      results[`${mode}_rss_peak_mib`] = round(Math.max(...f.map((x) => x.rssPeakMiB)), 1);
    }
    const ratio = (a: Mode, b: Mode): number[] => figures[a].map((v, i) => v.rps / figures[b][i]!.rps);
    results.ratio_per_run = ratio('vaultgate', 'bare')
      .map((r) => r.toFixed(3))
      .join(' ');
    results.ratio_vaultgate_to_bare = round(median(ratio('vaultgate', 'bare')), 3);
    results.ratio_trail_to_bare = round(median(ratio('trail', 'bare')), 3);
    results.ratio_trail_to_vaultgate = round(median(ratio('trail', 'vaultgate')), 3);
    results.cpu_ratio_bare_to_vaultgate = round(
      median(figures.vaultgate.map((v, i) => figures.bare[i]!.cpuUsPerRequest / v.cpuUsPerRequest)),
      3,
    );
    const t = figures.trail;
    results.trail_signing_lag_max_ms = round(median(t.map((x) => x.lagMaxMs ?? Number.NaN)), 2);
    results.trail_signing_lag_mean_ms = round(median(t.map((x) => x.lagMeanMs ?? Number.NaN)), 3);
    results.trail_records_per_checkpoint = round(median(t.map((x) => x.recordsPerCheckpoint ?? Number.NaN)), 1);
    results.trail_queue_high_water = Math.max(...t.map((x) => x.queueHighWater ?? 0));
    results.trail_answered_unrecorded_at_load_end = Math.max(...t.map((x) => x.answeredUnrecorded ?? Number.NaN));
    results.trail_writing_after_load_ms = Math.max(...t.map((x) => x.writingAfterLoadMs ?? Number.NaN));
    Object.assign(results, await decisionCost(targets.find((t) => t.mode === 'vaultgate')!));
  } finally {
    for (const t of targets) {
      // A profiled target must exit, not be killed, to write its profile: closing IPC makes it exit(0).
      if (process.env.BENCH_CPU_PROF_DIR && t.child.connected) t.child.disconnect();
      else t.child.kill('SIGTERM');
      if (t.child.exitCode === null && t.child.signalCode === null) await once(t.child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}
