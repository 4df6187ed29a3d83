// The controller app wired end to end (manager, informers, indexes, watches, four controllers) against
// the in-process Kubernetes store and the Vault simulator.
import { Writable } from 'node:stream';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildControllerApp } from '../../controller/main.ts';
import { KubeApiError } from '../../kube/errors.ts';
import { createLogger } from '../../observability/log.ts';
import { nullRecorder } from '../../kube/events.ts';
import { SECRETS, SERVICEACCOUNTS } from '../../kube/resources.ts';
import {
  EXTERNAL_SECRETS,
  PUSH_SECRETS,
  SECRET_STORES,
  VAULT_POLICIES,
  VAULT_ROLE_BINDINGS,
} from '../../schemas/resources.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { createVaultClient } from '../../vault/client.ts';
import { createKvApi } from '../../vault/kv.ts';
import { createSysApi } from '../../vault/sys.ts';
import type { VaultRequest } from '../../vault/types.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';
import { KubeStore } from '../sim/kube-store.ts';
import { storeTokenVerifier } from '../sim/store-token-verifier.ts';
import { VaultSim } from '../sim/vault.ts';

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ready = (o: KubeObject | undefined): boolean =>
  Boolean(
    (o?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions?.some(
      (c) => c.type === 'Ready' && c.status === 'True',
    ),
  );

void describe('controller app', () => {
  void test('VaultPolicy → VaultRoleBinding → SecretStore → ExternalSecret converge through the informers', async () => {
    const store = new KubeStore({ namespaces: ['default', 'team-a'] });
    const kube = new FakeKubeClient({ store });
    const sim = await VaultSim.start({ verifier: storeTokenVerifier(store) });
    const root = createVaultClient({ address: sim.addr, timeoutMs: 2000 });
    const asRoot = { request: <T>(req: VaultRequest) => root.request<T>({ ...req, token: sim.rootToken }) };
    const app = buildControllerApp({
      client: kube,
      vault: { address: sim.addr, auth: { method: 'token', token: sim.rootToken }, timeoutMs: 2000 },
      workers: 2,
      events: nullRecorder,
    });
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      await createKvApi(asRoot, { mount: 'secret', version: 2 }).write('team-a/db', { password: 'pw-e2e' });
      await kube.create(SERVICEACCOUNTS, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'app', namespace: 'team-a' },
      });
      // The binding first: it waits for its policy (PolicyNotFound) and converges when the policy is Ready.
      await kube.create(VAULT_ROLE_BINDINGS, {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultRoleBinding',
        metadata: { name: 'app', namespace: 'team-a' },
        spec: { serviceAccounts: ['app'], policies: ['reader'] },
      });
      await app.start();
      await kube.create(VAULT_POLICIES, {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'reader', namespace: 'team-a' },
        spec: { policy: 'path "secret/data/{{namespace}}/*" {\n  capabilities = ["read"]\n}\n' },
      });
      await until(async () => ready(await kube.get(VAULT_ROLE_BINDINGS, 'app', 'team-a')), 'VaultRoleBinding Ready');
      const sys = createSysApi(asRoot);
      // Raw policy text is written with {{namespace}} expanded, as admission checked it (Vault/OpenBao
      // would read an unexpanded one as an identity template and grant nothing).
      const written = await sys.readPolicy('vaultgate.team-a.reader');
      assert.match(written ?? '', /path "secret\/data\/team-a\/\*"/);
      assert.doesNotMatch(written ?? '', /\{\{namespace\}\}/);
      assert.deepEqual((await sys.readKubernetesRole('kubernetes', 'vaultgate.team-a.app'))?.token_policies, [
        'vaultgate.team-a.reader',
      ]);
      await kube.create(SECRET_STORES, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault', namespace: 'team-a' },
        spec: {
          provider: {
            vault: {
              server: sim.addr,
              path: 'secret',
              version: 'v2',
              auth: {
                kubernetes: {
                  mountPath: 'kubernetes',
                  role: 'vaultgate.team-a.app',
                  serviceAccountRef: { name: 'app' },
                },
              },
            },
          },
        },
      });
      await kube.create(EXTERNAL_SECRETS, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: { name: 'db', namespace: 'team-a' },
        spec: {
          secretStoreRef: { name: 'vault', kind: 'SecretStore' },
          data: [{ secretKey: 'password', remoteRef: { key: 'team-a/db', property: 'password' } }],
        },
      });
      await until(async () => Boolean(await kube.get(SECRETS, 'db', 'team-a')), 'the Secret');
      const secret = await kube.get<KubeObject & { data?: Record<string, string> }>(SECRETS, 'db', 'team-a');
      assert.equal(Buffer.from(secret?.data?.password ?? '', 'base64').toString(), 'pw-e2e');
      await until(async () => ready(await kube.get(EXTERNAL_SECRETS, 'db', 'team-a')), 'ExternalSecret Ready');
      // Deleting the policy: the finalizer removes it from Vault.
      await kube.delete(VAULT_POLICIES, 'reader', 'team-a');
      await until(async () => (await kube.get(VAULT_POLICIES, 'reader', 'team-a')) === undefined, 'VaultPolicy gone');
      assert.equal(await sys.readPolicy('vaultgate.team-a.reader'), undefined);
    } finally {
      await app.stop();
      clearInterval(keepAlive);
      root.close();
      await sim.stop();
    }
  });

  void test('a PushSecret applied before its SecretStore pushes as soon as the store is created, not at the next retry', async () => {
    const kube = new FakeKubeClient({ namespaces: ['default', 'team-a'] });
    const sim = await VaultSim.start();
    const root = createVaultClient({ address: sim.addr, timeoutMs: 2000 });
    const asRoot = { request: <T>(req: VaultRequest) => root.request<T>({ ...req, token: sim.rootToken }) };
    const app = buildControllerApp({
      client: kube,
      vault: { address: sim.addr, auth: { method: 'token', token: sim.rootToken }, timeoutMs: 2000 },
      workers: 2,
      events: nullRecorder,
    });
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      await app.start();
      const secret = (name: string, data: Record<string, string>): KubeObject => ({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: 'team-a' },
        data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      });
      await kube.create(SECRETS, secret('vault-token', { token: sim.rootToken }));
      await kube.create(SECRETS, secret('src', { password: 'pushed-early' }));
      await kube.create(PUSH_SECRETS, {
        apiVersion: 'external-secrets.io/v1alpha1',
        kind: 'PushSecret',
        metadata: { name: 'early', namespace: 'team-a' },
        spec: {
          refreshInterval: '1h',
          secretStoreRefs: [{ name: 'later', kind: 'SecretStore' }],
          selector: { secret: { name: 'src' } },
          data: [{ match: { secretKey: 'password', remoteRef: { remoteKey: 'team-a/early', property: 'password' } } }],
        },
      });
      const message = async (): Promise<string> =>
        (
          (await kube.get(PUSH_SECRETS, 'early', 'team-a'))?.status as
            { conditions?: Array<{ type: string; message?: string }> } | undefined
        )?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
      await until(async () => /SecretStore "later": not found/.test(await message()), 'Ready=False naming the store');
      await kube.create(SECRET_STORES, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'later', namespace: 'team-a' },
        spec: {
          provider: {
            vault: {
              server: sim.addr,
              path: 'secret',
              version: 'v2',
              auth: { tokenSecretRef: { name: 'vault-token', key: 'token' } },
            },
          },
        },
      });
      // Without the store watch the failure's retry is the refresh, at most 5 minutes away.
      await until(async () => ready(await kube.get(PUSH_SECRETS, 'early', 'team-a')), 'PushSecret Ready', 10_000);
      assert.equal(
        (await createKvApi(asRoot, { mount: 'secret', version: 2 }).read('team-a/early'))?.data?.password,
        'pushed-early',
      );
    } finally {
      await app.stop();
      clearInterval(keepAlive);
      root.close();
      await sim.stop();
    }
  });

  void test('without the ClusterExternalSecret and PushSecret CRDs (an older install) the controller starts, says so, and converges the rest', async () => {
    const kube = new FakeKubeClient({ namespaces: ['default', 'team-a'] });
    // What the apiserver answers for a resource no CRD defines.
    kube.failWith((call) =>
      (call.resource === 'clusterexternalsecrets' || call.resource === 'pushsecrets') &&
      (call.verb === 'list' || call.verb === 'watch')
        ? new KubeApiError(404, 'NotFound', 'the server could not find the requested resource')
        : undefined,
    );
    const sim = await VaultSim.start();
    const warnings: string[] = [];
    const log = createLogger({
      level: 'warn',
      destination: new Writable({
        write: (chunk: Buffer, _enc, done) => {
          warnings.push(chunk.toString());
          done();
        },
      }),
    });
    const app = buildControllerApp({
      client: kube,
      vault: { address: sim.addr, auth: { method: 'token', token: sim.rootToken }, timeoutMs: 2000 },
      workers: 2,
      events: nullRecorder,
      log,
    });
    try {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        app.start(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('start() never resolved: the caches never synced')), 10_000);
        }),
      ]);
      clearTimeout(timer);
      assert.equal(app.manager.status().synced, true);
      for (const plural of ['clusterexternalsecrets', 'pushsecrets']) {
        assert.ok(
          warnings.some((w) => w.includes(plural) && /CRD is not installed/.test(w)),
          `a warning names ${plural}: ${warnings.join(' | ')}`,
        );
      }
      await kube.create(VAULT_POLICIES, {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'reader', namespace: 'team-a' },
        spec: { policy: 'path "secret/data/team-a/*" {\n  capabilities = ["read"]\n}\n' },
      });
      await until(async () => ready(await kube.get(VAULT_POLICIES, 'reader', 'team-a')), 'VaultPolicy Ready');
    } finally {
      await app.stop();
      await sim.stop();
    }
  });
});
