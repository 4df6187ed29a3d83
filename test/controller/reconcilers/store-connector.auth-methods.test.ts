// The userPass, ldap and cert logins of a store (ESO's auth methods), through the StoreConnector with a
// recording Vault client: the login request ESO's Vault client sends (path, body), the password read from
// the store's own namespace only, cert auth's certificate used as the connection's TLS client certificate.
// On real OpenBao: test/real/eso-kinds.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeKube } from './harness.ts';
import { SECRETS } from '../../../kube/resources.ts';
import { TokenCache } from '../../../vault/token-cache.ts';
import type { VaultClient, VaultRequest } from '../../../vault/types.ts';
import type { VaultClientOptions } from '../../../vault/client.ts';
import { StoreConnector, type StoreObject } from '../../../controller/reconcilers/store-connector.ts';
import { SafeError } from '../../../controller/reconcilers/common.ts';

function rig(): { kube: FakeKube; connector: StoreConnector; requests: VaultRequest[]; clients: VaultClientOptions[] } {
  const kube = new FakeKube();
  const requests: VaultRequest[] = [];
  const clients: VaultClientOptions[] = [];
  const makeClient = (o: VaultClientOptions): VaultClient => {
    clients.push(o);
    return {
      address: o.address,
      namespace: undefined,
      close: () => undefined,
      request: <T>(req: VaultRequest): Promise<T> => {
        requests.push(req);
        return Promise.resolve(
          (req.path.startsWith('auth/')
            ? { auth: { client_token: 's.fake', lease_duration: 600, renewable: false, policies: [] } }
            : { data: { data: { k: 'v' } } }) as T,
        );
      },
    };
  };
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  kube.put(SECRETS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'creds', namespace: 'team-a' },
    data: {
      password: b64('pa55-W0RD'),
      'tls.crt': b64('-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----\n'),
      'tls.key': b64('-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n'),
    },
  });
  kube.put(SECRETS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'creds', namespace: 'team-b' },
    data: { password: b64('team-b-pw') },
  });
  return {
    kube,
    connector: new StoreConnector({ client: kube, tokens: new TokenCache({ revokeOnEvict: false }), makeClient }),
    requests,
    clients,
  };
}

const store = (
  auth: Record<string, unknown>,
  kind: 'SecretStore' | 'ClusterSecretStore' = 'SecretStore',
): StoreObject => ({
  apiVersion: 'external-secrets.io/v1',
  kind,
  metadata: { name: 'vault', ...(kind === 'SecretStore' ? { namespace: 'team-a' } : {}), uid: 'u', generation: 1 },
  spec: { provider: { vault: { server: 'https://vault.example:8200', path: 'secret', version: 'v2', auth } } },
});

async function firstRead(
  r: ReturnType<typeof rig>,
  s: StoreObject,
  kind: 'SecretStore' | 'ClusterSecretStore' = 'SecretStore',
  ns?: string,
): Promise<void> {
  const conn = await r.connector.connect(kind, s, ns);
  await conn.session.request({ operation: 'kv.read', method: 'GET', path: 'secret/data/team-a/x' });
}

void describe('store logins: userPass, ldap, cert', () => {
  for (const [method, path] of [
    ['userPass', 'userpass'],
    ['ldap', 'ldap'],
  ] as const) {
    void test(`${method}: POST auth/<path>/login/<username> with the password from the store's namespace (username trimmed, as ESO)`, async () => {
      const r = rig();
      await firstRead(
        r,
        store({ [method]: { path, username: ' alice ', secretRef: { name: 'creds', key: 'password' } } }),
      );
      const login = r.requests[0]!;
      assert.equal(login.path, `auth/${path}/login/alice`);
      assert.deepEqual(login.body, { password: 'pa55-W0RD' });
      assert.ok(login.sensitive?.includes('pa55-W0RD'), 'the password is scrubbed from any error');
      assert.equal(r.requests[1]?.token, 's.fake');
    });
  }

  void test("a ClusterSecretStore reads the password in the ExternalSecret's namespace (referent), a SecretStore never outside its own", async () => {
    const r = rig();
    await firstRead(
      r,
      store(
        { userPass: { path: 'userpass', username: 'alice', secretRef: { name: 'creds', key: 'password' } } },
        'ClusterSecretStore',
      ),
      'ClusterSecretStore',
      'team-b',
    );
    assert.deepEqual(r.requests[0]?.body, { password: 'team-b-pw' });
    const err = await firstRead(
      rig(),
      store({
        userPass: {
          path: 'userpass',
          username: 'alice',
          secretRef: { name: 'creds', key: 'password', namespace: 'team-b' },
        },
      }),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof SafeError && /rule eso\.store\.cross-namespace/.test(err.message), String(err));
  });

  void test("cert: the certificate and key become the connection's TLS client certificate; the login body names only the role", async () => {
    const r = rig();
    await firstRead(
      r,
      store({
        cert: {
          path: 'cert-prod',
          vaultRole: 'web',
          clientCert: { name: 'creds', key: 'tls.crt' },
          secretRef: { name: 'creds', key: 'tls.key' },
        },
      }),
    );
    assert.match(String(r.clients[0]?.tls?.cert), /BEGIN CERTIFICATE/);
    assert.match(String(r.clients[0]?.tls?.key), /BEGIN PRIVATE KEY/);
    assert.equal(r.requests[0]?.path, 'auth/cert-prod/login');
    assert.deepEqual(r.requests[0]?.body, { name: 'web' });
    const plain = rig();
    await firstRead(
      plain,
      store({ cert: { clientCert: { name: 'creds', key: 'tls.crt' }, secretRef: { name: 'creds', key: 'tls.key' } } }),
    );
    assert.equal(plain.requests[0]?.path, 'auth/cert/login', "ESO v0.16.2's fixed path when none is given");
    assert.deepEqual(plain.requests[0]?.body, {});
  });

  void test('a missing password Secret says which field and Secret, never a value', async () => {
    const err = await firstRead(
      rig(),
      store({ ldap: { path: 'ldap', username: 'alice', secretRef: { name: 'nope', key: 'password' } } }),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof SafeError, String(err));
    assert.match(err.message, /spec\.provider\.vault\.auth\.ldap\.secretRef: Secret team-a\/nope not found/);
  });
});
