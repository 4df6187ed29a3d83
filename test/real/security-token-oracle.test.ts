// #14 item 2 (real tier): a tenant's SecretStore is not a token oracle. On a real kube-apiserver and
// OpenBao 2.7.2, with the chart's RBAC and arguments (--allowed-vault-server from vault.address):
// - a store naming another server is refused at admission and, with the webhook down (the chart's ESO
//   failurePolicy is Ignore), by the controller, and that server receives nothing;
// - a store asking for the apiserver's own audience is refused at admission and by the controller;
// - a store naming no audience gets a token with audience "vault" and syncs through OpenBao (a role
//   checking audience "vault", as VaultRoleBinding writes it); even a server a guardrail allows receives
//   only such a token, which the apiserver itself refuses.
// Today's code fails every one of these: it sent an apiserver-audience token to any server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ChartInstall, readyOf as ready, startChartInstall } from '../harness/chart-rbac.ts';
import { kubeRequest } from '../harness/kube-http.ts';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';
import { CommandError } from '../harness/tools.ts';
import { waitFor } from '../harness/wait.ts';
import { audiencesOf } from '../../kube/api-audiences.ts';

const tier = await realTier();
const skip = tier.skip || baoSkipReason();
const NS = 'team-a';

type Obj = Record<string, unknown>;
type Ready = ReturnType<typeof ready>;

/** An HTTP server standing for a host the tenant controls: records every request and the JWTs in them. */
async function startCatcher(): Promise<{
  url: string;
  requests: Array<{ path: string; jwt?: string }>;
  close(): Promise<void>;
}> {
  const requests: Array<{ path: string; jwt?: string }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let jwt: string | undefined;
      try {
        jwt = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { jwt?: string }).jwt;
      } catch {
        /* not JSON */
      }
      requests.push({ path: req.url ?? '', ...(jwt ? { jwt } : {}) });
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"errors":["permission denied"]}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const store = (name: string, server: string, sa: Obj = { name: 'app' }): Obj => ({
  apiVersion: 'external-secrets.io/v1',
  kind: 'SecretStore',
  metadata: { name, namespace: NS },
  spec: {
    provider: {
      vault: {
        server,
        path: 'secret',
        version: 'v2',
        auth: { kubernetes: { mountPath: 'kubernetes', role: 'vaultgate.team-a.app', serviceAccountRef: sa } },
      },
    },
  },
});
const externalSecret = (name: string, storeName: string): Obj => ({
  apiVersion: 'external-secrets.io/v1',
  kind: 'ExternalSecret',
  metadata: { name, namespace: NS },
  spec: {
    secretStoreRef: { name: storeName, kind: 'SecretStore' },
    refreshInterval: '1h',
    target: { name },
    data: [{ secretKey: 'password', remoteRef: { key: 'team-a/db', property: 'password' } }],
  },
});

