// Rendering the chart with the helm binary built from Go modules (test/upstream), when it is there.
/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   rendered manifests are untyped YAML that these checks walk field by field */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { binaryPath } from '../upstream/paths.ts';

export const CHART_DIR = join(import.meta.dirname, '..', '..', 'charts', 'vaultgate');
export const CI_FILES = readdirSync(join(CHART_DIR, 'ci'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type Obj = Record<string, any>;

export function helmPath(): string | undefined {
  try {
    const p = binaryPath('helm');
    return existsSync(p) ? p : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `false` when helm is built, else why the chart tests skip (`npm run test:fast` on a machine where setup
 * has not run). `npm test` builds helm before any test; under VAULTGATE_REQUIRE_REAL_TIER=1 (CI) a missing
 * helm fails the file instead of skipping it.
 */
export function helmSkip(): false | string {
  if (helmPath()) return false;
  const reason = `helm not built at ${binaryPath('helm')} (\`npm run upstream\` builds it; \`npm test\` does it before any test)`;
  if (process.env.VAULTGATE_REQUIRE_REAL_TIER === '1')
    throw new Error(`${reason}; VAULTGATE_REQUIRE_REAL_TIER=1 requires it`);
  return reason;
}

export function helm(args: string[]): { status: number; stdout: string; stderr: string } {
  const bin = helmPath();
  if (!bin) throw new Error('helm not built (npm run upstream)');
  const r = spawnSync(bin, args, {
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      HELM_CACHE_HOME: '/tmp/vaultgate-helm-cache',
      HELM_CONFIG_HOME: '/tmp/vaultgate-helm-config',
      HELM_DATA_HOME: '/tmp/vaultgate-helm-data',
    },
  });
  return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

/** `helm template` → objects. `valuesFile` is relative to the chart (ci/x.yaml). */
export function render(
  opts: { valuesFile?: string; set?: string[]; chartDir?: string; namespace?: string } = {},
): Obj[] {
  const chart = opts.chartDir ?? CHART_DIR;
  const args = ['template', 'rel', chart, '--namespace', opts.namespace ?? 'vaultgate'];
  if (opts.valuesFile) args.push('-f', join(chart, opts.valuesFile));
  for (const s of opts.set ?? []) args.push('--set', s);
  const r = helm(args);
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o);
}

export const ofKind = (objs: Obj[], kind: string): Obj[] => objs.filter((o) => o.kind === kind);
export const one = (objs: Obj[], kind: string, nameSuffix = ''): Obj => {
  const found = objs.find((o) => o.kind === kind && String(o.metadata?.name).endsWith(nameSuffix));
  if (!found) throw new Error(`no ${kind} *${nameSuffix}`);
  return found;
};
