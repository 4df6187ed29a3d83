// Admission benchmark: throughput and latency over HTTPS keep-alive for a 20-rule VaultPolicy CREATE,
// the same load against a bare Node HTTPS server answering a fixed allow (the ratio is the tracked figure,
// goal ≥ 0.8), and the in-process cost of one decision (goal ≤ 50 µs).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { selfSignedTls } from '../support/tls.ts';
import { twentyRulePolicyReview } from './fixtures.ts';
import { reviewMutation, reviewValidation } from '../../webhook/admission/review.ts';
import { defaultContext } from '../../webhook/admission/context.ts';

const root = new URL('../..', import.meta.url).pathname;

async function startTarget(mode: 'bare' | 'vaultgate', certFile: string, keyFile: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/webhook-target.ts', mode, certFile, keyFile], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const stdout = child.stdout;
  if (!stdout) throw new Error('benchmark target has no stdout');
  const first: unknown[] = await once(stdout, 'data');
  return { child, port: Number(String(first[0]).trim()) };
}

async function load(port: number, seconds: number): Promise<autocannon.Result> {
  const body = JSON.stringify(twentyRulePolicyReview());
  return autocannon({
    url: `https://127.0.0.1:${port}/validate`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: 16,
    duration: seconds,
  });
}

export async function benchWebhook(opts: { seconds?: number } = {}): Promise<Record<string, number | string>> {
  const seconds = opts.seconds ?? 5;
  const dir = mkdtempSync(join(tmpdir(), 'vaultgate-bench-'));
  const tls = await selfSignedTls('127.0.0.1');
  writeFileSync(join(dir, 'tls.crt'), tls.cert);
  writeFileSync(join(dir, 'tls.key'), tls.key);
  const results: Record<string, number | string> = {};
  try {
    for (const mode of ['bare', 'vaultgate'] as const) {
      const { child, port } = await startTarget(mode, join(dir, 'tls.crt'), join(dir, 'tls.key'));
      try {
        await load(port, 1); // warm-up: JIT, TLS session setup
        const r = await load(port, seconds);
        results[`${mode}_rps`] = Math.round(r.requests.average);
        results[`${mode}_p50_ms`] = r.latency.p50;
        results[`${mode}_p99_ms`] = r.latency.p99;
        results[`${mode}_errors`] = r.errors + r.non2xx;
      } finally {
        child.kill('SIGTERM');
      }
    }
    results.ratio_vaultgate_to_bare = Number(((results.vaultgate_rps as number) / (results.bare_rps as number)).toFixed(3));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // In-process decision cost: both webhooks (mutate then validate) for the same 20-rule policy.
  const ctx = defaultContext();
  const req = twentyRulePolicyReview().request;
  for (let i = 0; i < 2000; i++) { await reviewMutation(req, ctx); await reviewValidation(req, ctx); }
  const n = 20_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) { await reviewMutation(req, ctx); await reviewValidation(req, ctx); }
  const perReviewUs = Number(process.hrtime.bigint() - t0) / n / 2 / 1000;
  results.decision_us_per_review = Number(perReviewUs.toFixed(2));
  return results;
}
