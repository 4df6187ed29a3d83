// Real tier (issue #23 item 5): on a real apiserver with vaultgate's webhook and controller and OpenBao
// 2.7.2, a VaultDynamicSecret whose store logs in as a VaultRoleBinding's role is checked at admission
// against that binding's VaultPolicies. The premise is checked on the real server first: a token of that
// role, as the controller wrote it, holds update on sys/leases/renew (its VaultPolicy) and on
// sys/leases/lookup (OpenBao's default policy), and nothing on sys/leases/revoke. Then `kubectl apply` of
// a VaultDynamicSecret asking for revocation is refused naming the field, capability, path and rule; the
// same object without revocation is admitted; once the VaultPolicy grants sys/leases/revoke, the first
// one is admitted too. An unchanged ESO VaultDynamicSecret generator whose provider logs in as the same role
// is checked the same way, under its own fields. Server-side dry runs: admission is what is under test,
// nothing is minted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type E2EStack, startE2E, toYaml } from '../harness/e2e-stack.ts';
import { realTier } from '../harness/real-tier.ts';
import { vaultRequest } from '../harness/vault.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-vds';
const ROLE = `vaultgate.${NS}.app`;

const policy = (rules: Array<{ path: string; capabilities: string[] }>) => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name: 'creds', namespace: NS },
  spec: { rules },
});
const READ_AND_RENEW = [
  { path: 'database/creds/app', capabilities: ['read'] },
  { path: 'sys/leases/renew', capabilities: ['update'] },
];
/** ESO's VaultDynamicSecret generator, its provider logging in as the binding's role. */
const generator = (server: string) => ({
  apiVersion: 'generators.external-secrets.io/v1alpha1',
  kind: 'VaultDynamicSecret',
  metadata: { name: 'pg', namespace: NS },
  spec: {
    path: '/database/creds/app',
    method: 'GET',
    provider: {
      server,
      auth: {
        kubernetes: { mountPath: 'kubernetes', role: ROLE, serviceAccountRef: { name: 'app', audiences: ['vault'] } },
      },
    },
  },
});
const vds = (spec: Record<string, unknown> = {}) => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultDynamicSecret',
  metadata: { name: 'app-db', namespace: NS },
  spec: { storeRef: { name: 'vault' }, path: 'database/creds/app', ...spec },
});

