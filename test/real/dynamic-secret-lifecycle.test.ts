// Real tier (#23): a VaultDynamicSecret keeps a PostgreSQL 15 credential minted by OpenBao 2.7.2's database
// engine alive in a Secret, with short TTLs (lease 60 s, max TTL 180 s): a client that logs in with the
// Secret's credential every second never fails over two max TTLs; every replaced credential is revoked
// (its PostgreSQL role dropped) and only replaced ones are; the controller killed with SIGKILL mid-lifecycle
// re-mints nothing when it comes back; deleting the object revokes its lease; the credential appears in no
// status, Event, controller log or metric.
//
// The consumer is a process-level client (this test re-reading the Secret each second), not a pod: it
// takes a new credential within a second of its write, as a restarted pod would once rolled; with no
// rollout targets the replaced lease is revoked after the grace.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { condition, type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import type { ControllerHandle } from '../harness/e2e-processes.ts';
import {
  configureDatabaseEngine,
  postgresSkipReason,
  startPostgres,
  type PostgresServer,
} from '../harness/postgres.ts';
import { credentialSurfaces } from '../harness/credential-surfaces.ts';
import { realTier } from '../harness/real-tier.ts';
import { assertNoSecretIn } from '../harness/rollout-checks.ts';
import { createTenantStore, LEASE_RULES } from '../harness/tenant-store.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const skip = tier.skip || postgresSkipReason();
const NS = 'team-db';
const VDS_PATH = `/apis/vaultgate.io/v1alpha1/namespaces/${NS}/vaultdynamicsecrets/app-db`;
const SECRET_PATH = `/api/v1/namespaces/${NS}/secrets/app-db`;
const LEASE_S = 60;
const MAX_S = 180;
const MIN_VALIDITY_S = 60;

interface Vds {
  metadata: { uid: string };
  status?: {
    lease?: {
      id: string;
      issuedAt: string;
      renewedAt?: string;
      expiresAt: string;
      maxExpiresAt?: string;
      tokenAccessor?: string;
    };
    previous?: unknown[];
    conditions?: unknown[];
  };
}
type Creds = { username: string; password: string };

