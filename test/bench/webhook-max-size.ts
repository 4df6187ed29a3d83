// Maximum-size reviews in flight (issue #20 item 4): 8 and 16 AdmissionReviews of ~7 MiB each (raw
// HCL, ESO templates: test/support/oversize-reviews.ts) sent at once to the webhook process as the
// chart runs it (audit trail on), in its own child process; the answer time of each, p50 and p99 over
// the rounds, against the apiserver's 5 s webhook timeout. Every answer must be the size denial.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { selfSignedTls } from '../support/tls.ts';
import { oversizeRequests, reviewBody } from '../support/oversize-reviews.ts';
import { startTarget, targetCommand } from './webhook.ts';

export const WEBHOOK_TIMEOUT_MS = 5000;

function post(port: number, ca: string, body: string, t0: number): Promise<{ ms: number; denied: boolean }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `https://127.0.0.1:${port}/validate`,
      { method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          data += c;
        });
        res.on('end', () => {
          const ms = performance.now() - t0;
          let denied = false;
          try {
            denied = (JSON.parse(data) as { response?: { allowed?: boolean } }).response?.allowed === false;
          } catch {
            /* counted as not denied */
          }
          resolve({ ms, denied: res.statusCode === 200 && denied });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export async function benchWebhookMaxSize(opts: { rounds?: number } = {}): Promise<Record<string, number | string>> {
  const rounds = opts.rounds ?? Number(process.env.BENCH_RUNS ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'vaultgate-bench-max-'));
  const tls = await selfSignedTls('127.0.0.1');
  writeFileSync(join(dir, 'tls.crt'), tls.cert);
  writeFileSync(join(dir, 'tls.key'), tls.key);
  const shapes = Object.values(oversizeRequests());
  const results: Record<string, number | string> = {
    target: 'webhook process, audit trail on (as the chart runs it)',
    webhook_timeout_ms: WEBHOOK_TIMEOUT_MS,
    rounds,
    review_mib: 7,
  };
  const command = await targetCommand(dir, process.env.BENCH_FROM_SOURCE === '1');
  const target = await startTarget(
    command,
    'trail',
    join(dir, 'tls.crt'),
    join(dir, 'tls.key'),
    join(dir, 'trail.stdout'),
  );
  try {
    for (const inFlight of [8, 16]) {
      const bodies = Array.from({ length: inFlight }, (_, i) => reviewBody(`max-${i}`, shapes[i % shapes.length]!));
      const times: number[] = [];
      let notDenied = 0;
      for (let r = 0; r < rounds + 1; r++) {
        const t0 = performance.now();
        const answers = await Promise.all(bodies.map((b) => post(target.port, tls.ca, b, t0)));
        if (r === 0) continue; // warm-up round
        for (const a of answers) {
          times.push(a.ms);
          if (!a.denied) notDenied++;
        }
      }
      results[`in_flight_${inFlight}_p50_ms`] = Math.round(percentile(times, 50));
      results[`in_flight_${inFlight}_p99_ms`] = Math.round(percentile(times, 99));
      results[`in_flight_${inFlight}_max_ms`] = Math.round(Math.max(...times));
      results[`in_flight_${inFlight}_p99_of_timeout`] = Number((percentile(times, 99) / WEBHOOK_TIMEOUT_MS).toFixed(3));
      results[`in_flight_${inFlight}_not_denied`] = notDenied;
    }
  } finally {
    target.child.kill('SIGTERM');
    if (target.child.exitCode === null && target.child.signalCode === null) await once(target.child, 'exit');
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}
