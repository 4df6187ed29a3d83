// `npm run bench -- lifecycle` (issue #23): the lifecycle of one dynamic database credential, OpenBao 2.7.2's
// database engine minting PostgreSQL 15 logins with a short lease (60 s, max TTL 180 s), consumed by a
// client that logs in to PostgreSQL with the Secret's current credential every second, under three
// systems one after another, each on a fresh control plane, OpenBao and PostgreSQL:
//   (a) ESO v0.16.2 running its own generators.external-secrets.io/v1alpha1 VaultDynamicSecret, referenced
//       from an ExternalSecret's dataFrom[].sourceRef.generatorRef, refreshInterval = the lease TTL (an ESO
//       user's choice: a new credential before the old one expires);
//   (b) vaultgate running the same manifests;
//   (c) vaultgate's own VaultDynamicSecret kind (minValidity 60 s, its other defaults).
// Each namespace has a Deployment consuming the Secret (0 replicas: no kubelet here; kube-controller-manager's
// Deployment and ReplicaSet controllers make every restart a new ReplicaSet), named as a rollout target
// by the ExternalSecret's vaultgate.io/rollout-restart-targets annotation (ESO ignores it, so (a) and (b)
// apply the same object) and by (c)'s spec.rolloutRestartTargets.
//
// Figures, all from outside the system: Vault requests from OpenBao's file audit device (from the CREATE
// of the manifests to the end of the window), per hour of one credential served; leases outstanding at the
// end (sys/leases/lookup on the creds prefix) and Vault tokens left alive; seconds the client failed to log
// in (an expired or revoked credential, or none in the Secret); distinct credentials the client saw;
// restarts (ReplicaSets after the first) per rotation. Printed, not asserted; a system that never
// writes a credential fails the bench after the table. Timing lives here, never in tests.
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROLLERS } from '../harness/controller-manager.ts';
import { readAudit, type AuditEntry } from '../harness/openbao-audit.ts';
import { startPeerStack, type PeerStack } from '../harness/peer-stack.ts';
import { configureDatabaseEngine, startPostgres, type PostgresServer } from '../harness/postgres.ts';
import {
  createTenantIdentity,
  LEASE_RULES,
  tenantSecretStore,
  tenantVaultAuth,
  type TenantStore,
} from '../harness/tenant-store.ts';
import { waitFor } from '../harness/wait.ts';
import { runSetup, setupSteps } from '../upstream/setup.ts';
import { fmt, ratio, table } from './table.ts';

const LEASE_S = 60;
const MAX_S = 180;
/** vaultgate's kind: replace 60 s before the max TTL (the generator path keeps its fixed 2 min). */
const MIN_VALIDITY_S = 60;
/**
 * The client's window after the first credential: 420 s is past start-up (two logins, the first credential's
 * max-TTL probes) into steady state, over 2 max TTLs; at 150 s start-up made the three systems' requests
 * equal (8, 8, 8). The three runs take ~25 min.
 */
const WINDOW_S = Number(process.env.BENCH_LIFECYCLE_SECONDS ?? 420);
/** The ExternalSecret's refreshInterval in seconds (default the lease TTL; longer shows ESO's expiries, ESO #2198). */
const REFRESH_S = Number(process.env.BENCH_LIFECYCLE_REFRESH_SECONDS ?? LEASE_S);
/** Which systems run: a comma list of a, b, c (default all three). */
const ONLY = (process.env.BENCH_LIFECYCLE_SYSTEMS ?? 'a,b,c').split(',').map((x) => x.trim());
const NS = 'lc';
const GEN = 'generators.external-secrets.io/v1alpha1';
const CREDS_PATH = 'database/creds/app';
/** The tenant's Vault identity (role lc-app, ServiceAccount app); its SecretStore only for system (c). */
const TENANT: TenantStore = {
  namespace: NS,
  role: 'lc-app',
  rules: [`path "${CREDS_PATH}" { capabilities = ["read"] }`, ...LEASE_RULES],
};

type SystemName = 'ESO generator' | 'vaultgate, ESO manifests' | 'vaultgate kind';

interface SystemSpec {
  name: SystemName;
  describe: string;
  start(stack: PeerStack): Promise<{ logName: string }>;
  manifests(stack: PeerStack): object[];
}

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'app', namespace: NS },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'app' } },
    template: {
      metadata: { labels: { app: 'app' } },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'registry.invalid/app:1',
            env: [{ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'app-db', key: 'password' } } }],
          },
        ],
      },
    },
  },
};

