// Scenario 2 (real tier): a VaultRoleBinding becomes a kubernetes-auth role in a real OpenBao 2.7.2; a
// pod-less login with a TokenRequest token of the bound ServiceAccount succeeds because the real
// kube-apiserver's TokenReview vouches for it, and the token reads only the granted paths (OpenBao's own
// ACLs); other identities and forged tokens are refused. OpenBao's file audit log says who logged in.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { generateKeyPair, SignJWT } from 'jose';
import { condition, type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import { REPO_ROOT } from '../harness/e2e-processes.ts';
import { vaultCall } from '../harness/e2e-vault.ts';
import { realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-a';
const ROLE = 'vaultgate.team-a.app';

/** Claims shaped exactly like a bound ServiceAccount token of the apiserver, signed with a key it does not know. */
async function forgedServiceAccountToken(
  issuer: string,
  namespace: string,
  name: string,
  audience: string,
): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256');
  const now = Math.floor(Date.now() / 1000);
  return (
    new SignJWT({ 'kubernetes.io': { namespace, serviceaccount: { name, uid: randomUUID() } } })
      .setProtectedHeader({ alg: 'RS256', kid: 'forged' })
      // `aud` an array, as the apiserver writes it (OpenBao answers a string `aud` with a 500 decoding error).
      .setIssuer(issuer)
      .setSubject(`system:serviceaccount:${namespace}:${name}`)
      .setAudience([audience])
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + 600)
      .sign(privateKey)
  );
}

interface LoginAuth {
  client_token: string;
  policies: string[];
  metadata: Record<string, string>;
  lease_duration: number;
}

