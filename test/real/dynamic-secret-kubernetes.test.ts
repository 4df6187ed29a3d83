// Real tier (#23): a VaultDynamicSecret keeps a ServiceAccount token minted by OpenBao 2.7.2's kubernetes
// secrets engine alive in a Secret, against the harness's real kube-apiserver: each credential is its own
// ServiceAccount (with a generated Role) that Vault creates on issue and deletes on revocation. The token
// authenticates (SelfSubjectReview with it) and is authorised by its Role at every sample; it is replaced
// before it ends; the replaced one is revoked (its ServiceAccount deleted, its token refused) only after
// the grace, the current one never; the controller killed with SIGKILL re-mints nothing; deleting the
// object revokes its lease; the token appears in no status, Event, controller log or metric.
//
// Timings: the apiserver refuses a TokenRequest under 600 s ("may not specify a duration less than 10
// minutes"), so the lease is 600 s, and OpenBao answers it renewable: false ("lease is not renewable").
// Rotation is exercised with minValidity 555 s: a credential is replaced when less than 555 s are left,
// 45 s after its issue (time for a controller restart on a busy machine, ~30 s, in between); the replaced
// one is revoked 10 s (grace) after. 2 rotations in 130 s keep the file under 4 minutes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { condition, type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import type { ControllerHandle } from '../harness/e2e-processes.ts';
import { kubeRequest } from '../harness/kube-http.ts';
import { realTier } from '../harness/real-tier.ts';
import { createTenantStore, LEASE_RULES } from '../harness/tenant-store.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-k8s';
const ENGINE_SA = { namespace: 'vaultgate-system', name: 'openbao-k8s-engine' };
const VDS_PATH = `/apis/vaultgate.io/v1alpha1/namespaces/${NS}/vaultdynamicsecrets/app-token`;
const SECRET_PATH = `/api/v1/namespaces/${NS}/secrets/app-token`;
const LEASE_S = 600;
const MIN_VALIDITY_S = 555;
const DUE_S = LEASE_S - MIN_VALIDITY_S;
const GRACE_S = 10;
const RUN_S = 130;
const fileStarted = performance.now();

interface Vds {
  status?: {
    lease?: { id: string; issuedAt: string; expiresAt: string; renewable?: boolean };
    previous?: Array<{ id: string }>;
    conditions?: unknown[];
  };
}
interface Cred {
  name: string;
  token: string;
}
/** One credential as the sampler saw it: when it was in the Secret, and when its ServiceAccount went. */
interface Seen {
  token: string;
  firstAt: number;
  lastAt: number;
  replacedAt?: number;
  saGoneAt?: number;
  refusedAt?: number;
}