/** ESO's manifests as an ESO user writes them: the generator and the ExternalSecret reading it. */
const esoManifests = (stack: PeerStack): object[] => [
  {
    apiVersion: GEN,
    kind: 'VaultDynamicSecret',
    metadata: { name: 'pg', namespace: NS },
    spec: {
      path: `/${CREDS_PATH}`,
      method: 'GET',
      provider: { server: stack.bao.addr, auth: tenantVaultAuth(TENANT) },
    },
  },
  {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: {
      name: 'app-db',
      namespace: NS,
      annotations: { 'vaultgate.io/rollout-restart-targets': 'deployment/app' },
    },
    spec: {
      refreshInterval: `${REFRESH_S}s`,
      target: { name: 'app-db' },
      dataFrom: [{ sourceRef: { generatorRef: { apiVersion: GEN, kind: 'VaultDynamicSecret', name: 'pg' } } }],
    },
  },
];

const SYSTEMS: SystemSpec[] = [
  {
    name: 'ESO generator',
    describe: `eso v0.16.2 (its defaults): its VaultDynamicSecret generator, ExternalSecret refreshInterval ${REFRESH_S}s`,
    start: async (s) => ({ logName: (await s.startEso()).name }),
    manifests: esoManifests,
  },
  {
    name: 'vaultgate, ESO manifests',
    describe: 'vaultgate controller (production bundle, its defaults), the same two ESO manifests',
    start: async (s) => ({ logName: (await s.startVaultgate({ bundled: true })).name }),
    manifests: esoManifests,
  },
  {
    name: 'vaultgate kind',
    describe: `vaultgate controller, vaultgate.io/v1alpha1 VaultDynamicSecret (leasePolicy.minValidity ${MIN_VALIDITY_S}s, rolloutRestartTargets deployment/app)`,
    start: async (s) => ({ logName: (await s.startVaultgate({ bundled: true })).name }),
    manifests: (stack) => [
      tenantSecretStore(stack.bao.addr, TENANT),
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultDynamicSecret',
        metadata: { name: 'app-db', namespace: NS },
        spec: {
          storeRef: { name: 'vault' },
          path: CREDS_PATH,
          target: { name: 'app-db' },
          leasePolicy: { minValidity: `${MIN_VALIDITY_S}s` },
          rolloutRestartTargets: [{ kind: 'Deployment', name: 'app' }],
        },
      },
    ],
  },
];

interface VaultRequests {
  total: number;
  logins: number;
  mints: number;
  renewals: number;
  revocations: number;
  other: number;
}

interface Figures {
  name: SystemName;
  /** Manifests applied → first credential in the Secret. */
  firstCredentialSeconds: number;
  windowSeconds: number;
  checks: number;
  failedSeconds: number;
  /** The first failure's message (no credential in it: psql names the role, never the password). */
  firstFailure?: string;
  credentialsSeen: number;
  rotations: number;
  restarts: number;
  vault: VaultRequests;
  /** Hours from the manifests' CREATE to the end of the window (one credential served all along). */
  hours: number;
  leasesOutstanding: number;
  tokensOutstanding: number;
  loginRolesLive: number;
}

function vaultRequests(entries: readonly AuditEntry[]): VaultRequests {
  const c: VaultRequests = { total: 0, logins: 0, mints: 0, renewals: 0, revocations: 0, other: 0 };
  for (const e of entries) {
    if (e.type !== 'request') continue;
    c.total++;
    const p = e.request.path;
    if (/^auth\/[^/]+\/login$/.test(p)) c.logins++;
    else if (p === CREDS_PATH) c.mints++;
    else if (/^sys\/(leases\/)?renew/.test(p)) c.renewals++;
    else if (/^sys\/(leases\/)?revoke/.test(p)) c.revocations++;
    else c.other++;
  }
  return c;
}

/** Requests by path with lease ids cut off (`sys/leases/revoke/<id>` → `sys/leases/revoke/…`), for the log. */
function requestsByPath(entries: readonly AuditEntry[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries) {
    if (e.type !== 'request') continue;
    const p = `${e.request.operation} ${e.request.path.replace(/^(sys\/(?:leases\/)?(?:renew|revoke|lookup))\/.+/, '$1/…')}`;
    out[p] = (out[p] ?? 0) + 1;
  }
  return out;
}

