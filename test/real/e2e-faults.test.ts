// Scenario 5 (real tier): faults, on a real OpenBao 2.7.2 with raft storage (initialised and unsealed
// by the harness, so it can be restarted with its state). Vault unreachable (the TCP front refuses
// connections on the same address), sealed (sys/seal, then sys/unseal with the unseal key), rate-limited
// (a sys/quotas/rate-limit quota), killed and started again → Secrets keep their data, status says why,
// retries stay bounded, recovery when Vault returns; the real kube-apiserver restarted during churn →
// everything converges; the controller SIGKILLed mid-run → converges after restart with no duplicate or
// orphaned Vault objects; two controller replicas → one Lease holder, failover when the leader is killed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { condition, type E2EStack, startE2E, waitForObject } from '../harness/e2e-stack.ts';
import { CONTROLLER_IDENTITY } from '../harness/e2e-vault.ts';
import { type AuditEntry, readAudit } from '../harness/openbao-audit.ts';
import { realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-a';
const CHURN = 'churn';

type Obj = Record<string, unknown> & { metadata: { name: string; uid: string; generation?: number } };
interface SecretObj extends Obj {
  data?: Record<string, string>;
}
interface Lease {
  spec?: { holderIdentity?: string; leaseTransitions?: number };
}

const decode = (s: SecretObj | undefined, key: string): string =>
  Buffer.from(s?.data?.[key] ?? '', 'base64').toString('utf8');
const policy = (name: string, namespace: string): object => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace },
  spec: { rules: [{ path: `secret/data/{{namespace}}/${name}/*`, capabilities: ['read'] }] },
});

