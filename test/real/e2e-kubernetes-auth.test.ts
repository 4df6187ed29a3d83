// Scenario 2 (real tier): a VaultRoleBinding becomes a kubernetes-auth role in Vault; a pod-less login
// with a TokenRequest token of the bound ServiceAccount succeeds because the real kube-apiserver's
// TokenReview vouches for it, and the token reads only the granted paths; other identities are refused.
// Vault is SIMULATED (OpenBao cannot be built here), but every login here is checked by a real TokenReview.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { condition, type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import { REPO_ROOT } from '../harness/e2e-processes.ts';
import { vaultCall } from '../harness/e2e-vault.ts';
import { realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-a';
const ROLE = 'vaultgate.team-a.app';

interface LoginAuth { client_token: string; policies: string[]; metadata: Record<string, string>; lease_duration: number }

void describe('e2e 2: VaultRoleBinding → kubernetes-auth role; logins checked by the real apiserver\'s TokenReview', { skip: tier.skip }, () => {
  let stack: E2EStack;
  const login = (jwt: string, role = ROLE): Promise<{ status: number; body: unknown }> => vaultCall(stack.vault.addr, '', 'POST', 'auth/kubernetes/login', { role, jwt });

  before(async () => {
    stack = await startE2E();
    await stack.cp.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: NS } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'other', namespace: NS } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: 'team-b' } },
    ]);
    for (const f of ['vaultpolicy.yaml', 'vaultpolicy-hcl.yaml', 'vaultrolebinding.yaml']) await stack.cp.kubectl(['apply', '-f', join(REPO_ROOT, 'examples', f)]);
    await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', NS, 'vrb/app']);
    // Data the role may and may not reach.
    await stack.vaultRoot('POST', 'secret/data/team-a/app/config', { data: { greeting: 'hello-team-a' } });
    await stack.vaultRoot('POST', 'secret/data/team-a/db', { data: { password: 'not-for-app' } });
    await stack.vaultRoot('POST', 'secret/data/team-b/app/config', { data: { greeting: 'hello-team-b' } });
  });
  after(async () => {
    await stack?.stop();
  });

  void test('the binding is Ready and the role in Vault binds exactly team-a/app to the two policies, with the binding\'s audience and TTLs', async () => {
    const vrb = await stack.getJson('vaultrolebinding', 'app', NS);
    assert.equal(condition(vrb)?.status, 'True');
    const role = await stack.vaultRoot('GET', `auth/kubernetes/role/${ROLE}`);
    assert.equal(role.status, 200, JSON.stringify(role.body));
    const data = (role.body as { data: Record<string, unknown> }).data;
    assert.deepEqual(data.bound_service_account_names, ['app']);
    assert.deepEqual(data.bound_service_account_namespaces, [NS]);
    assert.deepEqual([...(data.token_policies as string[])].sort(), ['vaultgate.team-a.app-read', 'vaultgate.team-a.app-write']);
    assert.equal(data.audience, 'vault');
    assert.equal(data.token_ttl, 3600);
    assert.equal(data.token_max_ttl, 12 * 3600);
  });

  void test('a TokenRequest token of team-a/app logs in (TokenReview by the real apiserver) and reads only its granted paths', async () => {
    const reviewsBefore = stack.vault.reviews.length;
    const jwt = await stack.cp.serviceAccountToken(NS, 'app', ['vault'], 600);
    const res = await login(jwt);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const auth = (res.body as { auth: LoginAuth }).auth;
    assert.equal(auth.metadata.service_account_namespace, NS);
    assert.equal(auth.metadata.service_account_name, 'app');
    assert.ok(auth.metadata.service_account_uid, 'the uid comes from the TokenReview');
    assert.ok(auth.policies.includes('vaultgate.team-a.app-read'));
    const review = stack.vault.reviews[reviewsBefore];
    assert.deepEqual(review && { ok: review.ok, audiences: review.audiences }, { ok: true, audiences: ['vault'] }, 'the login was verified by a TokenReview');

    const as = (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => vaultCall(stack.vault.addr, auth.client_token, method, path, body);
    const own = await as('GET', 'secret/data/team-a/app/config');
    assert.equal(own.status, 200);
    assert.deepEqual((own.body as { data: { data: unknown } }).data.data, { greeting: 'hello-team-a' });
    assert.equal((await as('GET', 'secret/data/team-a/db')).status, 403, 'outside secret/data/team-a/app/*');
    assert.equal((await as('GET', 'secret/data/team-b/app/config')).status, 403, "another namespace's secrets");
    assert.equal((await as('GET', 'sys/policies/acl/vaultgate.team-a.app-read')).status, 403, 'no access to Vault configuration');
    assert.equal((await as('POST', 'auth/kubernetes/role/vaultgate.team-a.app', { bound_service_account_names: ['*'] })).status, 403);
  });

  void test("team-b's ServiceAccount of the same name, another SA of team-a, and a wrong audience are refused", async () => {
    const other = await login(await stack.cp.serviceAccountToken('team-b', 'app', ['vault']));
    assert.equal(other.status, 403, JSON.stringify(other.body));
    const sibling = await login(await stack.cp.serviceAccountToken(NS, 'other', ['vault']));
    assert.equal(sibling.status, 403, JSON.stringify(sibling.body));
    const wrongAudience = await login(await stack.cp.serviceAccountToken(NS, 'app', ['not-vault']));
    assert.equal(wrongAudience.status, 403, 'TokenReview with audience "vault" rejects the token');
    const last = stack.vault.reviews.at(-1);
    assert.equal(last?.ok, false);
  });

  void test('a token the apiserver did not issue is refused even though its claims name team-a/app', async () => {
    // Claims shaped exactly like a bound token, signed by a key the apiserver does not know.
    const forged = stack.vault.sim.jwtFor(NS, 'app', { audiences: ['vault'] });
    const res = await login(forged);
    assert.equal(res.status, 403);
    assert.doesNotMatch(JSON.stringify(res.body), new RegExp(forged.slice(0, 40).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'no JWT in the error');
    const last = stack.vault.reviews.at(-1);
    assert.ok(last && !last.ok);
    assert.match(last.reason, /invalid bearer token|not valid/);
  });

  void test('deleting the ServiceAccount invalidates its tokens: the next login is refused', async () => {
    await stack.cp.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'short-lived', namespace: NS } });
    await stack.cp.kubectl(['patch', '-n', NS, 'vrb/app', '--type=json', '-p', '[{"op":"add","path":"/spec/serviceAccounts/-","value":"short-lived"}]']);
    let jwt = '';
    // The controller updates the role; the login works once it has (level-triggered, no sleep).
    await waitFor(async () => {
      jwt ||= await stack.cp.serviceAccountToken(NS, 'short-lived', ['vault']);
      return (await login(jwt)).status === 200 ? true : undefined;
    }, { what: 'the role to admit short-lived', timeoutMs: 60_000, intervalMs: 250 });
    await stack.cp.kubectl(['delete', '-n', NS, 'serviceaccount/short-lived']);
    // The apiserver caches successful token authentications for 10 s (its TokenSuccessCacheTTL), so a
    // deleted account's token keeps passing TokenReview for up to that long: poll, do not expect it at once.
    await waitFor(async () => ((await login(jwt)).status === 403 ? true : undefined), { what: 'the deleted account\'s login to be refused', timeoutMs: 30_000, intervalMs: 500 });
    const last = stack.vault.reviews.at(-1);
    assert.ok(last && !last.ok);
    assert.match(last.reason, /not valid|unauthorized|not found/);
  });
});
