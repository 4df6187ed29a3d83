// The Vault behaviour vaultgate relies on, as node:test tests runnable against any target: the
// simulator (test/contract/vault-sim.test.ts) and a real `bao server -dev` in the real tier. Assertions
// follow what real Vault/OpenBao answer (API docs + the notes); where the exact text differs between
// versions the assertion is deliberately loose (status + a keyword) and says so.
//
// Each run works under unique names (`vgc-<random>`) so a shared server stays usable; the seal test
// runs last because it disturbs everything else.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import {
  createKvApi,
  createSysApi,
  createVaultClient,
  TokenCache,
  type VaultClient,
  type VaultRequest,
} from '../../vault/index.ts';

export interface VaultContractTarget {
  addr: string;
  rootToken: string;
  /**
   * Present when the server can verify SA tokens. `jwtFor(ns, sa)` must return a token Vault's
   * kubernetes auth accepts for a role WITHOUT `audience` (i.e. a TokenRequest with the apiserver's
   * default audiences), creating the namespace/service account if the target needs them. The suite asks
   * for `(<ns>, 'app')` and `(<other-ns>, 'app')` with fresh `vgc-…` namespaces.
   */
  kubernetes?: { mount: string; jwtFor(ns: string, sa: string): Promise<string> };
  seal?: { seal(): Promise<void>; unseal(): Promise<void> };
}

interface Raw {
  status: number;
  body: Record<string, unknown> | undefined;
}

/** Errors array of a Vault answer (undefined when absent). */
function errorsOf(r: Raw): string[] | undefined {
  const e = r.body?.errors;
  return Array.isArray(e) ? (e as string[]) : undefined;
}

function dataOf(r: Raw): Record<string, unknown> {
  const d = r.body?.data;
  assert.ok(d && typeof d === 'object', `expected a data object in ${JSON.stringify(r.body)}`);
  return d as Record<string, unknown>;
}

