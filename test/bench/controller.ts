// Controller benchmark on the real servers: `vaultgate controller` as a process (as the chart runs it,
// logging in with the bootstrap policy) against the real kube-apiserver 1.34 and a real OpenBao 2.7.2
// dev server. 1,000 ExternalSecrets over 100 distinct Vault paths (10 namespaces × 100 ExternalSecrets,
// 10 SecretStores = 10 tenant identities) with a 30 s refreshInterval.
// Figures: time from the controller's spawn until every Secret holds the right value; Vault requests by
// kind as OpenBao's file audit device recorded them; Kubernetes writes by resource as the apiserver counts
// them (apiserver_request_total); the controller's RSS and CPU seconds (/proc); then the same counts for
// one refresh interval with nothing changed.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import { countByKind, kubernetesLogins, readAudit } from '../harness/openbao-audit.ts';
import { waitFor } from '../harness/wait.ts';
import { runSetup, setupSteps } from '../upstream/setup.ts';
import { apiserverWrites, delta } from './apiserver-writes.ts';
import { processStats } from './process-stats.ts';

const NAMESPACE_COUNT = 10;
const ES_PER_NAMESPACE = 100;
const PATHS_PER_NAMESPACE = 10;
const REFRESH_SECONDS = 30;
const CONTROLLER_WORKERS = 8;

type Figures = Record<string, number | string>;

/** Runs `fn` over `items`, `width` at a time. */
async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

async function must(stack: E2EStack, method: string, path: string, body?: unknown): Promise<void> {
  const res = await stack.cp.request(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
}

async function mustVault(stack: E2EStack, method: string, path: string, body?: unknown): Promise<void> {
  const res = await stack.vaultRoot(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
}

const expected = (ns: string, e: number): string => `pw-${ns}-${e % PATHS_PER_NAMESPACE}`;

/** Tenants, stores, Vault data and ExternalSecrets, created before the controller starts. */
async function seed(stack: E2EStack, namespaces: string[]): Promise<void> {
  await mustVault(stack, 'PUT', 'sys/policies/acl/bench-read', {
    policy: 'path "secret/data/bench-*" { capabilities = ["read"] }\n',
  });
  await mustVault(stack, 'POST', 'auth/kubernetes/role/bench', {
    bound_service_account_names: ['reader'],
    bound_service_account_namespaces: namespaces,
    token_policies: ['bench-read'],
    token_ttl: '1h',
    token_max_ttl: '24h',
  });
  for (const ns of namespaces) {
    await must(stack, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await must(stack, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'reader' },
    });
    await must(stack, 'POST', `/apis/external-secrets.io/v1/namespaces/${ns}/secretstores`, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: 'vault' },
      spec: {
        provider: {
          vault: {
            server: stack.vault.addr,
            path: 'secret',
            version: 'v2',
            auth: { kubernetes: { mountPath: 'kubernetes', role: 'bench', serviceAccountRef: { name: 'reader' } } },
          },
        },
      },
    });
    for (let p = 0; p < PATHS_PER_NAMESPACE; p++)
      await mustVault(stack, 'POST', `secret/data/${ns}/app-${p}`, {
        data: { username: `user-${p}`, password: `pw-${ns}-${p}` },
      });
  }
  const all = namespaces.flatMap((ns) => Array.from({ length: ES_PER_NAMESPACE }, (_, e) => ({ ns, e })));
  await inParallel(all, 16, ({ ns, e }) =>
    must(stack, 'POST', `/apis/external-secrets.io/v1/namespaces/${ns}/externalsecrets`, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      metadata: { name: `es-${e}` },
      spec: {
        secretStoreRef: { name: 'vault', kind: 'SecretStore' },
        refreshInterval: `${REFRESH_SECONDS}s`,
        data: [
          { secretKey: 'password', remoteRef: { key: `${ns}/app-${e % PATHS_PER_NAMESPACE}`, property: 'password' } },
        ],
      },
    }),
  );
}

/** How many managed Secrets hold exactly the value their ExternalSecret asks for. */
async function correctSecrets(stack: E2EStack): Promise<number> {
  const res = await stack.cp.request(
    'GET',
    '/api/v1/secrets?labelSelector=reconcile.external-secrets.io%2Fmanaged%3Dtrue',
  );
  const items =
    (res.body as { items?: Array<{ metadata: { name: string; namespace: string }; data?: Record<string, string> }> })
      .items ?? [];
  return items.filter((s) => {
    const e = Number(s.metadata.name.replace(/^es-/, ''));
    return Buffer.from(s.data?.password ?? '', 'base64').toString('utf8') === expected(s.metadata.namespace, e);
  }).length;
}

function vaultFigures(prefix: string, entries: ReturnType<typeof readAudit>): Figures {
  const out: Figures = {};
  for (const [kind, n] of Object.entries(countByKind(entries))) out[`${prefix}vault_${kind.replace(/-/g, '_')}`] = n;
  out[`${prefix}vault_requests_total`] = entries.filter((e) => e.type === 'request').length;
  out[`${prefix}vault_logins_ok`] = kubernetesLogins(entries).filter((l) => l.ok).length;
  return out;
}

