// Real tier (#23 item 1): an unchanged ESO VaultDynamicSecret generator manifest
// (generators.external-secrets.io/v1alpha1) read by an ExternalSecret's dataFrom[].sourceRef.generatorRef,
// on OpenBao 2.7.2's database engine and PostgreSQL 15, lease 60 s and max TTL 240 s, refreshInterval 30 s.
// ESO would log in and mint a credential at each of the ~9 refreshes, never renew, never revoke (its
// Cleanup returns nil). vaultgate: a client logging in every second with the Secret's credential never
// fails; the refreshes re-mint nothing (the lease is renewed); the credential is replaced before the max
// TTL, and the replaced one revoked (its PostgreSQL role dropped); no value in status, Events or the log.
// The same manifest without a serviceAccountRef is refused at admission (a SecretStore's rule), naming the field.
// Removing the generatorRef from an ExternalSecret, or deleting it, revokes its leases: OpenBao's
// sys/leases/lookup no longer knows them, and their PostgreSQL roles are dropped (ESO leaves them to expire).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import {
  configureDatabaseEngine,
  postgresSkipReason,
  startPostgres,
  type PostgresServer,
} from '../harness/postgres.ts';
import { realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const skip = tier.skip || postgresSkipReason();
const NS = 'team-gen';
const ES_PATH = `/apis/external-secrets.io/v1/namespaces/${NS}/externalsecrets/app-db`;
const SECRET_PATH = `/api/v1/namespaces/${NS}/secrets/app-db`;
const LEASE_S = 60;
const MAX_S = 240;
const REFRESH_S = 30;
const GEN = 'generators.external-secrets.io/v1alpha1';

type Creds = { username: string; password: string };

void describe('ESO VaultDynamicSecret generator on OpenBao 2.7.2 + PostgreSQL 15 (real servers)', { skip }, () => {
  let stack: E2EStack;
  let pg: PostgresServer;
  const passwords = new Set<string>();

  const readCreds = async (): Promise<Creds | undefined> => {
    const res = await stack.cp.request('GET', SECRET_PATH);
    if (res.status !== 200) return undefined;
    const data = (res.body as { data?: Record<string, string> }).data ?? {};
    const dec = (k: string): string => Buffer.from(data[k] ?? '', 'base64').toString('utf8');
    return { username: dec('username'), password: dec('password') };
  };
  type Kept = { lease?: { id?: string; renewedAt?: number }; previous?: Array<{ id: string }> };
  /** The generator state kept for an ExternalSecret, from the state Secret it owns (ids and times only). */
  const keptState = async (es = 'app-db'): Promise<Kept | undefined> => {
    const uid = (
      (await stack.cp.request('GET', ES_PATH.replace(/app-db$/, es))).body as { metadata?: { uid?: string } }
    ).metadata?.uid;
    if (!uid) return undefined;
    const res = await stack.cp.request('GET', `/api/v1/namespaces/${NS}/secrets/esgen-${uid}-0`);
    const text = (res.body as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations?.[
      'vaultgate.io/generator-lease'
    ];
    return res.status === 200 && text ? (JSON.parse(text) as Kept) : undefined;
  };
  const keptLease = async (): Promise<Kept['lease']> => (await keptState())?.lease;
  /** Whether OpenBao still knows a lease (sys/leases/lookup answers 400 "invalid lease" once it is revoked). */
  const leaseKnown = async (id: string): Promise<boolean> =>
    (await stack.vaultRoot('PUT', 'sys/leases/lookup', { lease_id: id })).status === 200;
  const externalSecret = (name: string, generatorRef: Record<string, unknown>): Record<string, unknown> => ({
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { name, namespace: NS },
    spec: {
      refreshInterval: `${REFRESH_S}s`,
      target: { name },
      dataFrom: [{ sourceRef: { generatorRef: { apiVersion: GEN, ...generatorRef } } }],
    },
  });
  const generator = (server: string): Record<string, unknown> => ({
    apiVersion: GEN,
    kind: 'VaultDynamicSecret',
    metadata: { name: 'pg', namespace: NS },
    spec: {
      path: '/database/creds/app',
      method: 'GET',
      provider: {
        server,
        auth: {
          kubernetes: {
            mountPath: 'kubernetes',
            role: 'team-gen-app',
            serviceAccountRef: { name: 'app', audiences: ['vault'] },
          },
        },
      },
    },
  });

  before(async () => {
    [stack, pg] = await Promise.all([startE2E({ controllerManager: true }), startPostgres()]);
    await configureDatabaseEngine({ addr: stack.vault.addr, token: stack.vault.rootToken }, pg, {
      role: 'app',
      defaultTtl: `${LEASE_S}s`,
      maxTtl: `${MAX_S}s`,
    });
    const must = async (m: string, p: string, b?: unknown): Promise<void> => {
      const r = await stack.vaultRoot(m, p, b);
      if (r.status >= 300) throw new Error(`${m} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    await must('PUT', 'sys/policies/acl/team-gen-creds', {
      policy: [
        'path "database/creds/app" { capabilities = ["read"] }',
        'path "sys/leases/renew" { capabilities = ["update"] }',
        'path "sys/leases/revoke" { capabilities = ["update"] }',
      ].join('\n'),
    });
    await must('POST', 'auth/kubernetes/role/team-gen-app', {
      bound_service_account_names: ['app'],
      bound_service_account_namespaces: [NS],
      audience: 'vault',
      token_policies: ['team-gen-creds'],
      token_ttl: '1h',
      token_max_ttl: '24h',
    });
    await stack.cp.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: NS } },
    ]);
  });
  after(async () => {
    await stack?.stop();
    await pg?.stop();
  });

  void test("the generator's provider gets the SecretStore rules: no serviceAccountRef is refused, naming the field and the rule", async () => {
    const g = generator(stack.vault.addr);
    const spec = g.spec as { provider: { auth: unknown } };
    spec.provider.auth = { kubernetes: { mountPath: 'kubernetes', role: 'team-gen-app' } };
    await assert.rejects(stack.kubectlApply(g), (err: Error) => {
      assert.match(err.message, /spec\.provider\.auth\.kubernetes\.serviceAccountRef/);
      assert.match(err.message, /eso\.store\.kubernetes-identity/);
      return true;
    });
  });

  void test(
    'refreshes re-mint nothing, the lease is renewed, replaced before the max TTL and the replaced one revoked; the client never fails',
    { timeout: 12 * 60_000 },
    async () => {
      await stack.kubectlApply(generator(stack.vault.addr));
      await stack.kubectlApply(externalSecret('app-db', { kind: 'VaultDynamicSecret', name: 'pg' }));
      await waitFor(async () => ((await readCreds())?.password ? true : undefined), {
        what: 'Secret app-db with a credential',
        timeoutMs: 90_000,
        intervalMs: 250,
      }).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
      });

      const started = Date.now();
      const runFor = MAX_S * 1000 + 40_000;
      const usernames: string[] = [];
      const failures: string[] = [];
      const seenRoles = new Set<string>();
      const refreshTimes = new Set<string>();
      const renewals = new Set<number>();
      let queries = 0;
      while (Date.now() - started < runFor) {
        const tick = Date.now();
        const creds = await readCreds();
        if (creds?.password) {
          passwords.add(creds.password);
          if (usernames.at(-1) !== creds.username) usernames.push(creds.username);
          const q = await pg.query('SELECT 1', { user: creds.username, password: creds.password });
          queries++;
          if (!q.ok) failures.push(`${new Date().toISOString()} ${creds.username}: ${q.stderr.split('\n')[0]}`);
        } else failures.push(`${new Date().toISOString()} no credential in the Secret`);
        for (const r of await pg.loginRoles()) seenRoles.add(r);
        const es = (await stack.cp.request('GET', ES_PATH)).body as { status?: { refreshTime?: string } };
        if (es.status?.refreshTime) refreshTimes.add(es.status.refreshTime);
        const lease = await keptLease();
        if (lease?.renewedAt) renewals.add(lease.renewedAt);
        await sleep(Math.max(0, 1000 - (Date.now() - tick)));
      }
      const live = await pg.loginRoles();
      process.stderr.write(
        `[eso-generator] ${queries} queries, ${failures.length} failures, ${refreshTimes.size} refreshes, ${usernames.length} credentials written, ${seenRoles.size} minted (roles seen), ${renewals.size} renewals, ${live.length} roles live at the end\n`,
      );
      assert.deepEqual(failures, [], `the client failed:\n${failures.slice(0, 10).join('\n')}\n${stack.diagnostics()}`);
      assert.ok(refreshTimes.size >= 6, `the ExternalSecret refreshed ${refreshTimes.size} times`);
      // ESO: one credential per refresh. Here: the first and one replacement before the max TTL.
      assert.ok(usernames.length >= 2 && usernames.length <= 3, `${usernames.length} credentials`);
      assert.equal(
        seenRoles.size,
        usernames.length,
        'every credential minted was written (nothing minted at a refresh)',
      );
      assert.ok(renewals.size >= 2, `the lease was renewed (${renewals.size})`);
      const current = await readCreds();
      assert.ok(live.includes(current!.username), 'the current credential is not revoked');
      for (const name of usernames.slice(0, -2))
        assert.ok(!live.includes(name), `replaced credential ${name} was revoked`);
      assert.ok(live.length <= 2, `${live.length} roles live`);
    },
  );

  void test('no form of a credential in the ExternalSecret status, Events or the controller log', async () => {
    assert.ok(passwords.size >= 1);
    const status = JSON.stringify((await stack.cp.request('GET', ES_PATH)).body);
    const events = (await stack.cp.request('GET', `/api/v1/namespaces/${NS}/events`)).text;
    const log = readFileSync(stack.controller!.logPath, 'utf8');
    for (const p of passwords)
      for (const [where, text] of [
        ['status', status],
        ['events', events],
        ['controller log', log],
      ] as const)
        assert.ok(
          !text.includes(p) && !text.includes(Buffer.from(p).toString('base64')),
          `a password is in the ${where}`,
        );
  });

  void test('removing the generatorRef revokes its lease after the Secret was rewritten; deleting the ExternalSecret revokes its leases', async () => {
    const t0 = Date.now();
    // A second ExternalSecret on the same generator, then its generatorRef replaced by a Password generator.
    await stack.kubectlApply([
      { apiVersion: GEN, kind: 'Password', metadata: { name: 'pw', namespace: NS }, spec: { length: 24 } },
      externalSecret('other', { kind: 'VaultDynamicSecret', name: 'pg' }),
    ]);
    const other = await waitFor(async () => (await keptState('other'))?.lease?.id, {
      what: 'ExternalSecret other holding a lease',
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    const otherPath = ES_PATH.replace(/app-db$/, 'other');
    const finalizers = async (path: string): Promise<string[] | undefined> => {
      const r = await stack.cp.request('GET', path);
      return r.status === 200
        ? ((r.body as { metadata: { finalizers?: string[] } }).metadata.finalizers ?? [])
        : undefined;
    };
    assert.deepEqual(await finalizers(otherPath), ['vaultgate.io/generator-leases']);
    const otherUser = await waitFor(
      async () => {
        const r = await stack.cp.request('GET', `/api/v1/namespaces/${NS}/secrets/other`);
        const u = (r.body as { data?: Record<string, string> }).data?.username;
        return u ? Buffer.from(u, 'base64').toString('utf8') : undefined;
      },
      { what: 'Secret other with a credential', timeoutMs: 30_000, intervalMs: 250 },
    );
    assert.ok((await pg.loginRoles()).includes(otherUser));
    await stack.kubectlApply(externalSecret('other', { kind: 'Password', name: 'pw' }));
    await waitFor(async () => ((await finalizers(otherPath))?.length === 0 ? true : undefined), {
      what: "ExternalSecret other's finalizer removed",
      timeoutMs: 60_000,
      intervalMs: 250,
    }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
    });
    assert.equal(await leaseKnown(other), false, `lease ${other} revoked`);
    assert.ok(!(await pg.loginRoles()).includes(otherUser), `role ${otherUser} dropped`);
    const removedMs = Date.now() - t0;

    // Deleting app-db: its current lease (and a replaced one still in its grace) revoked before it goes.
    const kept = await keptState();
    const ids = [kept?.lease?.id, ...(kept?.previous ?? []).map((p) => p.id)].filter((x): x is string => !!x);
    const user = (await readCreds())!.username;
    assert.ok(ids.length >= 1 && (await leaseKnown(ids[0]!)));
    assert.ok((await pg.loginRoles()).includes(user));
    const t1 = Date.now();
    await stack.cp.request('DELETE', ES_PATH);
    await waitFor(async () => ((await stack.cp.request('GET', ES_PATH)).status === 404 ? true : undefined), {
      what: 'ExternalSecret app-db deleted',
      timeoutMs: 60_000,
      intervalMs: 250,
    }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
    });
    const deletedMs = Date.now() - t1;
    for (const id of ids) assert.equal(await leaseKnown(id), false, `lease ${id} revoked`);
    const live = await pg.loginRoles();
    assert.ok(!live.includes(user), `role ${user} dropped`);
    process.stderr.write(
      `[eso-generator] generatorRef removed: revoked and finalizer off in ${removedMs} ms; ExternalSecret deleted: ${ids.length} lease(s) revoked, gone in ${deletedMs} ms; ${live.length} roles live\n`,
    );
  });
});