export function describeVaultContract(
  name: string,
  setup: () => Promise<VaultContractTarget>,
  teardown: () => Promise<void>,
): void {
  void describe(`Vault contract: ${name}`, () => {
    let target: VaultContractTarget;
    let client: VaultClient;
    const run = `vgc-${randomBytes(4).toString('hex')}`;
    const cleanups: Array<() => Promise<unknown>> = [];

    /** Raw HTTP, so status codes and bodies are asserted as Vault sends them (LIST as GET ?list=true). */
    async function api(
      method: string,
      path: string,
      opts: { token?: string | null; body?: unknown } = {},
    ): Promise<Raw> {
      const list = method === 'LIST';
      const url = `${target.addr}/v1/${path}${list ? (path.includes('?') ? '&' : '?') + 'list=true' : ''}`;
      const token = opts.token === undefined ? target.rootToken : opts.token;
      const res = await fetch(url, {
        method: list ? 'GET' : method,
        headers: {
          ...(token ? { 'X-Vault-Token': token } : {}),
          ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
    }
    const rootRequester = { request: <T>(req: VaultRequest) => client.request<T>({ ...req, token: target.rootToken }) };

    before(async () => {
      target = await setup();
      client = createVaultClient({ address: target.addr, timeoutMs: 10_000 });
    });

    after(async () => {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
      client.close();
      await teardown();
    });

    // ------------------------------------------------------------------------------ policies

    void test('ACL policy: write, read back the exact text, list, delete (idempotent), 404 with empty errors after', async () => {
      const pname = `${run}.policy`;
      const text = `# managed-by: vaultgate\npath "secret/data/${run}/*" {\n  capabilities = ["read", "list"]\n}\n`;
      cleanups.push(() => api('DELETE', `sys/policies/acl/${pname}`));
      const put = await api('PUT', `sys/policies/acl/${pname}`, { body: { policy: text } });
      assert.ok(put.status === 204 || put.status === 200, `write status ${put.status}`);
      const got = await api('GET', `sys/policies/acl/${pname}`);
      assert.equal(got.status, 200);
      assert.equal(dataOf(got).policy, text, 'Vault stores the policy text as written');
      assert.equal(dataOf(got).name, pname);
      const list = await api('LIST', 'sys/policies/acl');
      assert.equal(list.status, 200);
      assert.ok((dataOf(list).keys as string[]).includes(pname));
      assert.ok((dataOf(list).keys as string[]).includes('default'));
      assert.equal((await api('DELETE', `sys/policies/acl/${pname}`)).status, 204);
      const gone = await api('GET', `sys/policies/acl/${pname}`);
      assert.equal(gone.status, 404);
      assert.deepEqual(errorsOf(gone), [], 'a missing policy is 404 with errors: []');
      assert.equal(
        (await api('DELETE', `sys/policies/acl/${pname}`)).status,
        204,
        'deleting an absent policy succeeds',
      );
    });

    void test('ACL policy: JSON text is accepted; invalid HCL is 400 with a message', async () => {
      const pname = `${run}.json`;
      cleanups.push(() => api('DELETE', `sys/policies/acl/${pname}`));
      const json = JSON.stringify({ path: { [`secret/data/${run}/json/*`]: { capabilities: ['read'] } } });
      const put = await api('PUT', `sys/policies/acl/${pname}`, { body: { policy: json } });
      assert.ok(put.status === 204 || put.status === 200);
      assert.equal(dataOf(await api('GET', `sys/policies/acl/${pname}`)).policy, json);
      const bad = await api('PUT', `sys/policies/acl/${run}.bad`, {
        body: { policy: 'path "secret/x" { capabilities = [' },
      });
      assert.equal(bad.status, 400);
      assert.ok((errorsOf(bad) ?? []).length > 0, 'a 400 carries an error message');
      // Loose: Vault says "failed to parse policy: …"; the rest of the text depends on the HCL library.
      assert.match((errorsOf(bad) ?? []).join(' '), /parse|policy/i);
    });

    void test('ACL policy: capabilities OpenBao 2.7 lacks (subscribe, recover) are 400 "invalid capability"; scan is accepted', async () => {
      for (const cap of ['subscribe', 'recover', 'bogus']) {
        const bad = await api('PUT', `sys/policies/acl/${run}.cap-${cap}`, {
          body: { policy: `path "secret/data/${run}/cap" {\n  capabilities = ["read", "${cap}"]\n}\n` },
        });
        assert.equal(bad.status, 400, `capability ${cap}: status ${bad.status}`);
        assert.match((errorsOf(bad) ?? []).join(' '), new RegExp(`invalid capability "${cap}"`));
        assert.equal(
          (await api('GET', `sys/policies/acl/${run}.cap-${cap}`)).status,
          404,
          'a refused policy is not stored',
        );
      }
      const pname = `${run}.cap-scan`;
      cleanups.push(() => api('DELETE', `sys/policies/acl/${pname}`));
      const ok = await api('PUT', `sys/policies/acl/${pname}`, {
        body: { policy: `path "secret/metadata/${run}/cap/*" {\n  capabilities = ["list", "scan"]\n}\n` },
      });
      assert.ok(ok.status === 204 || ok.status === 200, `scan: status ${ok.status} ${JSON.stringify(errorsOf(ok))}`);
    });

    void test('ACL policy: an unresolvable {{…}} template in a path (e.g. {{namespace}}) makes that rule grant nothing', async () => {
      const pname = `${run}.tmpl`;
      cleanups.push(
        () => api('DELETE', `sys/policies/acl/${pname}`),
        () => api('DELETE', `secret/metadata/${run}/tmpl/x`),
        () => api('DELETE', `secret/metadata/${run}/plain/x`),
      );
      const text = `path "secret/data/${run}/{{namespace}}/*" {\n  capabilities = ["read"]\n}\npath "secret/data/${run}/plain/*" {\n  capabilities = ["read"]\n}\n`;
      const put = await api('PUT', `sys/policies/acl/${pname}`, { body: { policy: text } });
      assert.ok(put.status === 204 || put.status === 200, `write: ${put.status} ${JSON.stringify(errorsOf(put))}`);
      assert.equal(dataOf(await api('GET', `sys/policies/acl/${pname}`)).policy, text, 'stored as written');
      await api('POST', `secret/data/${run}/plain/x`, { body: { data: { v: '1' } } });
      const created = await api('POST', 'auth/token/create', { body: { policies: [pname], ttl: '10m' } });
      const token = (created.body?.auth as { client_token: string }).client_token;
      cleanups.push(() => api('POST', 'auth/token/revoke-self', { token }));
      assert.equal((await api('GET', `secret/data/${run}/plain/x`, { token })).status, 200, 'the plain rule applies');
      const literal = await api('GET', `secret/data/${run}/{{namespace}}/x`, { token });
      assert.equal(literal.status, 403, 'the templated rule is skipped, even for the literal path');
      assert.equal(
        (await api('GET', `secret/data/${run}/default/x`, { token })).status,
        403,
        'and it is not expanded to any namespace',
      );
    });

    void test('adapter: SysApi policy round trip; absent policy reads as undefined', async () => {
      const sys = createSysApi(rootRequester);
      const pname = `${run}.adapter`;
      cleanups.push(() => sys.deletePolicy(pname));
      const text = `path "secret/data/${run}/adapter/*" {\n  capabilities = ["read"]\n}\n`;
      await sys.writePolicy(pname, text);
      assert.equal(await sys.readPolicy(pname), text);
      assert.ok((await sys.listPolicies()).includes(pname));
      await sys.deletePolicy(pname);
      assert.equal(await sys.readPolicy(pname), undefined);
      await sys.deletePolicy(pname); // idempotent
    });

    // ------------------------------------------------------------------------------ kubernetes auth

    void test('kubernetes auth: role CRUD (TTLs read back in seconds, list, 404 after delete, 400 when unbound)', async (t) => {
      if (!target.kubernetes) return t.skip('target has no kubernetes auth');
      const mount = target.kubernetes.mount;
      const role = `${run}.crud`;
      cleanups.push(() => api('DELETE', `auth/${mount}/role/${role}`));
      const put = await api('POST', `auth/${mount}/role/${role}`, {
        body: {
          bound_service_account_names: ['app'],
          bound_service_account_namespaces: [`${run}-a`],
          token_policies: [`${run}.p`],
          token_ttl: '1h',
          token_max_ttl: '24h',
        },
      });
      assert.ok(put.status === 204 || put.status === 200, `role write status ${put.status}`);
      const got = dataOf(await api('GET', `auth/${mount}/role/${role}`));
      assert.deepEqual(got.bound_service_account_names, ['app']);
      assert.deepEqual(got.bound_service_account_namespaces, [`${run}-a`]);
      assert.deepEqual(got.token_policies, [`${run}.p`]);
      assert.equal(got.token_ttl, 3600);
      assert.equal(got.token_max_ttl, 86400);
      const list = await api('LIST', `auth/${mount}/role`);
      assert.equal(list.status, 200);
      assert.ok((dataOf(list).keys as string[]).includes(role));
      assert.equal((await api('DELETE', `auth/${mount}/role/${role}`)).status, 204);
      const gone = await api('GET', `auth/${mount}/role/${role}`);
      assert.equal(gone.status, 404);
      assert.deepEqual(errorsOf(gone) ?? [], []);
      const unbound = await api('POST', `auth/${mount}/role/${run}.unbound`, {
        body: { bound_service_account_namespaces: ['x'], token_policies: ['p'] },
      });
      assert.equal(unbound.status, 400, 'a role without bound_service_account_names is rejected');
    });

    void test('kubernetes auth config: kubernetes_host is required; without a local CA, kubernetes_ca_cert is too', async (t) => {
      if (!target.kubernetes) return t.skip('target has no kubernetes auth');
      const mount = `${run}-k8s`;
      const en = await api('POST', `sys/auth/${mount}`, { body: { type: 'kubernetes' } });
      assert.equal(en.status, 204, `enable: ${JSON.stringify(errorsOf(en))}`);
      cleanups.push(() => api('DELETE', `sys/auth/${mount}`));
      const noHost = await api('POST', `auth/${mount}/config`, { body: { disable_local_ca_jwt: true } });
      assert.equal(noHost.status, 400);
      assert.match((errorsOf(noHost) ?? []).join(' '), /no host provided/);
      const noCa = await api('POST', `auth/${mount}/config`, {
        body: { kubernetes_host: 'https://127.0.0.1:6443', disable_local_ca_jwt: true },
      });
      assert.equal(noCa.status, 400, 'a host alone is not enough outside a pod');
      assert.match((errorsOf(noCa) ?? []).join(' '), /kubernetes_ca_cert must be given/);
      assert.equal((await api('GET', `auth/${mount}/config`)).status, 404, 'nothing stored after a refused config');
    });

    void test('kubernetes auth: a token signed with HS256 is refused before any TokenReview', async (t) => {
      const k8s = target.kubernetes;
      if (!k8s) return t.skip('target has no kubernetes auth');
      const ns = `${run}-hs256`;
      const role = `${run}.hs256`;
      cleanups.push(() => api('DELETE', `auth/${k8s.mount}/role/${role}`));
      await api('POST', `auth/${k8s.mount}/role/${role}`, {
        body: {
          bound_service_account_names: ['app'],
          bound_service_account_namespaces: [ns],
          token_policies: ['default'],
          token_ttl: '10m',
        },
      });
      const real = await k8s.jwtFor(ns, 'app');
      const [header, payload] = real.split('.');
      const alg = (JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8')) as { alg: string }).alg;
      assert.match(alg, /^(RS|ES|PS)\d+$/, `service-account tokens are signed asymmetrically (alg ${alg})`);
      const forgedHead = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
      const forged = `${forgedHead}.${payload}.${createHmac('sha256', randomBytes(32)).update(`${forgedHead}.${payload}`).digest('base64url')}`;
      const login = await api('POST', `auth/${k8s.mount}/login`, { token: null, body: { role, jwt: forged } });
      assert.ok(login.status === 400 || login.status === 403, `HS256 login status ${login.status}`);
      assert.equal(login.body?.auth ?? null, null);
      const good = await api('POST', `auth/${k8s.mount}/login`, { token: null, body: { role, jwt: real } });
      assert.equal(good.status, 200, 'the unmodified token logs in');
      cleanups.push(() =>
        api('POST', 'auth/token/revoke-self', { token: (good.body?.auth as { client_token: string }).client_token }),
      );
    });

    void test('kubernetes auth: login issues a token with the role policies; wrong namespace refused (403)', async (t) => {
      const k8s = target.kubernetes;
      if (!k8s) return t.skip('target has no kubernetes auth');
      const ns = `${run}-login`;
      const role = `${run}.login`;
      const policy = `${run}.login`;
      cleanups.push(
        () => api('DELETE', `auth/${k8s.mount}/role/${role}`),
        () => api('DELETE', `sys/policies/acl/${policy}`),
      );
      await api('PUT', `sys/policies/acl/${policy}`, {
        body: { policy: `path "secret/data/${ns}/*" {\n  capabilities = ["read"]\n}\n` },
      });
      await api('PUT', `secret/data/${ns}/db`, { body: { data: { password: 'contract-value' } } });
      cleanups.push(() => api('DELETE', `secret/metadata/${ns}/db`));
      await api('POST', `auth/${k8s.mount}/role/${role}`, {
        body: {
          bound_service_account_names: ['app'],
          bound_service_account_namespaces: [ns],
          token_policies: [policy],
          token_ttl: '1h',
        },
      });
      const login = await api('POST', `auth/${k8s.mount}/login`, {
        token: null,
        body: { role, jwt: await k8s.jwtFor(ns, 'app') },
      });
      assert.equal(login.status, 200, `login: ${JSON.stringify(errorsOf(login))}`);
      const auth = login.body?.auth as {
        client_token: string;
        policies: string[];
        token_policies: string[];
        lease_duration: number;
        renewable: boolean;
        metadata: Record<string, string>;
      };
      assert.equal(typeof auth.client_token, 'string');
      assert.ok(auth.token_policies.includes(policy) && auth.token_policies.includes('default'));
      assert.ok(auth.lease_duration > 3500 && auth.lease_duration <= 3600, `lease_duration ${auth.lease_duration}`);
      assert.equal(auth.renewable, true);
      assert.equal(auth.metadata.service_account_namespace, ns);
      assert.equal(auth.metadata.service_account_name, 'app');
      cleanups.push(() => api('POST', 'auth/token/revoke-self', { token: auth.client_token }));

      // The token reads what its policy allows and nothing else.
      const read = await api('GET', `secret/data/${ns}/db`, { token: auth.client_token });
      assert.equal(read.status, 200);
      const denied = await api('GET', `secret/data/${run}-elsewhere/db`, { token: auth.client_token });
      assert.equal(denied.status, 403);
      assert.match((errorsOf(denied) ?? []).join(' '), /permission denied/);

      // A service account of another namespace is refused. Loose on the text: Vault says
      // "namespace not authorized" (older: "permission denied").
      const wrong = await api('POST', `auth/${k8s.mount}/login`, {
        token: null,
        body: { role, jwt: await k8s.jwtFor(`${run}-other`, 'app') },
      });
      assert.equal(wrong.status, 403, `wrong-namespace login status ${wrong.status}`);
      assert.match((errorsOf(wrong) ?? []).join(' '), /not authorized|permission denied/);

      // Unknown role: 400 "invalid role name".
      const unknown = await api('POST', `auth/${k8s.mount}/login`, {
        token: null,
        body: { role: `${run}.nope`, jwt: await k8s.jwtFor(ns, 'app') },
      });
      assert.equal(unknown.status, 400);
    });

    void test('tokens keep the policy names they were issued with; policy text changes apply at once (re-login needed for role changes)', async (t) => {
      const k8s = target.kubernetes;
      if (!k8s) return t.skip('target has no kubernetes auth');
      const ns = `${run}-rolechange`;
      const role = `${run}.rolechange`;
      const [p1, p2] = [`${run}.rc1`, `${run}.rc2`];
      cleanups.push(
        () => api('DELETE', `auth/${k8s.mount}/role/${role}`),
        () => api('DELETE', `sys/policies/acl/${p1}`),
        () => api('DELETE', `sys/policies/acl/${p2}`),
      );
      await api('PUT', `sys/policies/acl/${p1}`, {
        body: { policy: `path "secret/data/${ns}/one" {\n  capabilities = ["read"]\n}\n` },
      });
      await api('PUT', `sys/policies/acl/${p2}`, {
        body: { policy: `path "secret/data/${ns}/two" {\n  capabilities = ["read"]\n}\n` },
      });
      for (const k of ['one', 'two']) {
        await api('PUT', `secret/data/${ns}/${k}`, { body: { data: { v: k } } });
        cleanups.push(() => api('DELETE', `secret/metadata/${ns}/${k}`));
      }
      await api('POST', `auth/${k8s.mount}/role/${role}`, {
        body: {
          bound_service_account_names: ['app'],
          bound_service_account_namespaces: [ns],
          token_policies: [p1],
          token_ttl: '1h',
        },
      });
      const first = await api('POST', `auth/${k8s.mount}/login`, {
        token: null,
        body: { role, jwt: await k8s.jwtFor(ns, 'app') },
      });
      const oldToken = (first.body?.auth as { client_token: string }).client_token;
      cleanups.push(() => api('POST', 'auth/token/revoke-self', { token: oldToken }));
      assert.equal((await api('GET', `secret/data/${ns}/one`, { token: oldToken })).status, 200);

      // Role now grants p2: the existing token still carries p1 only.
      await api('POST', `auth/${k8s.mount}/role/${role}`, { body: { token_policies: [p2] } });
      assert.equal((await api('GET', `secret/data/${ns}/two`, { token: oldToken })).status, 403);
      const look = dataOf(await api('GET', 'auth/token/lookup-self', { token: oldToken }));
      assert.ok((look.policies as string[]).includes(p1) && !(look.policies as string[]).includes(p2));
      const second = await api('POST', `auth/${k8s.mount}/login`, {
        token: null,
        body: { role, jwt: await k8s.jwtFor(ns, 'app') },
      });
      const newToken = (second.body?.auth as { client_token: string }).client_token;
      cleanups.push(() => api('POST', 'auth/token/revoke-self', { token: newToken }));
      assert.equal((await api('GET', `secret/data/${ns}/two`, { token: newToken })).status, 200);

      // Editing the text of p1 takes effect for the old token immediately.
      await api('PUT', `sys/policies/acl/${p1}`, {
        body: { policy: `path "secret/data/${ns}/nothing" {\n  capabilities = ["read"]\n}\n` },
      });
      assert.equal((await api('GET', `secret/data/${ns}/one`, { token: oldToken })).status, 403);
    });

    void test('token self-service: lookup-self and renew-self on a login token', async (t) => {
      const k8s = target.kubernetes;
      if (!k8s) return t.skip('target has no kubernetes auth');
      const ns = `${run}-renew`;
      const role = `${run}.renew`;
      cleanups.push(() => api('DELETE', `auth/${k8s.mount}/role/${role}`));
      await api('POST', `auth/${k8s.mount}/role/${role}`, {
        body: {
          bound_service_account_names: ['app'],
          bound_service_account_namespaces: [ns],
          token_policies: ['default'],
          token_ttl: '10m',
          token_max_ttl: '15m',
        },
      });
      const login = await api('POST', `auth/${k8s.mount}/login`, {
        token: null,
        body: { role, jwt: await k8s.jwtFor(ns, 'app') },
      });
      const token = (login.body?.auth as { client_token: string }).client_token;
      const look = dataOf(await api('GET', 'auth/token/lookup-self', { token }));
      assert.ok((look.ttl as number) > 0 && (look.ttl as number) <= 600);
      assert.equal(look.renewable, true);
      const renew = await api('POST', 'auth/token/renew-self', { token, body: { increment: '1h' } });
      assert.equal(renew.status, 200);
      const lease = (renew.body?.auth as { lease_duration: number }).lease_duration;
      assert.ok(lease > 0 && lease <= 900, `renewal is capped by token_max_ttl (got ${lease})`);
      assert.equal((await api('POST', 'auth/token/revoke-self', { token })).status, 204);
      assert.equal((await api('GET', 'auth/token/lookup-self', { token })).status, 403, 'a revoked token is refused');
    });

    // ------------------------------------------------------------------------------ KV v2

    void test('KV v2: versions, check-and-set, read of an old version, metadata, list, delete/undelete/destroy', async () => {
      const base = `secret/data/${run}/kv2`;
      cleanups.push(
        () => api('DELETE', `secret/metadata/${run}/kv2/db`),
        () => api('DELETE', `secret/metadata/${run}/kv2/sub/x`),
      );
      const w1 = await api('POST', `${base}/db`, { body: { data: { password: 'one' } } });
      assert.equal(w1.status, 200);
      assert.equal(dataOf(w1).version, 1);
      const w2 = await api('POST', `${base}/db`, { body: { data: { password: 'two' }, options: { cas: 1 } } });
      assert.equal(w2.status, 200);
      assert.equal(dataOf(w2).version, 2);
      const mismatch = await api('POST', `${base}/db`, { body: { data: { password: 'three' }, options: { cas: 1 } } });
      assert.equal(mismatch.status, 400);
      assert.match((errorsOf(mismatch) ?? []).join(' '), /check-and-set/);
      const createOnly = await api('POST', `${base}/db`, { body: { data: { password: 'x' }, options: { cas: 0 } } });
      assert.equal(createOnly.status, 400, 'cas=0 refuses to overwrite an existing key');

      const latest = dataOf(await api('GET', `${base}/db`));
      assert.deepEqual(latest.data, { password: 'two' });
      assert.equal((latest.metadata as { version: number }).version, 2);
      const v1 = dataOf(await api('GET', `${base}/db?version=1`));
      assert.deepEqual(v1.data, { password: 'one' });

      // custom_metadata (ESO find.tags, ownership markers) without writing a version.
      const cm = await api('POST', `secret/metadata/${run}/kv2/db`, {
        body: { custom_metadata: { 'managed-by': 'vaultgate', owner: 'team-a' } },
      });
      assert.equal(cm.status, 204);
      const meta = dataOf(await api('GET', `secret/metadata/${run}/kv2/db`));
      assert.equal(meta.current_version, 2);
      assert.deepEqual(meta.custom_metadata, { 'managed-by': 'vaultgate', owner: 'team-a' });
      assert.deepEqual(Object.keys(meta.versions as object).sort(), ['1', '2']);

      await api('POST', `${base}/sub/x`, { body: { data: { a: '1' } } });
      const list = await api('LIST', `secret/metadata/${run}/kv2`);
      assert.equal(list.status, 200);
      assert.deepEqual((dataOf(list).keys as string[]).slice().sort(), ['db', 'sub/']);

      // Soft delete of the latest version: 404 (Vault still returns its metadata), undelete restores.
      assert.equal((await api('DELETE', `${base}/db`)).status, 204);
      assert.equal((await api('GET', `${base}/db`)).status, 404);
      assert.equal((await api('POST', `secret/undelete/${run}/kv2/db`, { body: { versions: [2] } })).status, 204);
      assert.equal((await api('GET', `${base}/db`)).status, 200);
      assert.equal((await api('POST', `secret/destroy/${run}/kv2/db`, { body: { versions: [1] } })).status, 204);
      assert.equal((await api('GET', `${base}/db?version=1`)).status, 404);
      assert.equal((await api('DELETE', `secret/metadata/${run}/kv2/db`)).status, 204);
      const gone = await api('GET', `${base}/db`);
      assert.equal(gone.status, 404);
      assert.deepEqual(errorsOf(gone), [], 'a missing KV path is 404 with errors: []');
    });

    void test('KV v2: missing prefix lists as 404 with empty errors; write without data is 400', async () => {
      const list = await api('LIST', `secret/metadata/${run}/nothing-here`);
      assert.equal(list.status, 404);
      assert.deepEqual(errorsOf(list), []);
      const bad = await api('POST', `secret/data/${run}/nodata`, { body: { options: {} } });
      assert.equal(bad.status, 400);
      assert.ok((errorsOf(bad) ?? []).length > 0);
    });

    void test('adapter: KvApi v2 read/write(CAS)/list/metadata and errors by kind', async () => {
      const kv = createKvApi(rootRequester, { mount: 'secret', version: 2 });
      const key = `${run}/adapter/db`;
      cleanups.push(() => kv.deleteAll(key));
      assert.deepEqual(await kv.write(key, { user: 'u', password: 'p1' }, { cas: 0 }), { version: 1 });
      await assert.rejects(
        kv.write(key, { password: 'p2' }, { cas: 0 }),
        (e: unknown) => (e as { kind: string }).kind === 'invalid',
      );
      assert.deepEqual(await kv.write(key, { user: 'u', password: 'p2' }, { cas: 1 }), { version: 2 });
      const s = await kv.read(key);
      assert.deepEqual(s?.data, { user: 'u', password: 'p2' });
      assert.equal(s?.metadata?.version, 2);
      assert.deepEqual((await kv.read(key, { version: 1 }))?.data, { user: 'u', password: 'p1' });
      await kv.writeMetadata(key, { customMetadata: { env: 'test' } });
      const m = await kv.readMetadata(key);
      assert.equal(m?.currentVersion, 2);
      assert.deepEqual(m?.customMetadata, { env: 'test' });
      assert.deepEqual(await kv.list(`${run}/adapter`), ['db']);
      assert.deepEqual(await kv.list(`${run}/absent`), []);
      assert.equal(await kv.read(`${run}/absent/x`), undefined);
      await kv.delete(key);
      assert.equal(await kv.read(key), undefined, 'a soft-deleted latest version reads as absent');
    });

    // ------------------------------------------------------------------------------ KV v1

    void test('KV v1 mount: write/read/list/delete; missing path 404 with empty errors; adapter v1', async () => {
      const mount = `${run}-kv1`;
      const en = await api('POST', `sys/mounts/${mount}`, { body: { type: 'kv', options: { version: '1' } } });
      assert.equal(en.status, 204, `enable kv v1: ${JSON.stringify(errorsOf(en))}`);
      cleanups.push(() => api('DELETE', `sys/mounts/${mount}`));
      assert.equal((await api('POST', `${mount}/team/db`, { body: { password: 'v1' } })).status, 204);
      const got = await api('GET', `${mount}/team/db`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body?.data, { password: 'v1' });
      const list = await api('LIST', `${mount}/team`);
      assert.deepEqual(dataOf(list).keys, ['db']);
      assert.equal((await api('DELETE', `${mount}/team/db`)).status, 204);
      const gone = await api('GET', `${mount}/team/db`);
      assert.equal(gone.status, 404);
      assert.deepEqual(errorsOf(gone), []);

      const kv = createKvApi(rootRequester, { mount, version: 1 });
      assert.deepEqual(await kv.write('a/b', { k: 'v' }), {});
      assert.deepEqual((await kv.read('a/b'))?.data, { k: 'v' });
      assert.deepEqual(await kv.list('a'), ['b']);
      await assert.rejects(kv.readMetadata('a/b'), (e: unknown) => (e as { kind: string }).kind === 'invalid');
      await kv.delete('a/b');
      assert.equal(await kv.read('a/b'), undefined);
    });

    // ------------------------------------------------------------------------------ errors

    void test('errors: 403 "permission denied" for a token without the capability and for an unknown token', async () => {
      const pname = `${run}.narrow`;
      cleanups.push(() => api('DELETE', `sys/policies/acl/${pname}`));
      await api('PUT', `sys/policies/acl/${pname}`, {
        body: { policy: `path "secret/data/${run}/narrow/*" {\n  capabilities = ["read"]\n}\n` },
      });
      const created = await api('POST', 'auth/token/create', { body: { policies: [pname], ttl: '10m' } });
      assert.equal(created.status, 200);
      const token = (created.body?.auth as { client_token: string }).client_token;
      cleanups.push(() => api('POST', 'auth/token/revoke-self', { token }));
      const denied = await api('GET', `secret/data/${run}/other/x`, { token });
      assert.equal(denied.status, 403);
      assert.match((errorsOf(denied) ?? []).join(' '), /permission denied/);
      const writeDenied = await api('POST', `secret/data/${run}/narrow/x`, { token, body: { data: { a: 'b' } } });
      assert.equal(writeDenied.status, 403, 'read-only policy refuses a write');
      const bogus = await api('GET', `secret/data/${run}/narrow/x`, { token: 'hvs.not-a-real-token' });
      assert.equal(bogus.status, 403);

      // The adapter maps them to kind forbidden, with Vault's text and no token in the message.
      const kv = createKvApi(
        { request: <T>(req: VaultRequest) => client.request<T>({ ...req, token }) },
        { mount: 'secret', version: 2 },
      );
      await assert.rejects(kv.read(`${run}/other/x`), (e: unknown) => {
        const err = e as { kind: string; status: number; message: string };
        return (
          err.kind === 'forbidden' &&
          err.status === 403 &&
          /permission denied/.test(err.message) &&
          !err.message.includes(token)
        );
      });
    });

    void test('rate-limit quota: requests beyond the quota get 429 "rate limit quota exceeded"', async (t) => {
      const mount = `${run}-rl`;
      await api('POST', `sys/mounts/${mount}`, { body: { type: 'kv', options: { version: '1' } } });
      cleanups.push(() => api('DELETE', `sys/mounts/${mount}`));
      const quota = await api('POST', `sys/quotas/rate-limit/${run}-rl`, {
        body: { path: `${mount}/`, rate: 1, interval: '60s' },
      });
      if (quota.status !== 204 && quota.status !== 200)
        return t.skip(`rate-limit quotas unsupported (status ${quota.status})`);
      cleanups.push(() => api('DELETE', `sys/quotas/rate-limit/${run}-rl`));
      const statuses: number[] = [];
      let limited: Raw | undefined;
      for (let i = 0; i < 10 && !limited; i++) {
        const r = await api('GET', `${mount}/x`);
        statuses.push(r.status);
        if (r.status === 429) limited = r;
      }
      assert.ok(limited, `expected a 429 among ${statuses.join(',')}`);
      assert.match((errorsOf(limited) ?? []).join(' '), /rate limit quota exceeded/);
      await assert.rejects(
        createKvApi(rootRequester, { mount, version: 1 }).read('x'),
        (e: unknown) => (e as { kind: string }).kind === 'rate_limited',
      );
    });

    void test('sealed: requests get 503 "Vault is sealed", kind sealed; after unseal they work again', async (t) => {
      const seal = target.seal;
      if (!seal) return t.skip('target cannot be sealed');
      await seal.seal();
      try {
        const r = await api('GET', `secret/data/${run}/sealed`);
        assert.equal(r.status, 503);
        assert.match((errorsOf(r) ?? []).join(' '), /Vault is sealed/i);
        const health = await api('GET', 'sys/health', { token: null });
        assert.equal(health.status, 503);
        assert.equal(health.body?.sealed, true);
        await assert.rejects(
          createSysApi(rootRequester).readPolicy('default'),
          (e: unknown) => (e as { kind: string }).kind === 'sealed',
        );
      } finally {
        await seal.unseal();
      }
      assert.equal((await api('GET', 'sys/health', { token: null })).status, 200);
      assert.equal((await api('GET', `secret/data/${run}/sealed`)).status, 404);
    });

    void test('adapter: TokenCache logs in once per identity and reuses the token', async (t) => {
      const k8s = target.kubernetes;
      if (!k8s) return t.skip('target has no kubernetes auth');
      const ns = `${run}-cache`;
      const role = `${run}.cache`;
      cleanups.push(() => api('DELETE', `auth/${k8s.mount}/role/${role}`));
      await api('POST', `auth/${k8s.mount}/role/${role}`, {
        body: {
          bound_service_account_names: ['app'],
          bound_service_account_namespaces: [ns],
          token_policies: ['default'],
          token_ttl: '1h',
        },
      });
      const cache = new TokenCache();
      let jwtCalls = 0;
      const session = cache.session(client, {
        method: 'kubernetes',
        mount: k8s.mount,
        role,
        subject: `${ns}/app`,
        jwt: () => {
          jwtCalls++;
          return k8s.jwtFor(ns, 'app');
        },
      });
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          session.request<{ data: { ttl: number } }>({
            operation: 'auth.token.lookup_self',
            method: 'GET',
            path: 'auth/token/lookup-self',
          }),
        ),
      );
      assert.ok(results.every((r) => (r?.data.ttl ?? 0) > 0));
      assert.equal(jwtCalls, 1, 'ten concurrent requests share one login');
      await cache.close({ revoke: true });
    });
  });
}
