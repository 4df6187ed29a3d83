// Issue #21 items 1 and 8(a) on a real kube-apiserver and OpenBao 2.7.2, with no webhook in front (as if
// it were bypassed: failurePolicy Ignore, or down), so the controller must refuse by itself.
// 1. A PushSecret in team-a pushing to `team-a/../team-b/db` through a store whose identity may write
//    secret/* (OpenBao itself would allow the write): team-b's secret keeps its value, its versions and its
//    markers; deleting the PushSecret (deletionPolicy Delete, its status listing that key as pushed, a
//    finalizer) deletes nothing there.
// 8(a). A VaultPolicy (raw HCL) with an object-valued parameter constraint on the KV v2 `data` parameter is written so that OpenBao enforces what
//    was admitted: a real token with the policy may write the object, not the JSON string of it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { condition, type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-a';
const PS_PATH = `/apis/external-secrets.io/v1alpha1/namespaces/${NS}/pushsecrets`;

void describe(
  '#21 paths and policies as written: real apiserver, OpenBao 2.7.2, no webhook',
  { skip: tier.skip || baoSkipReason() },
  () => {
    let stack: E2EStack;
    const bao = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> =>
      stack.vaultRoot(method, path, body);
    const ok = async (method: string, path: string, body?: unknown): Promise<unknown> => {
      const r = await bao(method, path, body);
      assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const teamB = async (): Promise<{ data: unknown; version: number; customMetadata: unknown }> => {
      const d = (await ok('GET', 'secret/data/team-b/db')) as { data: { data: unknown } };
      const m = (await ok('GET', 'secret/metadata/team-b/db')) as {
        data: { current_version: number; custom_metadata: unknown };
      };
      return { data: d.data.data, version: m.data.current_version, customMetadata: m.data.custom_metadata };
    };
    const readyOf = async (name: string): Promise<{ status: string; message?: string }> =>
      (
        await waitFor(
          async () => {
            const c = condition((await stack.cp.request('GET', `${PS_PATH}/${name}`)).body as Record<string, unknown>);
            return c ? { value: c } : undefined;
          },
          { what: `PushSecret ${name} has a Ready condition`, timeoutMs: 60_000, intervalMs: 500 },
        )
      ).value;

    before(async () => {
      stack = await startE2E({ webhook: false });
      await ok('PUT', 'sys/policies/acl/pusher', {
        policy: 'path "secret/*" { capabilities = ["create", "read", "update", "delete", "list"] }\n',
      });
      await ok('POST', 'auth/kubernetes/role/pusher', {
        bound_service_account_names: ['pusher'],
        bound_service_account_namespaces: [NS],
        token_policies: ['pusher'],
        token_ttl: 3600,
      });
      await ok('POST', 'secret/data/team-b/db', { data: { password: 'team-b-own' } });
      await ok('POST', 'secret/metadata/team-b/db', {
        custom_metadata: { 'managed-by': 'external-secrets', 'vaultgate.io/pushed-by': 'team-a/evil-gone' },
      });
      await stack.cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'pusher', namespace: NS } },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'src', namespace: NS },
          stringData: { password: 'attacker-chosen' },
        },
        {
          apiVersion: 'external-secrets.io/v1',
          kind: 'SecretStore',
          metadata: { name: 'shared', namespace: NS },
          spec: {
            provider: {
              vault: {
                server: stack.vault.addr,
                path: 'secret',
                version: 'v2',
                auth: {
                  kubernetes: { mountPath: 'kubernetes', role: 'pusher', serviceAccountRef: { name: 'pusher' } },
                },
              },
            },
          },
        },
      ]);
    });
    after(async () => {
      await stack?.stop();
    });

    const ps = (name: string, extra: Record<string, unknown> = {}): object => ({
      apiVersion: 'external-secrets.io/v1alpha1',
      kind: 'PushSecret',
      metadata: { name, namespace: NS, ...extra },
      spec: {
        refreshInterval: '1h',
        deletionPolicy: 'Delete',
        secretStoreRefs: [{ name: 'shared', kind: 'SecretStore' }],
        selector: { secret: { name: 'src' } },
        data: [
          { match: { secretKey: 'password', remoteRef: { remoteKey: 'team-a/../team-b/db', property: 'password' } } },
        ],
      },
    });

    void test('remoteKey "team-a/../team-b/db": refused by the controller, team-b\'s secret keeps value, versions and marker', async () => {
      const before_ = await teamB();
      await stack.cp.apply(ps('evil'));
      const ready = await readyOf('evil');
      assert.equal(ready.status, 'False');
      assert.match(
        ready.message ?? '',
        /spec\.data\[0\]\.match\.remoteRef\.remoteKey: .*"\." or "\.\." segment.*\(rule eso\.ps\.vault-path\)/,
      );
      assert.doesNotMatch(ready.message ?? '', /attacker-chosen/);
      assert.deepEqual(await teamB(), before_);
      assert.deepEqual(before_.data, { password: 'team-b-own' });
    });

    void test('deleting a PushSecret whose status lists the traversal key as pushed deletes nothing in team-b', async () => {
      const before_ = await teamB();
      await stack.cp.apply(ps('evil-gone', { finalizers: ['pushsecret.externalsecrets.io/finalizer'] }));
      await readyOf('evil-gone');
      // What a pre-fix controller would have recorded after taking the secret over.
      const synced = {
        'SecretStore/shared': {
          'team-a/../team-b/db/password': {
            match: { secretKey: 'password', remoteRef: { remoteKey: 'team-a/../team-b/db', property: 'password' } },
          },
        },
      };
      await stack.cp.kubectl([
        'patch',
        '-n',
        NS,
        'pushsecret/evil-gone',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { syncedPushSecrets: synced } }),
      ]);
      await stack.cp.kubectl(['delete', '-n', NS, 'pushsecret/evil-gone', '--wait=true', '--timeout=60s']);
      assert.equal((await stack.cp.request('GET', `${PS_PATH}/evil-gone`)).status, 404, 'the finalizer was released');
      assert.deepEqual(await teamB(), before_);
    });

    void test('an object-valued parameter constraint means on OpenBao what was admitted: the object is allowed, its JSON string is not', async () => {
      await stack.cp.apply({
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'params', namespace: NS },
        spec: {
          policy:
            'path "secret/data/team-a/obj" {\n  capabilities = ["create", "update"]\n  allowed_parameters = {\n    "data" = [{"good" = "one"}]\n  }\n}\n',
        },
      });
      const name = 'vaultgate.team-a.params';
      const text = (
        await waitFor(
          async () => {
            const r = await bao('GET', `sys/policies/acl/${name}`);
            return r.status === 200 ? { value: (r.body as { data: { policy: string } }).data.policy } : undefined;
          },
          { what: `policy ${name} written`, timeoutMs: 60_000, intervalMs: 500 },
        )
      ).value;
      assert.match(text, /"data" = \[\{"good" = "one"\}\]/);
      const token = (
        (await ok('POST', 'auth/token/create', { policies: [name], no_default_policy: true, ttl: '10m' })) as {
          auth: { client_token: string };
        }
      ).auth.client_token;
      const as = async (body: unknown): Promise<number> => {
        const res = await fetch(`${stack.vault.addr}/v1/secret/data/team-a/obj`, {
          method: 'POST',
          headers: { 'X-Vault-Token': token, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        await res.arrayBuffer();
        return res.status;
      };
      assert.equal(await as({ data: { good: 'one' } }), 200, 'the admitted object is allowed');
      // The JSON string of it is not written (OpenBao answers 400 for a string `data`, whatever the ACL).
      assert.ok([400, 403].includes(await as({ data: '{"good":"one"}' })));
      assert.equal(await as({ data: { good: 'two' } }), 403, 'another object is denied by the ACL');
      const stored = (await ok('GET', 'secret/data/team-a/obj')) as {
        data: { data: unknown; metadata: { version: number } };
      };
      assert.deepEqual(stored.data.data, { good: 'one' });
      assert.equal(stored.data.metadata.version, 1);
    });
  },
);