void describe(
  'a SecretStore is not a token oracle (real apiserver, OpenBao 2.7.2, chart RBAC and arguments)',
  { skip },
  () => {
    let ci: ChartInstall;
    let catcher: Awaited<ReturnType<typeof startCatcher>>;
    let apiAudience: string;
    const get = (path: string): Promise<Obj | undefined> => ci.get(path);
    const storeReady = (name: string): Promise<Ready> =>
      get(`/apis/external-secrets.io/v1/namespaces/${NS}/secretstores/${name}`).then(ready);
    const waitStore = async (name: string, pred: (r: Ready | undefined) => boolean, what: string): Promise<Ready> => {
      let last: Ready;
      try {
        await waitFor(async () => (pred((last = await storeReady(name))) ? true : undefined), {
          what,
          timeoutMs: 120_000,
          intervalMs: 300,
        });
      } catch (err) {
        throw new Error(
          `${(err as Error).message}\nlast: ${JSON.stringify(last ?? null)}\n${ci.procs.logTail('controller')}`,
        );
      }
      return last;
    };
    const refusedAtAdmission = async (obj: Obj): Promise<string> => {
      const err = await ci.cp.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(obj) }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof CommandError, `kubectl apply of ${String((obj.metadata as Obj).name)} must be refused`);
      return err.stderr;
    };

    before(async () => {
      catcher = await startCatcher();
      ci = await startChartInstall({ namespaces: [NS] });
      await ci.cp.apply([
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: NS } },
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultPolicy',
          metadata: { name: 'read', namespace: NS },
          spec: { rules: [{ path: 'secret/data/{{namespace}}/*', capabilities: ['read'] }] },
        },
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultRoleBinding',
          metadata: { name: 'app', namespace: NS },
          spec: { serviceAccounts: ['app'], policies: ['read'], audience: 'vault' },
        },
      ]);
      await ci.cp.bao(['kv', 'put', 'secret/team-a/db', 'password=oracle-canary']);
      // The apiserver's own audience, as a pod's token carries it (no audience asked).
      apiAudience = audiencesOf(await ci.cp.serviceAccountToken(NS, 'app'))[0] ?? '';
      assert.ok(apiAudience, 'the apiserver names its audience');
    });
    after(async () => {
      await ci?.stop();
      await catcher?.close();
    });

    void test('a store naming no audience syncs through OpenBao with a token whose audience is "vault"', async () => {
      await ci.cp.apply([store('vault', ci.cp.vaultAddr!), externalSecret('db', 'vault')]);
      assert.equal((await waitStore('vault', (r) => r?.status === 'True', 'store Valid'))?.reason, 'Valid');
      let secret: Obj | undefined;
      await waitFor(async () => ((secret = await get(`/api/v1/namespaces/${NS}/secrets/db`)) ? true : undefined), {
        what: 'Secret db',
        timeoutMs: 120_000,
        intervalMs: 300,
      }).catch(async (err: unknown) => {
        const es = await get(`/apis/external-secrets.io/v1/namespaces/${NS}/externalsecrets/db`);
        throw new Error(
          `${(err as Error).message}\nExternalSecret status: ${JSON.stringify(es?.status ?? null)}\n${ci.procs.logTail('controller')}`,
        );
      });
      assert.equal(
        Buffer.from(String((secret?.data as Record<string, string>).password), 'base64').toString(),
        'oracle-canary',
      );
    });

    void test("admission refuses another server and the apiserver's audience, naming field and rule", async () => {
      const server = await refusedAtAdmission(store('elsewhere', catcher.url));
      assert.match(server, /spec\.provider\.vault\.server/);
      assert.match(server, /eso\.store\.vault-server/);
      const audience = await refusedAtAdmission(
        store('apiserver-aud', ci.cp.vaultAddr!, { name: 'app', audiences: [apiAudience] }),
      );
      assert.match(audience, /spec\.provider\.vault\.auth\.kubernetes\.serviceAccountRef\.audiences/);
      assert.match(audience, /eso\.store\.token-audience/);
      assert.deepEqual(catcher.requests, []);
    });

    void test('a server an enforce guardrail allows receives only a "vault"-audience token, which the apiserver refuses', async () => {
      await ci.cp.kubectl(['apply', '-f', '-'], {
        stdin: JSON.stringify({
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultGuardrail',
          metadata: { name: 'team-a-second-vault' },
          spec: {
            mode: 'enforce',
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
            allowedVaultServers: [catcher.url],
          },
        }),
      });
      // The webhook's informer sees the guardrail shortly after it is stored: retry the apply until admitted.
      await waitFor(
        async () =>
          await ci.cp.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(store('second', catcher.url)) }).then(
            () => true,
            () => undefined,
          ),
        { what: 'store on the allowed second server admitted', timeoutMs: 60_000, intervalMs: 500 },
      );
      await waitFor(() => Promise.resolve(catcher.requests.some((r) => r.jwt) ? true : undefined), {
        what: 'a login at the second server',
        timeoutMs: 120_000,
        intervalMs: 300,
      });
      const jwt = catcher.requests.find((r) => r.jwt)!.jwt!;
      assert.deepEqual(audiencesOf(jwt), ['vault']);
      // Replayed against the cluster, the token is worthless: wrong audience.
      const replay = await kubeRequest(
        { server: ci.cp.server, caPem: ci.cp.caPem, token: jwt },
        'GET',
        `/api/v1/namespaces/${NS}/secrets`,
      );
      assert.equal(replay.status, 401, 'the apiserver does not accept a "vault"-audience token');
      const control = await kubeRequest(
        { server: ci.cp.server, caPem: ci.cp.caPem, token: await ci.cp.serviceAccountToken(NS, 'app') },
        'GET',
        `/api/v1/namespaces/${NS}/secrets`,
      );
      assert.equal(
        control.status,
        403,
        'an apiserver-audience token of the same account authenticates (and is then refused by RBAC)',
      );
      await ci.cp.kubectl(['delete', 'vaultguardrail', 'team-a-second-vault']);
      await ci.cp.kubectl(['delete', 'secretstore', '-n', NS, 'second']);
    });

    void test('with the webhook down the store is stored, and the controller refuses it before minting or sending anything', async () => {
      await ci.procs.stop('webhook');
      const before = catcher.requests.length;
      // The chart's failurePolicy for ESO kinds is Ignore: the apiserver stores them without the webhook.
      await waitFor(
        async () =>
          await ci.cp.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(store('bypassed', catcher.url)) }).then(
            () => true,
            () => undefined,
          ),
        { what: 'store admitted without the webhook', timeoutMs: 60_000, intervalMs: 500 },
      );
      await ci.cp.apply([
        store('bypassed-aud', ci.cp.vaultAddr!, { name: 'app', audiences: [apiAudience] }),
        externalSecret('leak', 'bypassed-aud'),
      ]);
      const server = await waitStore('bypassed', (r) => r?.status === 'False', 'bypassed store refused');
      assert.match(
        server?.message ?? '',
        /spec\.provider\.vault\.server: .*not one this cluster allows.*\(rule eso\.store\.vault-server\)/,
      );
      const audience = await waitStore(
        'bypassed-aud',
        (r) => r?.status === 'False',
        'apiserver-audience store refused',
      );
      assert.match(
        audience?.message ?? '',
        /serviceAccountRef\.audiences: .*the Kubernetes apiserver's own.*\(rule eso\.store\.token-audience\)/,
      );
      assert.equal(catcher.requests.length, before, 'the other server received nothing');
      assert.equal(
        await get(`/api/v1/namespaces/${NS}/secrets/leak`),
        undefined,
        'no Secret synced through the refused store',
      );
    });
  },
);