// Writes the apiserver counts that are not the controller's: its own identity Lease (renewed every 10 s;
// the controller runs without leader election here) and the TokenReviews OpenBao sends for each login.
const NOT_THE_CONTROLLERS = new Set(['leases', 'tokenreviews']);

function kubeFigures(prefix: string, writes: Record<string, number>): Figures {
  const out: Figures = {};
  for (const [resource, n] of Object.entries({ secrets: 0, ...writes }))
    out[`${prefix}kube_writes_${resource.replace(/\//g, '_')}`] = n;
  out[`${prefix}kube_writes_by_controller`] = Object.entries(writes)
    .filter(([r]) => !NOT_THE_CONTROLLERS.has(r))
    .reduce((s, [, n]) => s + n, 0);
  return out;
}

export async function benchController(): Promise<Figures> {
  await runSetup({ steps: setupSteps(['cluster']) }); // the first run builds the binaries (minutes) and installs OpenBao
  const stack = await startE2E({ webhook: false, controller: false, log: () => undefined });
  const figures: Figures = { vault: stack.vault.version, kube_apiserver: 'v1.34.4 (real)' };
  try {
    const auditPath = stack.vault.auditLogPath;
    if (!auditPath) throw new Error('benchmark: the Vault has no audit log');
    const namespaces = Array.from({ length: NAMESPACE_COUNT }, (_, i) => `bench-${i}`);
    const tSeed = performance.now();
    await seed(stack, namespaces);
    const total = NAMESPACE_COUNT * ES_PER_NAMESPACE;
    Object.assign(figures, {
      external_secrets: total,
      distinct_vault_paths: NAMESPACE_COUNT * PATHS_PER_NAMESPACE,
      vault_identities: NAMESPACE_COUNT,
      refresh_interval_s: REFRESH_SECONDS,
      controller_workers: CONTROLLER_WORKERS,
    });
    figures.seed_ms = Math.round(performance.now() - tSeed);

    const auditFrom = readAudit(auditPath).length;
    const writesFrom = await apiserverWrites(stack.cp);
    const t0 = performance.now();
    const controller = await stack.startController({
      leaderElect: false,
      extraArgs: ['--workers', String(CONTROLLER_WORKERS)],
    });
    figures.controller_ready_ms = Math.round(performance.now() - t0);
    await waitFor(async () => ((await correctSecrets(stack)) >= total ? true : undefined), {
      what: 'every Secret to hold its value',
      timeoutMs: 600_000,
      intervalMs: 250,
    });
    figures.initial_all_secrets_correct_ms = Math.round(performance.now() - t0);
    const synced = processStats(controller.proc.pid);
    const initialAudit = readAudit(auditPath).slice(auditFrom);
    Object.assign(
      figures,
      vaultFigures('initial_', initialAudit),
      kubeFigures('initial_', delta(writesFrom, await apiserverWrites(stack.cp))),
    );
    Object.assign(figures, { initial_controller_cpu_s: synced.cpuSeconds, initial_controller_rss_mb: synced.rssMb });

    // One refresh interval with nothing changed in Vault: reads are due, writes are not.
    const steadyAudit = readAudit(auditPath).length;
    const steadyWrites = await apiserverWrites(stack.cp);
    const cpuBefore = processStats(controller.proc.pid).cpuSeconds;
    const tRefresh = Date.now();
    await waitFor(() => Promise.resolve(Date.now() - tRefresh >= REFRESH_SECONDS * 1000 * 1.2 ? true : undefined), {
      what: 'one refresh interval',
      timeoutMs: REFRESH_SECONDS * 2000,
      intervalMs: 500,
    });
    const after = processStats(controller.proc.pid);
    Object.assign(
      figures,
      vaultFigures('refresh_', readAudit(auditPath).slice(steadyAudit)),
      kubeFigures('refresh_', delta(steadyWrites, await apiserverWrites(stack.cp))),
    );
    figures.refresh_window_s = Math.round(REFRESH_SECONDS * 1.2);
    // Refresh times are jittered: in 1.2 intervals some ExternalSecrets refresh twice. Each refresh writes
    // its status (refreshTime) once, so that count normalises the reads.
    const refreshes = Number(figures.refresh_kube_writes_externalsecrets_status ?? 0);
    figures.refresh_es_refreshes = refreshes;
    figures.refresh_vault_kv_reads_per_100_refreshes = refreshes
      ? Math.round((Number(figures.refresh_vault_kv_read ?? 0) / refreshes) * 1000) / 10
      : 'n/a';
    figures.refresh_controller_cpu_s = Math.round((after.cpuSeconds - cpuBefore) * 100) / 100;
    figures.refresh_all_secrets_still_correct = (await correctSecrets(stack)) === total ? 'yes' : 'NO';
    Object.assign(figures, {
      controller_rss_mb: after.rssMb,
      controller_peak_rss_mb: after.peakRssMb,
      controller_cpu_s_total: after.cpuSeconds,
    });
  } finally {
    await stack.stop();
  }
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  benchController().then(
    (f) => {
      for (const [k, v] of Object.entries(f)) process.stdout.write(`${k.padEnd(44)} ${v}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