void describe(
  'VaultDynamicSecret with the kubernetes secrets engine (OpenBao 2.7.2, real kube-apiserver)',
  {
    skip: tier.skip,
  },
  () => {
    let stack: E2EStack;
    let controller: ControllerHandle | undefined;
    const creds = new Map<string, Seen>(); // by ServiceAccount name, in order of appearance
    const failures: string[] = [];
    let samples = 0;

    const readCred = async (): Promise<Cred | undefined> => {
      const res = await stack.cp.request('GET', SECRET_PATH);
      if (res.status !== 200) return undefined;
      const data = (res.body as { data?: Record<string, string> }).data ?? {};
      const dec = (k: string): string => Buffer.from(data[k] ?? '', 'base64').toString('utf8');
      return { name: dec('service_account_name'), token: dec('service_account_token') };
    };
    const vds = async (): Promise<Vds> => (await stack.cp.request('GET', VDS_PATH)).body as Vds;
    const asToken = (token: string, method: string, path: string, body?: unknown) =>
      kubeRequest({ server: stack.cp.server, caPem: stack.cp.caPem, token }, method, path, body);
    /** Who the apiserver says the token is, or undefined when it refuses it (401). */
    const whoAmI = async (token: string): Promise<string | undefined> => {
      const res = await asToken(token, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      });
      if (res.status === 401) return undefined;
      if (res.status !== 201) throw new Error(`SelfSubjectReview: HTTP ${res.status}`);
      return (res.body as { status?: { userInfo?: { username?: string } } }).status?.userInfo?.username;
    };
    const engineServiceAccounts = async (): Promise<Set<string>> => {
      const res = await stack.cp.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts`);
      const items = (res.body as { items?: Array<{ metadata: { name: string } }> }).items ?? [];
      // Vault names them v-<token display name>-<role>-…; the only others are the tenant's own.
      return new Set(items.map((i) => i.metadata.name).filter((n) => n !== 'app' && n !== 'default'));
    };

    before(async () => {
      stack = await startE2E();
      const must = async (m: string, p: string, b?: unknown): Promise<void> => {
        const r = await stack.vaultRoot(m, p, b);
        if (r.status >= 300) throw new Error(`${m} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
      };
      // The engine's own ServiceAccount, as a cluster admin sets it up: it may create and delete
      // ServiceAccounts, their tokens, Roles and RoleBindings in the tenant's namespace, and holds what the
      // generated Role grants (RBAC lets no one grant more than they hold).
      await stack.cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: ENGINE_SA },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-settings', namespace: NS }, data: { a: 'b' } },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'openbao-k8s-engine', namespace: NS },
          rules: [
            { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['create', 'delete', 'get'] },
            { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
            {
              apiGroups: ['rbac.authorization.k8s.io'],
              resources: ['roles', 'rolebindings'],
              verbs: ['create', 'delete', 'get'],
            },
            { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
          ],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'openbao-k8s-engine', namespace: NS },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'openbao-k8s-engine' },
          subjects: [{ kind: 'ServiceAccount', ...ENGINE_SA }],
        },
      ]);
      const engineJwt = await stack.cp.serviceAccountToken(ENGINE_SA.namespace, ENGINE_SA.name, undefined, 3600);
      await must('POST', 'sys/mounts/kubernetes', { type: 'kubernetes' });
      await must('POST', 'kubernetes/config', {
        kubernetes_host: stack.cp.server,
        kubernetes_ca_cert: stack.cp.caPem,
        service_account_jwt: engineJwt,
        disable_local_ca_jwt: true,
      });
      await must('POST', 'kubernetes/roles/app', {
        allowed_kubernetes_namespaces: [NS],
        token_default_ttl: `${LEASE_S}s`,
        token_max_ttl: `${LEASE_S}s`,
        generated_role_rules: JSON.stringify({
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
        }),
      });
      // The tenant's Vault identity may issue from the role (a write: POST) and keep the lease.
      await createTenantStore(stack, {
        namespace: NS,
        role: 'team-k8s-app',
        rules: ['path "kubernetes/creds/app" { capabilities = ["update"] }', ...LEASE_RULES],
      });
    });
    after(async () => {
      await stack?.stop();
      process.stderr.write(`[vds-k8s] file wall ${((performance.now() - fileStarted) / 1000).toFixed(1)}s\n`);
    });

    void test(
      'the token authenticates at every sample, is replaced before it ends, the replaced one is revoked after the grace, a SIGKILLed controller re-mints nothing',
      { timeout: 6 * 60_000 },
      async () => {
        const manifest = (kubernetesNamespace: string): object => ({
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultDynamicSecret',
          metadata: { name: 'app-token', namespace: NS },
          spec: {
            storeRef: { name: 'vault' },
            path: 'kubernetes/creds/app',
            method: 'POST',
            parameters: { kubernetes_namespace: kubernetesNamespace },
            target: { name: 'app-token' },
            leasePolicy: { minValidity: `${MIN_VALIDITY_S}s` },
            revocation: { grace: `${GRACE_S}s` },
          },
        });
        // A tenant cannot have tokens minted for another namespace, whatever the Vault role allows.
        await assert.rejects(
          stack.kubectlApply(manifest('vaultgate-system')),
          /spec\.parameters\.kubernetes_namespace: "vaultgate-system" must be this object's namespace "team-k8s".*vaultdynamicsecret\.kubernetes-namespace/s,
        );
        await stack.kubectlApply(manifest(NS));
        await waitFor(async () => ((await readCred())?.token ? true : undefined), {
          what: 'Secret app-token with a token',
          timeoutMs: 90_000,
          intervalMs: 250,
        }).catch((err: unknown) => {
          throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
        });

        const started = Date.now();
        const issued: number[] = [];
        let killedAt = 0;
        let restartedAt = 0;
        let leaseBeforeKill: string | undefined;
        let accountsAtKill = 0;
        let afterRestart: { leaseId?: string; accounts: number; beforeDueMs: number } | undefined;
        const everSeen = new Set<string>();
        while (Date.now() - started < RUN_S * 1000) {
          const tick = Date.now();
          const cred = await readCred();
          const now = Date.now();
          if (!cred?.token) failures.push(`${new Date(now).toISOString()} no token in the Secret`);
          else {
            const seen = creds.get(cred.name);
            if (!seen) {
              const last = [...creds.values()].at(-1);
              if (last) last.replacedAt = now;
              creds.set(cred.name, { token: cred.token, firstAt: now, lastAt: now });
            } else seen.lastAt = now;
            // The token authenticates as its own ServiceAccount and its generated Role authorises it.
            const who = await whoAmI(cred.token);
            if (who !== `system:serviceaccount:${NS}:${cred.name}`)
              failures.push(`${new Date(now).toISOString()} ${cred.name}: authenticated as ${String(who)}`);
            const cms = await asToken(cred.token, 'GET', `/api/v1/namespaces/${NS}/configmaps`);
            if (cms.status !== 200)
              failures.push(`${new Date(now).toISOString()} ${cred.name}: configmaps ${cms.status}`);
          }
          samples++;
          // ServiceAccounts Vault created; the current one must never be gone.
          const accounts = await engineServiceAccounts();
          for (const a of accounts) everSeen.add(a);
          const current = cred?.name;
          if (current && !accounts.has(current))
            failures.push(`${new Date(now).toISOString()} the current credential's ServiceAccount ${current} is gone`);
          for (const [name, s] of creds) {
            if (name === current || s.saGoneAt !== undefined) continue;
            if (!accounts.has(name)) s.saGoneAt = now;
          }
          // A revoked token is refused by the apiserver (after its authentication cache).
          for (const s of creds.values())
            if (s.saGoneAt !== undefined && s.refusedAt === undefined && (await whoAmI(s.token)) === undefined)
              s.refusedAt = Date.now();
          const st = await vds();
          const issuedAt = st.status?.lease?.issuedAt ? Date.parse(st.status.lease.issuedAt) : undefined;
          if (issuedAt !== undefined && issued.at(-1) !== issuedAt) issued.push(issuedAt);
          // SIGKILL the controller right after the first credential, long before its rotation is due.
          if (!killedAt && creds.size === 1 && now - [...creds.values()][0]!.firstAt > 1_000) {
            leaseBeforeKill = st.status?.lease?.id;
            accountsAtKill = everSeen.size;
            await stack.procs.stop('controller', { kill: true });
            killedAt = Date.now();
            await sleep(3_000);
            // Without leader election: the killed process's Lease would hold the new one back 15 s more,
            // time this file does not have; what is tested is what a new process does with what it finds.
            controller = await stack.startController({ leaderElect: false });
            restartedAt = Date.now();
          }
          // Before that lease's rotation is due, the restarted controller holds it and has minted nothing.
          if (restartedAt && !afterRestart && Date.now() - restartedAt > 3_000)
            afterRestart = {
              leaseId: st.status?.lease?.id,
              accounts: everSeen.size,
              beforeDueMs: Date.parse(st.status?.lease?.issuedAt ?? '') + DUE_S * 1000 - Date.now(),
            };
          await sleep(Math.max(0, 1000 - (Date.now() - tick)));
        }
        const list = [...creds.entries()];
        const secs = (ms: number | undefined): string => (ms === undefined ? '-' : (ms / 1000).toFixed(1));
        process.stderr.write(
          `[vds-k8s] ${samples} samples, ${failures.length} failures, ${creds.size} tokens, ${everSeen.size} ServiceAccounts created, controller killed at +${secs(killedAt - started)}s\n`,
        );
        for (const [name, s] of list)
          process.stderr.write(
            `[vds-k8s] ${name}: in the Secret +${secs(s.firstAt - started)}s..+${secs(s.lastAt - started)}s, ServiceAccount gone ${secs(s.saGoneAt && s.replacedAt && s.saGoneAt - s.replacedAt)}s after its replacement, token refused ${secs(s.refusedAt && s.saGoneAt && s.refusedAt - s.saGoneAt)}s after that\n`,
          );
        const gaps = issued.slice(1).map((x, i) => Math.round((x - issued[i]!) / 1000));
        process.stderr.write(`[vds-k8s] seconds between credentials: ${gaps.join(', ')}\n`);

        assert.deepEqual(
          failures,
          [],
          `the token failed:\n${failures.slice(0, 10).join('\n')}\n${stack.diagnostics()}`,
        );
        assert.ok(killedAt > 0 && afterRestart, 'the controller was killed mid-lifecycle and looked at after');
        process.stderr.write(
          `[vds-k8s] controller back ${secs(restartedAt - killedAt)}s after the kill; looked at ${secs(afterRestart.beforeDueMs)}s before the rotation was due\n`,
        );
        assert.ok(
          afterRestart.beforeDueMs > 2_000,
          'the restarted controller was looked at before the rotation was due',
        );
        assert.equal(afterRestart.leaseId, leaseBeforeKill, 'the restarted controller kept the lease it found');
        assert.equal(afterRestart.accounts, accountsAtKill, 'no ServiceAccount minted since the kill');
        // Each credential lived until its rotation was due (DUE_S after issue): none was minted because the
        // controller restarted, and none lived into its last minValidity.
        assert.ok(gaps.length >= 2, `rotations: ${gaps.length} in ${RUN_S}s`);
        // A rotation comes when due, or when the controller is back if it was down then.
        issued.slice(1).forEach((at, i) => {
          const due = issued[i]! + DUE_S * 1000;
          const latest = Math.max(due, restartedAt) + 10_000;
          assert.ok(at >= due - 2_000 && at <= latest, `a credential replaced after ${gaps[i]}s (due ${DUE_S}s)`);
        });
        assert.equal(everSeen.size, creds.size, 'every ServiceAccount minted was written to the Secret');
        // Replaced credentials: revoked (ServiceAccount deleted by Vault) after the grace, not before; the
        // sampler sees a change up to 1 s late on each side.
        let revoked = 0;
        for (const [name, s] of list.slice(0, -1)) {
          if (s.replacedAt === undefined || Date.now() - s.replacedAt < (GRACE_S + 15) * 1000) continue;
          assert.ok(s.saGoneAt !== undefined, `replaced credential ${name} was revoked`);
          const after = (s.saGoneAt - s.replacedAt) / 1000;
          assert.ok(after >= GRACE_S - 2 && after <= GRACE_S + 15, `${name} revoked ${after}s after its replacement`);
          assert.ok(s.refusedAt !== undefined, `the revoked token of ${name} is refused by the apiserver`);
          revoked++;
        }
        assert.ok(revoked >= 2, `revocations observed: ${revoked}`);
        const s = await vds();
        assert.equal(condition(s as unknown as Record<string, unknown>)?.status, 'True');
        assert.equal(s.status?.lease?.renewable, false, 'OpenBao leases kubernetes tokens as not renewable');
        const events = (await stack.cp.request('GET', `/api/v1/namespaces/${NS}/events`)).body as {
          items: Array<{ reason?: string; note?: string; message?: string }>;
        };
        assert.ok(
          events.items.some((e) => e.reason === 'CredentialRotated' && /NotRenewable/.test(e.note ?? e.message ?? '')),
          JSON.stringify(events.items.map((e) => e.reason)),
        );
      },
    );

    void test('no form of a token in status, Events, the controller log or its metrics', async () => {
      assert.ok(creds.size >= 1);
      const status = JSON.stringify(await vds());
      const events = (await stack.cp.request('GET', `/api/v1/namespaces/${NS}/events`)).text;
      const ctl = controller ?? stack.controller!;
      const log = readFileSync(ctl.logPath, 'utf8'); // every controller process of the test appends to this file
      const metrics = await (await fetch(`${ctl.metricsUrl}/metrics`)).text();
      for (const { token } of creds.values()) {
        const signature = token.split('.').at(-1)!; // the part no one can derive from the claims
        for (const [where, text] of [
          ['status', status],
          ['events', events],
          ['controller log', log],
          ['metrics', metrics],
        ] as const) {
          for (const form of [token, signature, Buffer.from(token).toString('base64')])
            assert.ok(!text.includes(form), `a token is in the ${where}`);
        }
      }
      assert.match(metrics, /vaultgate_dynamic_secret_operations_total\{operation="revoke",result="success"\}/);
    });

    void test('deleting the object revokes its lease: its ServiceAccount is deleted and the token refused', async () => {
      const cred = await readCred();
      assert.ok(cred?.token);
      assert.equal(await whoAmI(cred.token), `system:serviceaccount:${NS}:${cred.name}`);
      const res = await stack.cp.request('DELETE', VDS_PATH);
      assert.ok(res.status === 200 || res.status === 202, res.text);
      const t0 = Date.now();
      await waitFor(async () => ((await stack.cp.request('GET', VDS_PATH)).status === 404 ? true : undefined), {
        what: 'the VaultDynamicSecret gone (finalizer released)',
        timeoutMs: 60_000,
      });
      assert.ok(!(await engineServiceAccounts()).has(cred.name), "the deleted object's ServiceAccount was deleted");
      await waitFor(async () => ((await whoAmI(cred.token)) === undefined ? true : undefined), {
        what: "the deleted object's token refused",
        timeoutMs: 30_000,
        intervalMs: 500,
      });
      process.stderr.write(
        `[vds-k8s] deletion: token refused ${((Date.now() - t0) / 1000).toFixed(1)}s after the DELETE\n`,
      );
    });
  },
);