void describe(
  'VaultDynamicSecret access rules on a real apiserver, webhook and OpenBao 2.7.2',
  { skip: tier.skip },
  () => {
    let stack: E2EStack;

    /** `kubectl apply --dry-run=server`: what admission answers (output, or the refusal's text). */
    const dryRun = (obj: object): Promise<{ ok: boolean; text: string }> =>
      stack.cp.kubectl(['apply', '--dry-run=server', '-f', '-'], { stdin: toYaml(obj) }).then(
        (out) => ({ ok: true, text: out }),
        (e: unknown) => ({ ok: false, text: String(e) }),
      );
    /** The webhook sees new objects through its informers: ask again until its answer is `want`. */
    const answer = (obj: object, want: boolean, what: string) =>
      waitFor(
        async () => {
          const r = await dryRun(obj);
          return r.ok === want ? r : undefined;
        },
        { what, timeoutMs: 30_000, intervalMs: 500 },
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
      });
    /** What a token of the binding's role may do on `path`, as OpenBao answers (sys/capabilities-self). */
    const capabilities = async (path: string): Promise<string[]> => {
      const tr = await stack.cp.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/app/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { audiences: ['vault'], expirationSeconds: 600 },
      });
      const jwt = (tr.body as { status?: { token?: string } }).status?.token ?? '';
      const login = await vaultRequest({ addr: stack.vault.addr, token: '' }, 'POST', 'auth/kubernetes/login', {
        role: ROLE,
        jwt,
      });
      assert.equal(login.status, 200, `login as ${ROLE}: ${JSON.stringify(login.body)}`);
      const token = (login.body as { auth: { client_token: string } }).auth.client_token;
      const caps = await vaultRequest({ addr: stack.vault.addr, token }, 'POST', 'sys/capabilities-self', {
        paths: [path],
      });
      return (caps.body as Record<string, string[]>)[path] ?? [];
    };

    before(async () => {
      stack = await startE2E();
      await stack.cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'vaultgate.io/tier': 'dynamic' } } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: NS } },
      ]);
      // The cluster admin lets this namespace's policies name the database engine and sys/leases.
      await stack.kubectlApply({
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultGuardrail',
        metadata: { name: 'dynamic-credentials' },
        spec: {
          namespaceSelector: { matchLabels: { 'vaultgate.io/tier': 'dynamic' } },
          relaxFloor: ['namespace-subtree', 'sys-paths'],
          allowedPaths: ['database/creds/*', 'sys/leases/*'],
          forbiddenPaths: [],
        },
      });
      await stack.kubectlApply([
        policy(READ_AND_RENEW),
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultRoleBinding',
          metadata: { name: 'app', namespace: NS },
          spec: { serviceAccounts: ['app'], policies: ['creds'], audience: 'vault' },
        },
        {
          apiVersion: 'external-secrets.io/v1',
          kind: 'SecretStore',
          metadata: { name: 'vault', namespace: NS },
          spec: {
            provider: {
              vault: {
                server: stack.vault.addr,
                path: 'secret',
                version: 'v2',
                auth: {
                  kubernetes: {
                    mountPath: 'kubernetes',
                    role: ROLE,
                    serviceAccountRef: { name: 'app', audiences: ['vault'] },
                  },
                },
              },
            },
          },
        },
      ]);
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=90s', '-n', NS, 'vaultpolicy/creds']);
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=90s', '-n', NS, 'vaultrolebinding/app']);
    });
    after(async () => {
      await stack?.stop();
    });

    void test("the model's premise on OpenBao: renew from the VaultPolicy, lookup from the default policy, no revoke", async () => {
      assert.deepEqual(await capabilities('sys/leases/renew'), ['update']);
      assert.deepEqual(await capabilities('sys/leases/lookup'), ['update']);
      assert.deepEqual(await capabilities('sys/leases/revoke'), ['deny']);
    });

    void test('kubectl apply of a VaultDynamicSecret asking for revocation is refused with field, capability, path and rule', async () => {
      const r = await answer(vds(), false, 'the refusal (the webhook has seen the store, binding and policy)');
      assert.match(
        r.text,
        /spec\.revocation: the store's Vault role \(VaultRoleBinding team-vds\/app, policies team-vds\/creds and Vault's default\) lacks update on sys\/leases\/revoke, needed to revoke leases on delete and of replaced credentials.*\(rule vaultdynamicsecret\.access-revoke\)/s,
      );
      assert.doesNotMatch(r.text, /access-renew|access-lookup|access-issue/, 'only the missing grant is named');
    });

    void test("an ESO VaultDynamicSecret generator on the same role is refused too, naming its provider's role", async () => {
      const r = await answer(generator(stack.vault.addr), false, 'the refusal of the generator');
      assert.match(
        r.text,
        /spec\.provider\.auth\.kubernetes\.role: the generator provider's Vault role \(VaultRoleBinding team-vds\/app, policies team-vds\/creds and Vault's default\) lacks update on sys\/leases\/revoke, needed to revoke leases on delete and of replaced credentials.*\(rule vaultdynamicsecret\.access-revoke\)/s,
      );
      assert.doesNotMatch(r.text, /revocation\.onDelete/, 'no VaultDynamicSecret-only way out offered');
    });

    void test('without revocation it is admitted; with sys/leases/revoke granted, the first one is too', async () => {
      const r = await dryRun(vds({ revocation: { onDelete: false, previous: 'Never' } }));
      assert.ok(r.ok, r.text);
      await stack.kubectlApply(policy([...READ_AND_RENEW, { path: 'sys/leases/revoke', capabilities: ['update'] }]));
      await answer(vds(), true, 'admission once the VaultPolicy grants sys/leases/revoke');
      await answer(generator(stack.vault.addr), true, 'the generator admitted once the VaultPolicy grants it');
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=90s', '-n', NS, 'vaultpolicy/creds']);
      await waitFor(async () => ((await capabilities('sys/leases/revoke')).includes('update') ? true : undefined), {
        what: 'OpenBao grants the role sys/leases/revoke',
        timeoutMs: 30_000,
        intervalMs: 500,
      });
    });
  },
);