void describe('VaultDynamicSecret lifecycle on OpenBao 2.7.2 + PostgreSQL 15 (real servers)', { skip }, () => {
  let stack: E2EStack;
  let pg: PostgresServer;
  const passwords = new Set<string>();
  const usernames: string[] = [];
  const failures: string[] = [];
  let queries = 0;
  let controller: ControllerHandle | undefined;

  const readCreds = async (): Promise<Creds | undefined> => {
    const res = await stack.cp.request('GET', SECRET_PATH);
    if (res.status !== 200) return undefined;
    const data = (res.body as { data?: Record<string, string> }).data ?? {};
    const dec = (k: string): string => Buffer.from(data[k] ?? '', 'base64').toString('utf8');
    return { username: dec('username'), password: dec('password') };
  };
  const vds = async (): Promise<Vds> => (await stack.cp.request('GET', VDS_PATH)).body as Vds;

  before(async () => {
    [stack, pg] = await Promise.all([startE2E({ controllerManager: true }), startPostgres()]);
    // The database engine, its role, and the tenant's Vault identity, as a Vault admin sets them up.
    await configureDatabaseEngine({ addr: stack.vault.addr, token: stack.vault.rootToken }, pg, {
      role: 'app',
      defaultTtl: `${LEASE_S}s`,
      maxTtl: `${MAX_S}s`,
    });
    await createTenantStore(stack, {
      namespace: NS,
      role: 'team-db-app',
      rules: ['path "database/creds/app" { capabilities = ["read"] }', ...LEASE_RULES],
    });
  });
  after(async () => {
    await stack?.stop();
    await pg?.stop();
  });

  void test(
    'over two max TTLs the client never fails, replaced credentials are revoked, a SIGKILLed controller re-mints nothing',
    { timeout: 15 * 60_000 },
    async () => {
      await stack.kubectlApply({
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultDynamicSecret',
        metadata: { name: 'app-db', namespace: NS },
        spec: {
          storeRef: { name: 'vault' },
          path: 'database/creds/app',
          target: { name: 'app-db' },
          leasePolicy: { minValidity: `${MIN_VALIDITY_S}s` },
          revocation: { grace: '3s' },
        },
      });
      await waitFor(async () => ((await readCreds())?.password ? true : undefined), {
        what: 'Secret app-db with a credential',
        timeoutMs: 90_000,
        intervalMs: 250,
      }).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
      });

      const started = Date.now();
      const seenRoles = new Set<string>();
      const runFor = 2 * MAX_S * 1000 + 20_000;
      let killedAt = 0;
      let leaseBeforeKill: string | undefined;
      let issuedBeforeKill: string | undefined;
      let rolesAtKill = 0;
      let restartChecked = false;
      let restartedAt = 0;
      const issued: number[] = [];
      while (Date.now() - started < runFor) {
        const tick = Date.now();
        const creds = await readCreds();
        if (creds?.password) {
          passwords.add(creds.password);
          if (usernames.at(-1) !== creds.username) usernames.push(creds.username);
          const q = await pg.query('SELECT 1', { user: creds.username, password: creds.password });
          queries++;
          if (!q.ok) failures.push(`${new Date().toISOString()} ${creds.username}: ${q.stderr.split('\n')[0]}`);
        } else {
          failures.push(`${new Date().toISOString()} no credential in the Secret`);
        }
        for (const r of await pg.loginRoles()) seenRoles.add(r);
        const s = await vds();
        const issuedAt = s.status?.lease?.issuedAt ? Date.parse(s.status.lease.issuedAt) : undefined;
        if (issuedAt !== undefined && issued.at(-1) !== issuedAt) issued.push(issuedAt);
        // Kill the controller (SIGKILL) right after a renewal of a rotated credential: it must come back, renew
        // that lease and mint nothing (the lease then has its duration plus minValidity left, 120 s).
        const renewedAt = s.status?.lease?.renewedAt ? Date.parse(s.status.lease.renewedAt) : undefined;
        if (!killedAt && usernames.length >= 2 && renewedAt !== undefined && Date.now() - renewedAt < 5_000) {
          leaseBeforeKill = s.status?.lease?.id;
          issuedBeforeKill = s.status?.lease?.issuedAt;
          rolesAtKill = seenRoles.size;
          await stack.procs.stop('controller', { kill: true });
          killedAt = Date.now();
          await sleep(5_000);
          controller = await stack.startController();
          restartedAt = Date.now();
        }
        // Before that lease's rotation is due (issue + max TTL - minValidity), the restarted controller holds it.
        if (restartedAt && !restartChecked && Date.now() - restartedAt > 10_000) {
          restartChecked = true;
          const after = await vds();
          if (Date.now() < Date.parse(issuedBeforeKill!) + (MAX_S - MIN_VALIDITY_S - 5) * 1000) {
            assert.equal(
              after.status?.lease?.id,
              leaseBeforeKill,
              'the restarted controller kept the lease it found in status',
            );
            assert.equal(after.status?.lease?.issuedAt, issuedBeforeKill);
            assert.equal(seenRoles.size, rolesAtKill, 'nothing minted since the kill');
          }
        }
        await sleep(Math.max(0, 1000 - (Date.now() - tick)));
      }
      process.stderr.write(
        `[vds] ${queries} queries, ${failures.length} failures, ${usernames.length} credentials written, ${seenRoles.size} roles seen, controller killed at +${Math.round((killedAt - started) / 1000)}s\n`,
      );
      assert.deepEqual(failures, [], `the client failed:\n${failures.slice(0, 10).join('\n')}\n${stack.diagnostics()}`);
      assert.ok(killedAt > 0, 'the controller was killed mid-lifecycle');
      // Every credential lived until its rotation was due: none was minted because the controller restarted.
      const gaps = issued.slice(1).map((x, i) => Math.round((x - issued[i]!) / 1000));
      process.stderr.write(`[vds] seconds between credentials: ${gaps.join(', ')}\n`);
      for (const g of gaps)
        assert.ok(
          g >= MAX_S - MIN_VALIDITY_S - 15 && g <= MAX_S - MIN_VALIDITY_S + 30,
          `a credential replaced after ${g}s (due at ${MAX_S - MIN_VALIDITY_S}s)`,
        );
      assert.ok(
        usernames.length >= 3,
        `rotations before the max TTL: ${usernames.length} credentials in ${runFor / 1000}s`,
      );
      assert.equal(
        seenRoles.size,
        usernames.length,
        'every credential minted was written to the Secret (no mint thrown away)',
      );

      // Revoked leases are exactly the replaced ones: only the current credential (and at most one in its
      // grace) still has a PostgreSQL role; the current one logs in.
      const current = await readCreds();
      const live = await pg.loginRoles();
      assert.ok(live.includes(current!.username), 'the current credential is not revoked');
      assert.ok(live.length <= 2, `replaced credentials are revoked, not left to pile up: ${live.length} roles live`);
      for (const name of usernames.slice(0, -2))
        assert.ok(!live.includes(name), `replaced credential ${name} was revoked`);
      const s = await vds();
      assert.equal(condition(s as unknown as Record<string, unknown>)?.status, 'True');
      // The rotations were for the max TTL, learned from a renewal Vault capped (no maxTTL in the spec).
      const events = (await stack.cp.request('GET', `/api/v1/namespaces/${NS}/events`)).body as {
        items: Array<{ reason?: string; note?: string; message?: string }>;
      };
      assert.ok(
        events.items.some((e) => e.reason === 'CredentialRotated' && /MaxTTL/.test(e.note ?? e.message ?? '')),
        JSON.stringify(events.items.map((e) => e.reason)),
      );
    },
  );

  void test('no form of a credential in status, Events, the controller log or its metrics', async () => {
    assert.ok(passwords.size >= 1);
    const texts = await credentialSurfaces(stack, {
      namespace: NS,
      objectPath: VDS_PATH,
      controller: controller ?? stack.controller!,
    });
    assertNoSecretIn(texts, passwords, 'a password');
    assert.match(texts.metrics, /vaultgate_dynamic_secret_operations_total\{operation="renew",result="success"\}/);
  });

  void test('deleting the object revokes its lease: the credential no longer logs in', async () => {
    const creds = await readCreds();
    assert.ok(creds);
    assert.ok((await pg.query('SELECT 1', { user: creds.username, password: creds.password })).ok);
    const res = await stack.cp.request('DELETE', VDS_PATH);
    assert.ok(res.status === 200 || res.status === 202, res.text);
    await waitFor(async () => ((await stack.cp.request('GET', VDS_PATH)).status === 404 ? true : undefined), {
      what: 'the VaultDynamicSecret gone (finalizer released)',
      timeoutMs: 60_000,
    });
    const live = await pg.loginRoles();
    assert.ok(!live.includes(creds.username), "the deleted object's lease was revoked (its role dropped)");
    assert.equal((await pg.query('SELECT 1', { user: creds.username, password: creds.password })).ok, false);
  });
});