void describe(
  'e2e 5: faults — Vault unreachable, sealed, rate-limited, restarted; apiserver restart, controller SIGKILL, leader failover',
  { skip: tier.skip },
  () => {
    let stack: E2EStack;

    const audit = (): AuditEntry[] => readAudit(stack.vault.auditLogPath ?? '');
    const mustVault = async (method: string, path: string, body?: unknown): Promise<void> => {
      const r = await stack.vaultRoot(method, path, body);
      assert.ok(r.status < 300, `${method} ${path}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    };

    /** kubectl apply, retried while the apiserver is unavailable (what a CI pipeline's retry does). */
    const applyRetrying = (manifests: object | object[], what: string): Promise<true> =>
      waitFor(
        async () => {
          await stack.kubectlApply(manifests);
          return true as const;
        },
        { what, timeoutMs: 60_000, intervalMs: 300 },
      );

    /** Vault policy names under `vaultgate.<ns>.` (what the controller owns for that namespace). */
    const vaultPolicies = async (ns: string): Promise<string[]> => {
      const r = await stack.vaultRoot('GET', 'sys/policies/acl?list=true');
      return (r.body as { data: { keys: string[] } }).data.keys.filter((k) => k.startsWith(`vaultgate.${ns}.`)).sort();
    };
    const policyNamesIn = async (ns: string): Promise<string[]> => {
      const list = (await stack.cp.request('GET', `/apis/vaultgate.io/v1alpha1/namespaces/${ns}/vaultpolicies`))
        .body as { items: Obj[] };
      return list.items.map((o) => o.metadata.name).sort();
    };
    /** Every VaultPolicy in ns Ready for its generation, and Vault holds exactly their policies. */
    const converged = async (ns: string): Promise<boolean> => {
      const list = (await stack.cp.request('GET', `/apis/vaultgate.io/v1alpha1/namespaces/${ns}/vaultpolicies`))
        .body as { items: Obj[] };
      const allReady = list.items.every((o) => {
        const c = condition(o);
        return (
          c?.status === 'True' &&
          c.observedGeneration === o.metadata.generation &&
          !(o.metadata as { deletionTimestamp?: string }).deletionTimestamp
        );
      });
      const want = list.items.map((o) => `vaultgate.${ns}.${o.metadata.name}`).sort();
      return allReady && JSON.stringify(await vaultPolicies(ns)) === JSON.stringify(want);
    };
    const waitConverged = (ns: string, what: string): Promise<true> =>
      waitFor(async () => ((await converged(ns)) ? (true as const) : undefined), {
        what,
        timeoutMs: 120_000,
        intervalMs: 500,
      }).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
      });

    before(async () => {
      stack = await startE2E({ controllerManager: true, persistentVault: true, controller: { name: 'controller-a' } });
      await stack.cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CHURN } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app-reader', namespace: NS } },
      ]);
      await stack.vaultRoot('POST', 'secret/data/team-a/app/app/db', { data: { password: 'before-outage' } });
      await stack.kubectlApply([
        policy('app', NS),
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultRoleBinding',
          metadata: { name: 'app-reader', namespace: NS },
          spec: { serviceAccounts: ['app-reader'], policies: ['app'], audience: 'vault' },
        },
      ]);
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', NS, 'vrb/app-reader']);
      await stack.kubectlApply([
        {
          apiVersion: 'external-secrets.io/v1',
          kind: 'SecretStore',
          metadata: { name: 'vault-backend', namespace: NS },
          spec: {
            provider: {
              vault: {
                server: stack.vault.addr,
                path: 'secret',
                version: 'v2',
                auth: {
                  kubernetes: {
                    mountPath: 'kubernetes',
                    role: 'vaultgate.team-a.app-reader',
                    serviceAccountRef: { name: 'app-reader', audiences: ['vault'] },
                  },
                },
              },
            },
          },
        },
        {
          apiVersion: 'external-secrets.io/v1',
          kind: 'ExternalSecret',
          metadata: { name: 'app-db', namespace: NS },
          spec: {
            refreshInterval: '2s',
            secretStoreRef: { name: 'vault-backend', kind: 'SecretStore' },
            target: { name: 'app-db' },
            data: [{ secretKey: 'password', remoteRef: { key: 'team-a/app/app/db', property: 'password' } }],
          },
        },
      ]);
    });
    after(async () => {
      await stack?.stop();
    });

    void test('Vault unreachable, then sealed: the Secret keeps its data, the ExternalSecret says why, and recovers when Vault returns', async () => {
      await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => decode(s, 'password') === 'before-outage',
        'Secret app-db synced',
      );

      for (const [fault, start, end] of [
        ['unreachable', () => stack.vault.down(), () => stack.vault.up()],
        ['sealed', () => stack.vault.seal(), () => stack.vault.unseal()],
      ] as const) {
        await start();
        const es = await waitForObject<Obj>(
          stack,
          'externalsecret',
          'app-db',
          NS,
          (o) => condition(o)?.status === 'False',
          `ExternalSecret Ready=False while Vault is ${fault}`,
          60_000,
        );
        const c = condition(es);
        assert.equal(c?.reason, 'SecretSyncedError', `${fault}: ${JSON.stringify(c)}`);
        assert.ok(c?.message && c.message.length > 0, `${fault}: the condition says why`);
        assert.doesNotMatch(c.message, /before-outage|eyJhbGciOi/, 'no secret value or token in the status');
        const kept = await stack.getJson<SecretObj>('secret', 'app-db', NS);
        assert.equal(decode(kept, 'password'), 'before-outage', `${fault}: the Secret keeps its last good data`);
        await end();
        await waitForObject<Obj>(
          stack,
          'externalsecret',
          'app-db',
          NS,
          (o) => condition(o)?.status === 'True',
          `ExternalSecret Ready again after Vault ${fault}`,
          90_000,
        );
      }
      // Vault changed while nobody could read it: the value arrives once it is back.
      await stack.vaultRoot('POST', 'secret/data/team-a/app/app/db', { data: { password: 'after-outage' } });
      await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => decode(s, 'password') === 'after-outage',
        'the new value after recovery',
        60_000,
      );
    });

    void test('rate-limited by a sys/quotas/rate-limit quota: the Secret keeps its data, the ExternalSecret says so, retries back off, the new value arrives once the quota is lifted', async () => {
      const kvPath = 'secret/data/team-a/app/app/db';
      await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => decode(s, 'password') === 'after-outage',
        'Secret app-db synced',
      );
      // OpenBao leaves requests it refuses for a quota out of the audit log unless asked to record them.
      await mustVault('POST', 'sys/quotas/config', { enable_rate_limit_audit_logging: true });
      const from = audit().length;
      // One request an hour under secret/data/team-a/ (OpenBao needs the `*` to cover what is below a path
      // inside a mount): the tenant's next refreshes are refused with 429.
      await mustVault('POST', 'sys/quotas/rate-limit/e2e-team-a-reads', {
        path: 'secret/data/team-a/*',
        rate: 1,
        interval: '1h',
      });
      try {
        const es = await waitForObject<Obj>(
          stack,
          'externalsecret',
          'app-db',
          NS,
          (o) => condition(o)?.status === 'False' && /rate limit/i.test(condition(o)?.message ?? ''),
          'ExternalSecret Ready=False naming the rate limit',
          60_000,
        );
        assert.equal(condition(es)?.reason, 'SecretSyncedError');
        // A request refused for a quota is audited as a request entry with the error (no response entry).
        const refused = (): AuditEntry[] =>
          audit()
            .slice(from)
            .filter(
              (e) =>
                e.type === 'request' && e.request.path === kvPath && /rate limit quota exceeded/.test(e.error ?? ''),
            );
        // Retried, with backoff: a few more refusals must come...
        await waitFor(() => Promise.resolve(refused().length >= 5 ? true : undefined), {
          what: 'the controller to retry the refused read',
          timeoutMs: 60_000,
          intervalMs: 250,
        });
        const t0 = Date.now();
        await waitFor(() => Promise.resolve(Date.now() - t0 >= 10_000 ? true : undefined), {
          what: 'ten more seconds under the quota',
          timeoutMs: 20_000,
          intervalMs: 500,
        });
        const attempts = refused().length;
        // ... but not a hot loop: per-key exponential backoff (5 ms doubling) gives ~15 in the first 20 s; a
        // retry without backoff would be hundreds a second.
        assert.ok(attempts < 60, `bounded retries under the quota: ${attempts} refused reads`);
        process.stderr.write(`[e2e-faults] refused reads under the rate-limit quota: ${attempts}\n`);
        const kept = await stack.getJson<SecretObj>('secret', 'app-db', NS);
        assert.equal(
          decode(kept, 'password'),
          'after-outage',
          'the Secret keeps its last good data while rate-limited',
        );
      } finally {
        await mustVault('DELETE', 'sys/quotas/rate-limit/e2e-team-a-reads');
      }
      await mustVault('POST', kvPath, { data: { password: 'after-rate-limit' } });
      await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => decode(s, 'password') === 'after-rate-limit',
        'the new value once the quota is lifted',
        120_000,
      );
      await waitForObject<Obj>(
        stack,
        'externalsecret',
        'app-db',
        NS,
        (o) => condition(o)?.status === 'True',
        'ExternalSecret Ready again after the quota',
        60_000,
      );
    });

    void test('OpenBao killed and started again (raft storage, unsealed by the harness): state survives, the Secret keeps its data meanwhile, the controller carries on', async () => {
      await mustVault('POST', 'secret/data/team-a/app/app/db', { data: { password: 'before-restart' } });
      await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => decode(s, 'password') === 'before-restart',
        'Secret app-db synced',
      );
      const read = async (path: string): Promise<unknown> => {
        const r = await stack.vaultRoot('GET', path);
        assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
        return (r.body as { data: unknown }).data;
      };
      const objects = [
        'sys/policies/acl/vaultgate.team-a.app',
        'auth/kubernetes/role/vaultgate.team-a.app-reader',
        `sys/policies/acl/${CONTROLLER_IDENTITY.policy}`,
        `auth/kubernetes/role/${CONTROLLER_IDENTITY.role}`,
      ];
      const before = await Promise.all(objects.map(read));
      const kvBefore = ((await read('secret/data/team-a/app/app/db')) as { data: unknown }).data;

      await stack.vault.restart({
        kill: true,
        whileDown: async () => {
          const es = await waitForObject<Obj>(
            stack,
            'externalsecret',
            'app-db',
            NS,
            (o) => condition(o)?.status === 'False',
            'ExternalSecret Ready=False while OpenBao is down',
            60_000,
          );
          assert.doesNotMatch(
            condition(es)?.message ?? '',
            /before-restart|eyJhbGciOi/,
            'no secret value or token in the status',
          );
          const kept = await stack.getJson<SecretObj>('secret', 'app-db', NS);
          assert.equal(decode(kept, 'password'), 'before-restart', 'the Secret keeps its data while OpenBao is down');
        },
      });
      const restartedAt = audit().length;
      assert.deepEqual(await Promise.all(objects.map(read)), before, 'policies and roles survive the restart');
      assert.deepEqual(
        ((await read('secret/data/team-a/app/app/db')) as { data: unknown }).data,
        kvBefore,
        'KV data survives the restart',
      );

      await waitForObject<Obj>(
        stack,
        'externalsecret',
        'app-db',
        NS,
        (o) => condition(o)?.status === 'True',
        'ExternalSecret Ready again after the restart',
        120_000,
      );
      await mustVault('POST', 'secret/data/team-a/app/app/db', { data: { password: 'after-restart' } });
      await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => decode(s, 'password') === 'after-restart',
        'a value written after the restart',
        60_000,
      );
      // The controller's own identity works against the restarted server: a new VaultPolicy is written.
      await stack.kubectlApply(policy('after-restart', NS));
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=90s', '-n', NS, 'vp/after-restart']);
      assert.equal((await stack.vaultRoot('GET', `sys/policies/acl/vaultgate.${NS}.after-restart`)).status, 200);
      // OpenBao keeps tokens in its storage: the controller and the store carry on with their tokens (or log
      // in again), and nothing anyone sent after the restart was refused: no token was lost.
      const after = audit().slice(restartedAt);
      const denied = after.filter((e) => e.type === 'response' && /permission denied/.test(e.error ?? ''));
      assert.deepEqual(
        denied.map(
          (e) =>
            `${e.request.operation} ${e.request.path} by ${e.auth?.metadata?.service_account_name ?? e.auth?.display_name ?? 'an unknown token'}`,
        ),
        [],
        'no request refused after the restart',
      );
      assert.ok(
        after.some(
          (e) =>
            e.type === 'response' &&
            !e.error &&
            e.auth?.metadata?.service_account_name === CONTROLLER_IDENTITY.serviceAccount &&
            e.request.path === `sys/policies/acl/vaultgate.${NS}.after-restart`,
        ),
        'the controller wrote the new policy with its own identity',
      );
      const controllerLogins = after.filter(
        (e) =>
          e.type === 'response' &&
          e.request.path === 'auth/kubernetes/login' &&
          e.response?.auth?.metadata?.service_account_name === CONTROLLER_IDENTITY.serviceAccount,
      ).length;
      process.stderr.write(
        `[e2e-faults] controller logins after the OpenBao restart: ${controllerLogins} (its token survives in raft storage)\n`,
      );
    });

    void test('every kubernetes-auth token revoked (sys/leases/revoke-prefix, as after restoring a backup without its tokens): the controller and the store log in again, nothing is lost', async () => {
      await mustVault('POST', 'secret/data/team-a/app/app/db', { data: { password: 'before-revoke' } });
      await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => decode(s, 'password') === 'before-revoke',
        'Secret app-db synced before the revocation',
      );
      const revokedAt = audit().length;
      await mustVault('PUT', 'sys/leases/revoke-prefix/auth/kubernetes/login');
      // The controller's token is gone: its next write gets 403, it logs in again and writes.
      await stack.kubectlApply(policy('after-revoke', NS));
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=120s', '-n', NS, 'vp/after-revoke']);
      assert.equal((await stack.vaultRoot('GET', `sys/policies/acl/vaultgate.${NS}.after-revoke`)).status, 200);
      // The store's token is gone too: the next refresh logs in again as the tenant's ServiceAccount.
      await mustVault('POST', 'secret/data/team-a/app/app/db', { data: { password: 'after-revoke' } });
      const kept = await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (x) => decode(x, 'password') === 'after-revoke',
        'a value written after the revocation',
        90_000,
      );
      assert.equal(decode(kept, 'password'), 'after-revoke');
      const after = audit().slice(revokedAt);
      const logins = (sa: string): number =>
        after.filter(
          (e) =>
            e.type === 'response' &&
            !e.error &&
            e.request.path === 'auth/kubernetes/login' &&
            e.response?.auth?.metadata?.service_account_name === sa,
        ).length;
      assert.ok(logins(CONTROLLER_IDENTITY.serviceAccount) >= 1, 'the controller logged in again');
      assert.ok(logins('app-reader') >= 1, 'the store logged in again as app-reader');
      process.stderr.write(
        `[e2e-faults] logins after revoking every kubernetes-auth token: controller ${logins(CONTROLLER_IDENTITY.serviceAccount)}, store ${logins('app-reader')}\n`,
      );
    });

    void test('the kube-apiserver restarted during churn: every VaultPolicy converges, Vault holds exactly them', async () => {
      const names = Array.from({ length: 12 }, (_, i) => `p-${i}`);
      let created = 0;
      const churn = (async () => {
        for (const n of names) {
          await applyRetrying(policy(n, CHURN), `apply ${n} through the restart`);
          created++;
        }
      })();
      await waitFor(() => Promise.resolve(created >= 4 ? true : undefined), {
        what: 'churn under way',
        timeoutMs: 60_000,
        intervalMs: 50,
      });
      await stack.cp.restartApiserver();
      await churn;
      assert.deepEqual(await policyNamesIn(CHURN), [...names].sort());
      await waitConverged(CHURN, 'churn namespace converged after the apiserver restart');
      await waitForObject<Obj>(
        stack,
        'externalsecret',
        'app-db',
        NS,
        (o) => condition(o)?.status === 'True',
        'ExternalSecret still Ready after the restart',
      );
    });

    void test('the controller SIGKILLed mid-run: after a restart every object converges, no duplicate or orphaned Vault policy', async () => {
      const creates = Array.from({ length: 8 }, (_, i) => `k-${i}`);
      const deletes = ['p-0', 'p-1', 'p-2', 'p-3', 'p-4', 'p-5'];
      await stack.kubectlApply(creates.map((n) => policy(n, CHURN)));
      await stack.cp.kubectl(['delete', '-n', CHURN, '--wait=false', ...deletes.map((n) => `vp/${n}`)]);
      // Mid-run: at least one of the new policies is written to Vault, not all of the work is done.
      await waitFor(
        async () =>
          (await vaultPolicies(CHURN)).some((p) => p.startsWith(`vaultgate.${CHURN}.k-`)) ? true : undefined,
        { what: 'the controller to be mid-run', timeoutMs: 30_000, intervalMs: 20 },
      );
      await stack.procs.stop('controller-a', { kill: true });
      // The restarted replica has a new identity: it leads once the killed one's Lease expires (15 s).
      await stack.startController({ name: 'controller-a' });
      await waitConverged(CHURN, 'converged after the SIGKILL and restart');
      const expected = [...creates, 'p-6', 'p-7', 'p-8', 'p-9', 'p-10', 'p-11']
        .map((n) => `vaultgate.${CHURN}.${n}`)
        .sort();
      assert.deepEqual(await vaultPolicies(CHURN), expected, 'exactly the live VaultPolicies exist in Vault');
      assert.deepEqual(
        await policyNamesIn(CHURN),
        [...creates, 'p-6', 'p-7', 'p-8', 'p-9', 'p-10', 'p-11'].sort(),
        'deleted VaultPolicies are gone (finalizers released)',
      );
    });

    void test('two controller replicas: one Lease holder; SIGKILL the leader and the other takes over and reconciles', async () => {
      await stack.startController({ name: 'controller-b' });
      const lease = async (): Promise<Lease | undefined> =>
        stack.getJson<Lease & Record<string, unknown>>('lease', 'vaultgate-controller', 'vaultgate-system');
      const holder = await waitFor(async () => (await lease())?.spec?.holderIdentity, {
        what: 'a Lease holder',
        timeoutMs: 30_000,
      });
      assert.match(holder, /^controller-a_/, 'the replica that was running first holds the Lease');
      // Each replica reports its own view; poll until both have settled (a renew that slips on a loaded
      // machine makes a leader step down and re-acquire its own Lease for a moment, as client-go's does).
      const settled = await waitFor(
        async () => {
          const [a, b] = [
            await stack.procs.controllerStatus('controller-a'),
            await stack.procs.controllerStatus('controller-b'),
          ];
          return a?.leader === 'leader' && b?.leader === 'standby' ? { a, b } : undefined;
        },
        { what: 'controller-a leading and controller-b standing by', timeoutMs: 30_000, intervalMs: 250 },
      );
      assert.equal(settled.b.ready, true, 'a standby is ready (warm caches)');

      await stack.procs.stop('controller-a', { kill: true });
      // No graceful release after SIGKILL: the standby takes over once the Lease expires (15 s).
      await waitFor(
        async () => ((await stack.procs.controllerStatus('controller-b'))?.leader === 'leader' ? true : undefined),
        { what: 'controller-b to lead', timeoutMs: 60_000, intervalMs: 250 },
      );
      assert.match((await lease())?.spec?.holderIdentity ?? '', /^controller-b_/);

      await stack.kubectlApply(policy('after-failover', CHURN));
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', CHURN, 'vp/after-failover']);
      assert.ok((await vaultPolicies(CHURN)).includes(`vaultgate.${CHURN}.after-failover`));
    });
  },
);
