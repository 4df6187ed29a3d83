// auth.cert (issue #13) against a real OpenBao 2.7.2 listening with TLS (dev mode, -dev-tls): a store's
// client certificate and key, read from Secrets of its own namespace, become the TLS client certificate
// of vaultgate's connection, and the login at auth/<path>/login (with vaultRole) gives the token the
// reads use. The StoreConnector and KV reader are vaultgate's own; Kubernetes is the in-memory one (the
// real apiserver adds nothing to a TLS login). A certificate the role does not trust gets nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';
import { createCA, type CertAndKey } from '../harness/pki.ts';
import { ProcessGroup } from '../harness/processes.ts';
import { freePort } from '../harness/ports.ts';
import { waitFor } from '../harness/wait.ts';
import { binaryPath } from '../upstream/paths.ts';
import { FakeKube } from '../controller/reconcilers/harness.ts';
import { SECRETS } from '../../kube/resources.ts';
import { TokenCache } from '../../vault/token-cache.ts';
import { createVaultClient } from '../../vault/client.ts';
import { StoreConnector, type StoreObject } from '../../controller/reconcilers/store-connector.ts';
import { CoalescingKvReader } from '../../controller/reconcilers/kv-reader.ts';

const tier = await realTier();

void describe('#13 auth.cert on a real OpenBao 2.7.2 with TLS', { skip: tier.skip || baoSkipReason() }, () => {
  let group: ProcessGroup;
  let addr: string;
  let caPem: string;
  let client: CertAndKey;
  let stranger: CertAndKey;
  const root = (method: string, path: string, body?: Record<string, unknown>) => {
    const c = createVaultClient({ address: addr, timeoutMs: 10_000, tls: { ca: caPem } });
    return c
      .request({ operation: 'test', method: method as 'GET', path, ...(body ? { body } : {}), token: 'root' })
      .finally(() => c.close());
  };

  before(async () => {
    group = new ProcessGroup(mkdtempSync(join(tmpdir(), 'vaultgate-cert-')));
    const port = await freePort();
    const certDir = join(group.dir, 'tls');
    mkdirSync(certDir); // -dev-tls writes its CA, certificate and key there, but does not create it
    group.spawn(
      'bao',
      binaryPath('bao'),
      [
        'server',
        '-dev',
        '-dev-tls',
        `-dev-tls-cert-dir=${certDir}`,
        `-dev-listen-address=127.0.0.1:${port}`,
        '-dev-root-token-id=root',
      ],
      { ...process.env, HOME: group.dir },
    );
    addr = `https://127.0.0.1:${port}`;
    await waitFor(
      () => {
        try {
          return Promise.resolve(
            readFileSync(join(certDir, 'vault-ca.pem'), 'utf8').includes('BEGIN CERTIFICATE') ? true : undefined,
          );
        } catch {
          return Promise.resolve(undefined);
        }
      },
      { what: 'OpenBao dev TLS CA', timeoutMs: 60_000, intervalMs: 200 },
    );
    caPem = readFileSync(join(certDir, 'vault-ca.pem'), 'utf8');
    await waitFor(
      async () =>
        await root('GET', 'sys/health').then(
          () => true,
          () => undefined,
        ),
      { what: 'OpenBao TLS listener', timeoutMs: 60_000, intervalMs: 300 },
    );
    const ca = await createCA('tenant-clients');
    client = await ca.issue({ commonName: 'team-a-app', usage: 'client' });
    stranger = await (await createCA('someone-else')).issue({ commonName: 'intruder', usage: 'client' });
    await root('POST', 'sys/auth/cert-tenants', { type: 'cert' });
    await root('PUT', 'sys/policies/acl/cert-read', {
      policy: 'path "secret/data/team-a/*" { capabilities = ["read"] }\n',
    });
    await root('POST', 'auth/cert-tenants/certs/team-a', {
      certificate: ca.certPem,
      token_policies: 'cert-read',
      allowed_common_names: 'team-a-app',
    });
    await root('POST', 'secret/data/team-a/db', { data: { password: 'cert-pw-42' } });
  });
  after(async () => {
    await group?.stopAll();
    if (group) rmSync(group.dir, { recursive: true, force: true });
  });

  function certStore(secret: CertAndKey): { connector: StoreConnector; store: StoreObject } {
    const kube = new FakeKube();
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    kube.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'vault-client', namespace: 'team-a' },
      data: { 'tls.crt': b64(secret.certPem), 'tls.key': b64(secret.keyPem) },
    });
    const store: StoreObject = {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: 'vault', namespace: 'team-a', uid: 'u', generation: 1 },
      spec: {
        provider: {
          vault: {
            server: addr,
            path: 'secret',
            version: 'v2',
            caBundle: Buffer.from(caPem).toString('base64'),
            auth: {
              cert: {
                path: 'cert-tenants',
                vaultRole: 'team-a',
                clientCert: { name: 'vault-client', key: 'tls.crt' },
                secretRef: { name: 'vault-client', key: 'tls.key' },
              },
            },
          },
        },
      },
    };
    return {
      connector: new StoreConnector({
        client: kube,
        tokens: new TokenCache({ revokeOnEvict: false }),
        timeoutMs: 10_000,
      }),
      store,
    };
  }

  void test("the certificate from the store's Secrets logs in (TLS client auth) and the token reads what the role allows", async () => {
    const { connector, store } = certStore(client);
    try {
      const conn = await connector.connect('SecretStore', store);
      const data = await new CoalescingKvReader().source(conn, 0).read('team-a/db');
      assert.deepEqual(data, { password: 'cert-pw-42' });
    } finally {
      connector.close();
    }
  });

  void test('a certificate the role does not trust gets no token, and the error says so without a secret', async () => {
    const { connector, store } = certStore(stranger);
    try {
      const conn = await connector.connect('SecretStore', store);
      const err = await new CoalescingKvReader()
        .source(conn, 0)
        .read('team-a/db')
        .then(
          () => undefined,
          (e: unknown) => e as Error,
        );
      assert.ok(err, 'refused');
      assert.match(String(err.message), /invalid certificate|permission denied|no chain|unauthorized|400|403/i);
      assert.doesNotMatch(String(err.message), /BEGIN|cert-pw-42/);
    } finally {
      connector.close();
    }
  });
});