/** Keys of a Vault LIST (0 when there is nothing to list: Vault answers 404). */
async function listCount(stack: PeerStack, path: string): Promise<number> {
  const res = await stack.vault('GET', `${path}?list=true`);
  if (res.status === 404) return 0;
  if (res.status >= 300) throw new Error(`LIST ${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return ((res.body as { data?: { keys?: unknown[] } }).data?.keys ?? []).length;
}

/** The database engine and role, the tenant's Vault identity, its namespace, ServiceAccount and Deployment. */
async function seed(stack: PeerStack, pg: PostgresServer): Promise<void> {
  await configureDatabaseEngine({ addr: stack.bao.addr, token: stack.bao.rootToken }, pg, {
    role: 'app',
    defaultTtl: `${LEASE_S}s`,
    maxTtl: `${MAX_S}s`,
  });
  await createTenantIdentity({ vaultRoot: (m, p, b) => stack.vault(m, p, b), cp: stack.cp }, TENANT);
  await stack.cp.apply([deployment]);
}

async function readCreds(stack: PeerStack): Promise<{ username: string; password: string } | undefined> {
  const res = await stack.cp.request('GET', `/api/v1/namespaces/${NS}/secrets/app-db`);
  if (res.status !== 200) return undefined;
  const data = (res.body as { data?: Record<string, string> }).data ?? {};
  const dec = (k: string): string => Buffer.from(data[k] ?? '', 'base64').toString('utf8');
  const c = { username: dec('username'), password: dec('password') };
  return c.username && c.password ? c : undefined;
}

async function replicaSets(stack: PeerStack): Promise<number> {
  const res = await stack.cp.request('GET', `/apis/apps/v1/namespaces/${NS}/replicasets`);
  return ((res.body as { items?: unknown[] }).items ?? []).length;
}

async function runSystem(spec: SystemSpec, log: (l: string) => void): Promise<Figures> {
  const [stack, pg] = await Promise.all([
    startPeerStack({
      log: () => undefined,
      controllerManager: { controllers: [...CONTROLLERS, 'deployment-controller', 'replicaset-controller'] },
    }),
    startPostgres(),
  ]);
  try {
    await seed(stack, pg);
    const { logName } = await spec.start(stack);
    const auditFrom = readAudit(stack.auditLog).length;
    const t0 = Date.now();
    await stack.cp.apply(spec.manifests(stack));
    await waitFor(async () => ((await readCreds(stack)) ? true : undefined), {
      what: `${spec.name}: a credential in Secret ${NS}/app-db`,
      timeoutMs: 180_000,
      intervalMs: 250,
    }).catch((err: unknown) => {
      throw new Error(`${spec.name} did not run: ${(err as Error).message}\n${stack.group.logTail(logName, 40)}`);
    });
    const firstCredentialSeconds = (Date.now() - t0) / 1000;
    log(`[lifecycle] ${spec.name}: first credential ${firstCredentialSeconds.toFixed(1)}s after the CREATE`);

    const usernames: string[] = [];
    let checks = 0;
    let failedSeconds = 0;
    let firstFailure: string | undefined;
    const started = Date.now();
    let last = started;
    while (Date.now() - started < WINDOW_S * 1000) {
      const tick = Date.now();
      const creds = await readCreds(stack);
      let ok = false;
      let why = 'no credential in the Secret';
      if (creds) {
        if (usernames.at(-1) !== creds.username) usernames.push(creds.username);
        const q = await pg.query('SELECT 1', { user: creds.username, password: creds.password });
        ok = q.ok;
        // The role name is half of the credential: cut from the message.
        // PostgreSQL names it as `user "…"` (bad password) or `role "…"` (a dropped role: revoked or expired).
        why = (q.stderr.split('\n')[0] ?? '').replace(/\b(user|role) "[^"]*"/g, '$1 "…"');
      }
      checks++;
      // The time since the previous check, charged to this one: the client held this credential all along.
      if (!ok) {
        failedSeconds += (Date.now() - last) / 1000;
        firstFailure ??= `+${Math.round((tick - started) / 1000)}s ${why}`;
      }
      last = Date.now();
      await sleep(Math.max(0, 1000 - (Date.now() - tick)));
    }
    const entries = readAudit(stack.auditLog).slice(auditFrom);
    const vault = vaultRequests(entries);
    const end = Date.now();
    const restarts = Math.max(0, (await replicaSets(stack)) - 1);
    const figures: Figures = {
      name: spec.name,
      firstCredentialSeconds,
      windowSeconds: (end - started) / 1000,
      checks,
      failedSeconds,
      ...(firstFailure ? { firstFailure } : {}),
      credentialsSeen: new Set(usernames).size,
      rotations: Math.max(0, new Set(usernames).size - 1),
      restarts,
      vault,
      hours: (end - t0) / 3_600_000,
      leasesOutstanding: await listCount(stack, `sys/leases/lookup/${CREDS_PATH}/`),
      // Less the root token (the bench's and, for vaultgate, its controller's own identity here).
      tokensOutstanding: (await listCount(stack, 'auth/token/accessors')) - 1,
      loginRolesLive: (await pg.loginRoles()).length,
    };
    log(`[lifecycle] ${spec.name}: Vault requests by path: ${JSON.stringify(requestsByPath(entries))}`);
    log(
      `[lifecycle] ${spec.name}: ${checks} logins, ${failedSeconds.toFixed(0)} s failed${firstFailure ? ` (first: ${firstFailure})` : ''}, ${figures.credentialsSeen} credentials, ${vault.total} Vault requests, ${figures.leasesOutstanding} leases outstanding`,
    );
    return figures;
  } finally {
    await stack.stop();
    await pg.stop();
  }
}

// ------------------------------------------------------------------------------------------ the table

export async function benchLifecycle(
  log: (l: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<string> {
  await runSetup({ steps: setupSteps(['cluster', 'eso', 'database']) });
  const results = new Map<SystemName, Figures>();
  const failed: string[] = [];
  for (const [i, spec] of SYSTEMS.entries()) {
    if (!ONLY.includes('abc'[i]!)) continue;
    try {
      results.set(spec.name, await runSystem(spec, log));
    } catch (err) {
      failed.push(`${spec.name}: ${(err as Error).message}`);
      log(`[lifecycle] ${spec.name} FAILED: ${(err as Error).message}`);
    }
  }
  const [eso, vgEso, vgKind] = SYSTEMS.map((s) => results.get(s.name));
  const perHour = (f: Figures, n: number): number => n / f.hours;
  const row = (label: string, get: (f: Figures) => number, digits = 0): [string, ...string[]] => {
    const v = (f?: Figures): number => (f ? get(f) : NaN);
    return [
      label,
      fmt(v(eso), digits),
      fmt(v(vgEso), digits),
      fmt(v(vgKind), digits),
      ratio(v(vgEso), v(eso)),
      ratio(v(vgKind), v(eso)),
    ];
  };
  const rows: Array<[string, ...string[]]> = [
    row('Vault requests per credential-hour', (f) => perHour(f, f.vault.total)),
    row('  logins per credential-hour', (f) => perHour(f, f.vault.logins)),
    row('  credentials minted per credential-hour', (f) => perHour(f, f.vault.mints)),
    row('  lease renewals per credential-hour', (f) => perHour(f, f.vault.renewals)),
    row('  lease revocations per credential-hour', (f) => perHour(f, f.vault.revocations)),
    row('  other requests per credential-hour', (f) => perHour(f, f.vault.other)),
    row('Vault requests in the run (count)', (f) => f.vault.total),
    row('credentials minted in the run (count)', (f) => f.vault.mints),
    row('leases outstanding at the end', (f) => f.leasesOutstanding),
    row('Vault tokens left alive at the end', (f) => f.tokensOutstanding),
    row('PostgreSQL login roles live at the end', (f) => f.loginRolesLive),
    row('seconds the client held a failing credential', (f) => f.failedSeconds),
    row('client logins tried (one a second)', (f) => f.checks),
    row('distinct credentials the client saw', (f) => f.credentialsSeen),
    row('rotations (credential changes seen)', (f) => f.rotations),
    row('restarts of the Deployment', (f) => f.restarts),
    row('restarts per rotation', (f) => (f.rotations > 0 ? f.restarts / f.rotations : NaN), 2),
    row('seconds to the first credential', (f) => f.firstCredentialSeconds, 1),
  ];
  const out = [
    `\n== dynamic database credential lifecycle (issue #23): OpenBao 2.7.2 database engine, PostgreSQL 15, lease ${LEASE_S}s, max TTL ${MAX_S}s, client window ${WINDOW_S}s after the first credential, a login every second`,
    ...SYSTEMS.filter((_, i) => ONLY.includes('abc'[i]!)).map((s) => `   ${s.name.padEnd(24)} ${s.describe}`),
    ...[...results.values()]
      .filter((f) => f.firstFailure)
      .map((f) => `   ${f.name}: first failed login ${f.firstFailure}`),
    table(rows, [
      'figure',
      'ESO generator',
      'vaultgate, ESO manifests',
      'vaultgate kind',
      'vg ESO manifests : ESO',
      'vg kind : ESO',
    ]),
  ].join('\n');
  if (failed.length > 0) {
    console.log(out);
    throw new Error(`lifecycle bench: ${failed.length} system(s) did not run:\n${failed.join('\n')}`);
  }
  return out;
}
