// owner: A
// Proves the real-cluster substrate itself: a real etcd + kube-apiserver + kube-controller-manager (and
// OpenBao dev when a `bao` binary exists) start on loopback, do what vaultgate's tests rely on, and
// leave nothing behind. One control plane for the whole file.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.ts';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';
import { vaultRequest } from '../harness/vault.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const baoSkip = tier.skip ? tier.skip : baoSkipReason();

const NS = 'harness-e2e';

function jwtPayload(jwt: string): Record<string, unknown> {
  const parts = jwt.split('.');
  assert.equal(parts.length, 3, 'a JWT has three dot-separated parts');
  return JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Processes whose command line mentions dir (servers take their data/cert dirs as flags). */
function processesMentioning(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) pids.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

void describe(
  'real control plane (etcd + kube-apiserver + kube-controller-manager [+ bao])',
  { skip: tier.skip },
  () => {
    let cp: ControlPlane;

    before(async () => {
      cp = await startControlPlane({ controllerManager: true, vault: !baoSkip });
    });
    after(async () => {
      await cp?.stop();
    });

    void test('a namespace and a ServiceAccount can be created, and TokenRequest returns a JWT the apiserver accepts', async () => {
      await cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: NS } },
      ]);
      const jwt = await cp.serviceAccountToken(NS, 'app', ['vault']);
      const claims = jwtPayload(jwt);
      assert.equal(claims['sub'], `system:serviceaccount:${NS}:app`);
      assert.deepEqual(claims['aud'], ['vault']);
      assert.equal(claims['iss'], `${cp.server}/`);

      const review = await cp.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: jwt, audiences: ['vault'] },
      });
      const status = (review.body as { status?: { authenticated?: boolean; user?: { username?: string } } }).status;
      assert.equal(status?.authenticated, true);
      assert.equal(status?.user?.username, `system:serviceaccount:${NS}:app`);
    });

    void test(
      'bao kubernetes auth: a role bound to the ServiceAccount logs in with its JWT; another SA is refused',
      { skip: baoSkip },
      async () => {
        await cp.bao([
          'write',
          'auth/kubernetes/role/app',
          'bound_service_account_names=app',
          `bound_service_account_namespaces=${NS}`,
          'policies=default',
          'audience=vault',
          'ttl=10m',
        ]);
        const vault = { addr: cp.vaultAddr ?? '', token: '' }; // login needs no token
        const jwt = await cp.serviceAccountToken(NS, 'app', ['vault']);
        const login = await vaultRequest(vault, 'POST', 'auth/kubernetes/login', { role: 'app', jwt });
        assert.equal(login.status, 200, JSON.stringify(login.body).replace(jwt, '[jwt]'));
        const auth = (
          login.body as { auth?: { client_token?: string; metadata?: Record<string, string>; policies?: string[] } }
        ).auth;
        assert.ok(auth?.client_token, 'login returns a client token');
        assert.equal(auth.metadata?.['service_account_name'], 'app');
        assert.equal(auth.metadata?.['service_account_namespace'], NS);
        assert.ok(auth.policies?.includes('default'));

        await cp.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'intruder', namespace: NS } });
        const other = await cp.serviceAccountToken(NS, 'intruder', ['vault']);
        const refused = await vaultRequest(vault, 'POST', 'auth/kubernetes/login', { role: 'app', jwt: other });
        assert.equal(refused.status, 403);
        assert.ok(!JSON.stringify(refused.body).includes(other), 'the error does not echo the JWT');
      },
    );

    void test('ownerReference garbage collection deletes a dependent ConfigMap (kube-controller-manager)', async () => {
      const owner = await cp.request('POST', `/api/v1/namespaces/${NS}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'owner' },
      });
      assert.equal(owner.status, 201);
      const uid = (owner.body as { metadata: { uid: string } }).metadata.uid;
      const dep = await cp.request('POST', `/api/v1/namespaces/${NS}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid }] },
      });
      assert.equal(dep.status, 201);
      const del = await cp.request('DELETE', `/api/v1/namespaces/${NS}/configmaps/owner`, {
        propagationPolicy: 'Background',
      });
      assert.equal(del.status, 200);
      await waitFor(
        async () =>
          (await cp.request('GET', `/api/v1/namespaces/${NS}/configmaps/dependent`)).status === 404 ? true : undefined,
        {
          what: 'the garbage collector to delete the dependent ConfigMap',
          timeoutMs: 60_000,
          intervalMs: 200,
        },
      );
    });

    void test('a deleted namespace goes away with its contents (namespace controller), instead of staying Terminating', async () => {
      await cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'content', namespace: 'doomed' } },
      ]);
      assert.equal((await cp.request('DELETE', '/api/v1/namespaces/doomed')).status, 200);
      await waitFor(
        async () => ((await cp.request('GET', '/api/v1/namespaces/doomed')).status === 404 ? true : undefined),
        {
          what: 'namespace doomed to be finalized and deleted',
          timeoutMs: 60_000,
          intervalMs: 200,
        },
      );
    });

    void test('installCRDs waits for Established, and a registered webhook over https://127.0.0.1 decides admission', async () => {
      const crdDir = mkdtempSync(join(tmpdir(), 'vaultgate-crds-'));
      let server: Server | undefined;
      try {
        writeFileSync(
          join(crdDir, 'widgets.yaml'),
          [
            'apiVersion: apiextensions.k8s.io/v1',
            'kind: CustomResourceDefinition',
            'metadata: {name: vaultpolicies.vaultgate.io}',
            'spec:',
            '  group: vaultgate.io',
            '  scope: Namespaced',
            '  names: {kind: VaultPolicy, plural: vaultpolicies, singular: vaultpolicy, listKind: VaultPolicyList}',
            '  versions:',
            '  - name: v1alpha1',
            '    served: true',
            '    storage: true',
            '    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}',
            '',
          ].join('\n'),
        );
        assert.deepEqual(await cp.installCRDs(crdDir), ['vaultpolicies.vaultgate.io']);

        const cert = await cp.issueServingCert();
        const seen: string[] = [];
        server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              request: { uid: string; name?: string; kind: { kind: string } };
            };
            seen.push(`${req.url?.split('?')[0]} ${review.request.kind.kind}/${review.request.name ?? ''}`);
            const deny = req.url?.startsWith('/validate') && review.request.name === 'deny-me';
            res.setHeader('content-type', 'application/json');
            res.end(
              JSON.stringify({
                apiVersion: 'admission.k8s.io/v1',
                kind: 'AdmissionReview',
                response: {
                  uid: review.request.uid,
                  allowed: !deny,
                  ...(deny ? { status: { code: 403, message: 'denied by the harness test webhook' } } : {}),
                },
              }),
            );
          });
        });
        await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
        const port = (server.address() as { port: number }).port;
        await cp.registerWebhooks({ url: `https://127.0.0.1:${port}`, caBundlePem: cert.caPem });

        const policy = (name: string): object => ({
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultPolicy',
          metadata: { name, namespace: NS },
          spec: { rules: [] },
        });
        await cp.apply(policy('allow-me'));
        await assert.rejects(cp.apply(policy('deny-me')), /denied by the harness test webhook/);
        assert.ok(seen.includes('/mutate VaultPolicy/allow-me'), `mutating webhook called: ${seen.join(', ')}`);
        assert.ok(seen.includes('/validate VaultPolicy/deny-me'), `validating webhook called: ${seen.join(', ')}`);
      } finally {
        server?.closeAllConnections();
        server?.close();
        rmSync(crdDir, { recursive: true, force: true });
      }
    });

    void test('kubectl and helm run against it, and the apiserver reports the built version', async () => {
      const kubectl = JSON.parse(await cp.kubectl(['version', '-o', 'json'])) as {
        clientVersion: { gitVersion: string };
        serverVersion: { gitVersion: string };
      };
      assert.equal(kubectl.clientVersion.gitVersion, 'v1.34.4');
      assert.equal(kubectl.serverVersion.gitVersion, 'v1.34.4');
      assert.match(await cp.kubectl(['version', '--client']), /Client Version: v1\.34\.4/);
      assert.match(await cp.helm(['version', '--short']), /^v3\.19\.5/);
      assert.match(await cp.helm(['list', '--all-namespaces']), /NAME/); // reaches the apiserver via the kubeconfig
    });

    void test('state survives an apiserver restart', async () => {
      await cp.restartApiserver();
      const ns = await cp.request('GET', `/api/v1/namespaces/${NS}`);
      assert.equal(ns.status, 200);
    });

    void test('stop() kills every server process and removes the temp dir', async () => {
      const dir = cp.dir;
      assert.ok(
        processesMentioning(dir).length >= 3,
        'etcd, kube-apiserver and kube-controller-manager run from the dir',
      );
      await cp.stop();
      assert.equal(existsSync(dir), false);
      // The clean-up watcher (processes.ts) notices the removed dir within a second and exits too.
      await waitFor(() => Promise.resolve(processesMentioning(dir).length === 0 ? true : undefined), {
        what: `no process left mentioning ${dir}`,
        timeoutMs: 10_000,
      });
    });
  },
);
