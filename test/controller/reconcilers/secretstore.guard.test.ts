// #14 item 2 in the controller: whatever admission let through (webhook down, bypassed, a guardrail
// changed since), the StoreConnector refuses a store naming a Vault server the cluster admin did not allow
// before any Secret is read, token minted or request sent, and never mints a token with the apiserver's
// own audience for a store unless an enforce guardrail allows it. A store naming no audience gets "vault".
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StoreConnector, type StoreObject } from '../../../controller/reconcilers/store-connector.ts';
import { SafeError } from '../../../controller/reconcilers/common.ts';
import { createSecretStoreReconciler } from '../../../controller/reconcilers/secretstore.ts';
import { SECRETS } from '../../../kube/resources.ts';
import { SECRET_STORES } from '../../../schemas/resources.ts';
import { TokenCache } from '../../../vault/token-cache.ts';
import type { VaultClient, VaultRequest } from '../../../vault/types.ts';
import { defaultContext, type AdmissionContext } from '../../../webhook/admission/context.ts';
import { audiencesOf } from '../../../kube/api-audiences.ts';
import { FakeKube, readyOf } from './harness.ts';

const ALLOWED = 'https://vault.vault.svc:8200';
const API_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

/** A TokenRequest token as the apiserver issues it: `aud` is what was asked, or the apiserver's own. */
function fakeJwt(ns: string, sa: string, audiences: string[] | undefined): string {
  const claims = { sub: `system:serviceaccount:${ns}:${sa}`, aud: audiences?.length ? audiences : [API_AUDIENCE] };
  return `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
}

interface Rig {
  kube: FakeKube;
  connector: StoreConnector;
  /** Every Vault client built (one per server) and every request sent through them. */
  clients: string[];
  requests: Array<{ address: string; path: string; jwtAudiences?: string[] }>;
}

function rig(ctx: Partial<AdmissionContext> = {}): Rig {
  const kube = new FakeKube();
  kube.tokenFor = (ns, sa, opts) => fakeJwt(ns, sa, opts?.audiences);
  const clients: string[] = [];
  const requests: Rig['requests'] = [];
  const makeClient = (o: { address: string }): VaultClient => {
    clients.push(o.address);
    return {
      address: o.address,
      namespace: undefined,
      close: () => undefined,
      request: <T>(req: VaultRequest): Promise<T> => {
        const jwt = typeof req.body?.jwt === 'string' ? req.body.jwt : undefined;
        requests.push({ address: o.address, path: req.path, ...(jwt ? { jwtAudiences: audiencesOf(jwt) } : {}) });
        return Promise.resolve({
          auth: { client_token: 's.fake', lease_duration: 600, renewable: false, policies: [] },
        } as T);
      },
    };
  };
  const connector = new StoreConnector({
    client: kube,
    tokens: new TokenCache({ revokeOnEvict: false }),
    makeClient,
    admission: () => defaultContext({ vaultServers: [ALLOWED], namespaceLabels: () => ({}), ...ctx }),
  });
  return { kube, connector, clients, requests };
}

function store(ns: string, vault: Record<string, unknown>): StoreObject {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: { name: 'vault', namespace: ns, uid: `uid-${ns}`, generation: 1 },
    spec: {
      provider: {
        vault: {
          server: ALLOWED,
          path: 'secret',
          version: 'v2',
          auth: { kubernetes: { role: 'reader', serviceAccountRef: { name: 'app' } } },
          ...vault,
        },
      },
    },
  };
}

async function refusal(r: Rig, s: StoreObject): Promise<SafeError> {
  const err = await r.connector.connect('SecretStore', s).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof SafeError, `refused with a SafeError, got ${String(err)}`);
  return err;
}

void describe('StoreConnector: the server a store names', () => {
  void test('a server the admin did not allow: refused before any Secret read, token or request; the message names field and rule', async () => {
    const r = rig();
    const s = store('team-a', {
      server: 'https://attacker.example',
      caProvider: { type: 'Secret', name: 'ca', key: 'ca.crt' },
    });
    const err = await refusal(r, s);
    assert.equal(err.reason, 'InvalidProviderConfig');
    assert.match(
      err.message,
      /^spec\.provider\.vault\.server: Vault server "https:\/\/attacker\.example" is not one this cluster allows .*\(rule eso\.store\.vault-server\)$/,
    );
    assert.deepEqual(r.kube.tokenRequests, [], 'no TokenRequest');
    assert.deepEqual(r.clients, [], 'no Vault client for that server');
    assert.deepEqual(r.requests, [], 'no request');
  });

  void test('the SecretStore reconciler reports it in Ready and mints nothing', async () => {
    const r = rig();
    r.kube.put(SECRET_STORES, store('team-a', { server: 'http://169.254.169.254' }));
    const reconcile = createSecretStoreReconciler({
      kind: 'SecretStore',
      connector: r.connector,
      controllerClass: '',
      namePrefix: 'vaultgate',
    });
    await r.kube.reconcile(reconcile, 'team-a/vault').catch(() => undefined);
    const ready = readyOf(r.kube.getObj(SECRET_STORES, 'team-a/vault'));
    assert.equal(ready?.status, 'False');
    assert.match(ready?.message ?? '', /eso\.store\.vault-server/);
    assert.deepEqual(r.kube.tokenRequests, []);
    assert.deepEqual(r.requests, []);
  });

  void test('an enforce guardrail adds a server for the namespaces it selects only', async () => {
    const other = 'https://vault-b.example:8200';
    const guardrails = [
      {
        metadata: { name: 'b' },
        spec: {
          mode: 'enforce',
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-b' } },
          allowedVaultServers: [other],
        },
      },
    ];
    const r = rig({ guardrails });
    const conn = await r.connector.connect('SecretStore', store('team-b', { server: other }));
    await conn.session.token();
    assert.deepEqual(r.clients, [other]);
    await refusal(r, store('team-a', { server: other }));
  });
});

void describe('StoreConnector: the audience of the token a store gets', () => {
  void test('no audience named: the token carries "vault", not the apiserver\'s audience (which ESO would use)', async () => {
    const r = rig();
    const conn = await r.connector.connect('SecretStore', store('team-a', {}));
    await conn.session.token();
    const login = r.requests.find((q) => q.path === 'auth/kubernetes/login');
    assert.deepEqual(login?.jwtAudiences, ['vault']);
    assert.deepEqual(r.kube.tokenAudiences.at(-1), ['vault']);
  });

  void test("the apiserver's own audience: refused before a token with it is minted or sent, naming field and rule", async () => {
    const r = rig();
    const err = await refusal(
      r,
      store('team-a', {
        auth: { kubernetes: { role: 'reader', serviceAccountRef: { name: 'app', audiences: [API_AUDIENCE] } } },
      }),
    );
    assert.equal(err.reason, 'InvalidProviderConfig');
    assert.match(
      err.message,
      /^spec\.provider\.vault\.auth\.kubernetes\.serviceAccountRef\.audiences: audience "https:\/\/kubernetes\.default\.svc\.cluster\.local" is the Kubernetes apiserver's own.*\(rule eso\.store\.token-audience\)$/,
    );
    // The only TokenRequest is the discovery one (no audience asked, token dropped); no login happened.
    assert.deepEqual(r.kube.tokenAudiences, [[]]);
    assert.deepEqual(r.requests, []);
  });

  void test('the same for jwt auth with kubernetesServiceAccountToken, and an empty serviceAccountRef.audiences does not reopen the default', async () => {
    const r = rig();
    const jwt = (t: Record<string, unknown>) =>
      store('team-a', {
        auth: {
          jwt: { path: 'jwt', role: 'r', kubernetesServiceAccountToken: { serviceAccountRef: { name: 'app' }, ...t } },
        },
      });
    await refusal(r, jwt({ audiences: [API_AUDIENCE] }));
    const conn = await r.connector.connect('SecretStore', jwt({ serviceAccountRef: { name: 'app', audiences: [] } }));
    await conn.session.token();
    assert.deepEqual(r.requests.find((q) => q.path === 'auth/jwt/login')?.jwtAudiences, ['vault']);
  });

  void test('an enforce guardrail with allowApiServerAudiences lets the namespace it selects use it', async () => {
    const guardrails = [
      {
        metadata: { name: 'legacy' },
        spec: {
          mode: 'enforce',
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'legacy' } },
          allowApiServerAudiences: true,
        },
      },
    ];
    const r = rig({ guardrails });
    const s = (ns: string) =>
      store(ns, {
        auth: { kubernetes: { role: 'reader', serviceAccountRef: { name: 'app', audiences: [API_AUDIENCE] } } },
      });
    const conn = await r.connector.connect('SecretStore', s('legacy'));
    await conn.session.token();
    assert.deepEqual(r.requests.at(-1)?.jwtAudiences, [API_AUDIENCE]);
    await refusal(r, s('team-a'));
  });

  void test("when the apiserver's audiences cannot be discovered, no token is minted for the store", async () => {
    const r = rig();
    r.kube.tokenFor = () => 'opaque-token-without-claims';
    const err = await refusal(r, store('team-a', {}));
    assert.equal(err.reason, 'ValidationFailed');
    assert.match(err.message, /cannot tell the apiserver's own audiences/);
    assert.deepEqual(r.requests, []);
    assert.doesNotMatch(err.message, /opaque-token/);
  });

  void test('discovery is one TokenRequest per process (cached), not one per connect', async () => {
    const r = rig();
    for (let i = 0; i < 3; i++) await (await r.connector.connect('SecretStore', store('team-a', {}))).session.token();
    assert.deepEqual(
      r.kube.tokenAudiences.filter((a) => a.length === 0),
      [[]],
    );
  });
});

void describe('StoreConnector: which auth method a store with several uses', () => {
  // ESO v0.16.2 pkg/provider/vault/auth.go setAuth tries tokenSecretRef, appRole, kubernetes, ldap,
  // userPass, jwt, cert and uses the first one set: the same manifest must log in the same way here.
  const pathOf = async (auth: Record<string, unknown>): Promise<string[]> => {
    const r = rig();
    r.kube.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: 'team-a' },
      data: {
        token: Buffer.from('s.tenant').toString('base64'),
        password: Buffer.from('pw').toString('base64'),
        id: Buffer.from('secret-id').toString('base64'),
      },
    });
    const conn = await r.connector.connect('SecretStore', store('team-a', { auth }));
    await conn.session.token().catch(() => undefined); // the fake Vault answers logins only: a token lookup fails, after it was sent
    return r.requests.map((q) => q.path);
  };
  const kubernetes = { role: 'reader', serviceAccountRef: { name: 'app' } };
  const appRole = { path: 'approle', roleId: 'role-1', secretRef: { name: 'creds', key: 'id' } };
  const userPass = { path: 'userpass', username: 'u', secretRef: { name: 'creds', key: 'password' } };
  const jwt = { path: 'jwt', role: 'r', kubernetesServiceAccountToken: { serviceAccountRef: { name: 'app' } } };

  void test('tokenSecretRef before kubernetes: no login, the given token is looked up', async () => {
    assert.deepEqual(await pathOf({ kubernetes, tokenSecretRef: { name: 'creds', key: 'token' } }), [
      'auth/token/lookup-self',
    ]);
  });
  void test('appRole before kubernetes', async () => {
    assert.deepEqual(await pathOf({ kubernetes, appRole }), ['auth/approle/login']);
  });
  void test('kubernetes before userPass and jwt; userPass before jwt', async () => {
    assert.deepEqual(await pathOf({ jwt, userPass, kubernetes }), ['auth/kubernetes/login']);
    assert.deepEqual(await pathOf({ jwt, userPass }), ['auth/userpass/login/u']);
  });
});