void describe(
  "e2e 2: VaultRoleBinding → kubernetes-auth role; logins checked by the real apiserver's TokenReview",
  { skip: tier.skip },
  () => {
    let stack: E2EStack;
    const login = (jwt: string, role = ROLE): Promise<{ status: number; body: unknown }> =>
      vaultCall(stack.vault.addr, '', 'POST', 'auth/kubernetes/login', { role, jwt });

    before(async () => {
      stack = await startE2E();
      await stack.cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: NS } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'other', namespace: NS } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: 'team-b' } },
      ]);
      for (const f of ['vaultpolicy.yaml', 'vaultpolicy-hcl.yaml', 'vaultrolebinding.yaml'])
        await stack.cp.kubectl(['apply', '-f', join(REPO_ROOT, 'examples', f)]);
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', NS, 'vrb/app']);
      // Data the role may and may not reach.
      await stack.vaultRoot('POST', 'secret/data/team-a/app/config', { data: { greeting: 'hello-team-a' } });
      await stack.vaultRoot('POST', 'secret/data/team-a/db', { data: { password: 'not-for-app' } });
      await stack.vaultRoot('POST', 'secret/data/team-b/app/config', { data: { greeting: 'hello-team-b' } });
    });
    after(async () => {
      await stack?.stop();
    });

    void test("the binding is Ready and the role in Vault binds exactly team-a/app to the two policies, with the binding's audience and TTLs", async () => {
      const vrb = await stack.getJson('vaultrolebinding', 'app', NS);
      assert.equal(condition(vrb)?.status, 'True');
      const role = await stack.vaultRoot('GET', `auth/kubernetes/role/${ROLE}`);
      assert.equal(role.status, 200, JSON.stringify(role.body));
      const data = (role.body as { data: Record<string, unknown> }).data;
      assert.deepEqual(data.bound_service_account_names, ['app']);
      assert.deepEqual(data.bound_service_account_namespaces, [NS]);
      assert.deepEqual([...(data.token_policies as string[])].sort(), [
        'vaultgate.team-a.app-read',
        'vaultgate.team-a.app-write',
      ]);
      assert.equal(data.audience, 'vault');
      assert.equal(data.token_ttl, 3600);
      assert.equal(data.token_max_ttl, 12 * 3600);
    });

    void test('a TokenRequest token of team-a/app logs in (TokenReview by the real apiserver) and reads only its granted paths', async () => {
      const loginsBefore = stack.vault.logins().length;
      const jwt = await stack.cp.serviceAccountToken(NS, 'app', ['vault'], 600);
      const res = await login(jwt);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const auth = (res.body as { auth: LoginAuth }).auth;
      assert.equal(auth.metadata.service_account_namespace, NS);
      assert.equal(auth.metadata.service_account_name, 'app');
      assert.ok(auth.metadata.service_account_uid, 'the uid comes from the TokenReview');
      assert.ok(auth.policies.includes('vaultgate.team-a.app-read'));
      const seen = stack.vault.logins()[loginsBefore];
      assert.deepEqual(
        seen && { ok: seen.ok, role: seen.role, namespace: seen.namespace, serviceAccount: seen.serviceAccount },
        { ok: true, role: ROLE, namespace: NS, serviceAccount: 'app' },
        'OpenBao recorded the login',
      );
      assert.equal(seen?.uid, auth.metadata.service_account_uid);

      const as = (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> =>
        vaultCall(stack.vault.addr, auth.client_token, method, path, body);
      const own = await as('GET', 'secret/data/team-a/app/config');
      assert.equal(own.status, 200);
      assert.deepEqual((own.body as { data: { data: unknown } }).data.data, { greeting: 'hello-team-a' });
      assert.equal((await as('GET', 'secret/data/team-a/db')).status, 403, 'outside secret/data/team-a/app/*');
      assert.equal((await as('GET', 'secret/data/team-b/app/config')).status, 403, "another namespace's secrets");
      assert.equal(
        (await as('GET', 'sys/policies/acl/vaultgate.team-a.app-read')).status,
        403,
        'no access to Vault configuration',
      );
      assert.equal(
        (await as('POST', 'auth/kubernetes/role/vaultgate.team-a.app', { bound_service_account_names: ['*'] })).status,
        403,
      );
    });

    void test("team-b's ServiceAccount of the same name, another SA of team-a, and a wrong audience are refused", async () => {
      const other = await login(await stack.cp.serviceAccountToken('team-b', 'app', ['vault']));
      assert.equal(other.status, 403, JSON.stringify(other.body));
      const sibling = await login(await stack.cp.serviceAccountToken(NS, 'other', ['vault']));
      assert.equal(sibling.status, 403, JSON.stringify(sibling.body));
      const wrongAudience = await login(await stack.cp.serviceAccountToken(NS, 'app', ['not-vault']));
      assert.equal(wrongAudience.status, 403, 'TokenReview with audience "vault" rejects the token');
      const last = stack.vault.logins().slice(-3);
      assert.deepEqual(
        last.map((l) => l.ok),
        [false, false, false],
        'OpenBao recorded three refused logins',
      );
    });

    void test('a token the apiserver did not issue is refused even though its claims name team-a/app', async () => {
      // Claims shaped exactly like a bound token, signed by a key the apiserver does not know.
      const forged = await forgedServiceAccountToken(`${stack.cp.server}/`, NS, 'app', 'vault');
      const res = await login(forged);
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.doesNotMatch(
        JSON.stringify(res.body),
        new RegExp(forged.slice(0, 40).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
        'no JWT in the error',
      );
      const last = stack.vault.logins().at(-1);
      assert.ok(last && !last.ok, 'OpenBao recorded a refused login');
      assert.doesNotMatch(
        readFileSync(stack.vault.auditLogPath ?? '', 'utf8'),
        new RegExp(forged.split('.')[2]?.slice(0, 40) ?? 'x'),
        'the JWT is not in the audit log in clear',
      );
    });

    void test('deleting the ServiceAccount invalidates its tokens: the next login is refused', async () => {
      await stack.cp.apply({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'short-lived', namespace: NS },
      });
      await stack.cp.kubectl([
        'patch',
        '-n',
        NS,
        'vrb/app',
        '--type=json',
        '-p',
        '[{"op":"add","path":"/spec/serviceAccounts/-","value":"short-lived"}]',
      ]);
      let jwt = '';
      // The controller updates the role; the login works once it has (level-triggered, no sleep).
      await waitFor(
        async () => {
          jwt ||= await stack.cp.serviceAccountToken(NS, 'short-lived', ['vault']);
          return (await login(jwt)).status === 200 ? true : undefined;
        },
        { what: 'the role to admit short-lived', timeoutMs: 60_000, intervalMs: 250 },
      );
      await stack.cp.kubectl(['delete', '-n', NS, 'serviceaccount/short-lived']);
      // The apiserver caches successful token authentications for 10 s (its TokenSuccessCacheTTL), so a
      // deleted account's token keeps passing TokenReview for up to that long: poll, do not expect it at once.
      await waitFor(async () => ((await login(jwt)).status === 403 ? true : undefined), {
        what: "the deleted account's login to be refused",
        timeoutMs: 30_000,
        intervalMs: 500,
      });
      const last = stack.vault.logins().at(-1);
      assert.ok(last && !last.ok, 'OpenBao recorded the refused login');
    });

    void test('a raw-HCL VaultPolicy using {{namespace}} lets a bound ServiceAccount read its path through a real login', async () => {
      // OpenBao reads an unexpanded `{{namespace}}` in a path as an identity template it cannot resolve and
      // skips the rule: only the expansion vaultgate does before writing makes this login useful.
      await stack.cp.apply({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'hcl-reader', namespace: NS },
      });
      await stack.kubectlApply([
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultPolicy',
          metadata: { name: 'hcl-ns', namespace: NS },
          spec: { policy: 'path "secret/data/{{namespace}}/hcl/*" {\n  capabilities = ["read"]\n}\n' },
        },
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultRoleBinding',
          metadata: { name: 'hcl-reader', namespace: NS },
          spec: { serviceAccounts: ['hcl-reader'], policies: ['hcl-ns'], audience: 'vault' },
        },
      ]);
      await stack.cp.kubectl([
        'wait',
        '--for=condition=Ready',
        '--timeout=60s',
        '-n',
        NS,
        'vp/hcl-ns',
        'vrb/hcl-reader',
      ]);
      const stored = await stack.vaultRoot('GET', 'sys/policies/acl/vaultgate.team-a.hcl-ns');
      assert.equal(stored.status, 200);
      const text = (stored.body as { data: { policy: string } }).data.policy;
      assert.match(text, /path "secret\/data\/team-a\/hcl\/\*"/);
      assert.doesNotMatch(text, /\{\{/, 'no template left for OpenBao to skip');
      await stack.vaultRoot('POST', 'secret/data/team-a/hcl/config', { data: { colour: 'teal' } });
      await stack.vaultRoot('POST', 'secret/data/team-b/hcl/config', { data: { colour: 'red' } });

      const res = await login(
        await stack.cp.serviceAccountToken(NS, 'hcl-reader', ['vault'], 600),
        'vaultgate.team-a.hcl-reader',
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const token = (res.body as { auth: LoginAuth }).auth.client_token;
      const own = await vaultCall(stack.vault.addr, token, 'GET', 'secret/data/team-a/hcl/config');
      assert.equal(own.status, 200, JSON.stringify(own.body));
      assert.deepEqual((own.body as { data: { data: unknown } }).data.data, { colour: 'teal' });
      assert.equal(
        (await vaultCall(stack.vault.addr, token, 'GET', 'secret/data/team-b/hcl/config')).status,
        403,
        "another namespace's path",
      );
    });
  },
);
