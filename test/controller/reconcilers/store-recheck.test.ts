// Issue #21.5 and #21.6 in the controller: with the ESO webhook bypassed (failurePolicy Ignore) a store
// admission refuses reaches the StoreConnector directly, through an ExternalSecret or PushSecret that is
// reconciled whatever the store's Ready condition says. The connector runs the store's admission rules
// before it reads a Secret, mints a token or sends a request: a long-lived token Secret
// (auth.kubernetes.secretRef), custom headers, and a server that is more than scheme://host[:port] (a
// path, query, fragment, user info or backslash would put every request where the tenant chose).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StoreConnector, type StoreObject } from '../../../controller/reconcilers/store-connector.ts';
import { admissionDenials, SafeError } from '../../../controller/reconcilers/common.ts';
import { SECRETS } from '../../../kube/resources.ts';
import { TokenCache } from '../../../vault/token-cache.ts';
import type { VaultClient, VaultRequest } from '../../../vault/types.ts';
import { defaultContext } from '../../../webhook/admission/context.ts';
import { FakeKube } from './harness.ts';

const ALLOWED = 'http://allowed:8200';

function rig(): { kube: FakeKube; connector: StoreConnector; sent: string[]; secretReads: () => number } {
  const kube = new FakeKube();
  kube.tokenFor = () => 'e30.e30.sig';
  kube.put(SECRETS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'sa-token', namespace: 'team-a' },
    data: { token: Buffer.from('long-lived-sa-token').toString('base64') },
  });
  let reads = 0;
  const get = kube.get.bind(kube);
  kube.get = (...args: Parameters<typeof kube.get>) => {
    if (args[0] === SECRETS) reads++;
    return get(...args);
  };
  const sent: string[] = [];
  const makeClient = (o: { address: string; headers?: Record<string, string> }): VaultClient => ({
    address: o.address,
    namespace: undefined,
    close: () => undefined,
    request: <T>(req: VaultRequest): Promise<T> => {
      sent.push(`${o.address} ${req.path}${o.headers ? ` headers=${Object.keys(o.headers).join(',')}` : ''}`);
      return Promise.resolve({
        auth: { client_token: 's.fake', lease_duration: 600, renewable: false, policies: [] },
      } as T);
    },
  });
  const connector = new StoreConnector({
    client: kube,
    tokens: new TokenCache({ revokeOnEvict: false }),
    makeClient,
    apiServerAudiences: { get: () => Promise.resolve(['https://kubernetes.default.svc']) } as never,
    admission: () => defaultContext({ vaultServers: [ALLOWED], namespaceLabels: () => ({}) }),
  });
  return { kube, connector, sent, secretReads: () => reads };
}

function store(vault: Record<string, unknown>): StoreObject {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: { name: 'vault', namespace: 'team-a', uid: 'u1', generation: 1 },
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

async function refused(s: StoreObject, rule: string): Promise<string> {
  const r = rig();
  const err = await r.connector.connect('SecretStore', s).then(
    async (c) => {
      await c.session.token();
      return undefined;
    },
    (e: unknown) => e,
  );
  assert.ok(err instanceof SafeError, `refused, got ${String(err)}; sent ${JSON.stringify(r.sent)}`);
  assert.equal(err.reason, 'InvalidProviderConfig');
  assert.match(err.message, new RegExp(`\\(rule ${rule.replace(/\./g, '\\.')}\\)`));
  assert.deepEqual(r.sent, [], 'no Vault request');
  assert.equal(r.secretReads(), 0, 'no Secret read');
  assert.deepEqual(r.kube.tokenRequests, [], 'no TokenRequest');
  return err.message;
}

test('a store admission refuses for auth.kubernetes.secretRef is refused by the connector too (no long-lived token is read or sent)', async () => {
  const msg = await refused(
    store({ auth: { kubernetes: { role: 'reader', secretRef: { name: 'sa-token', key: 'token' } } } }),
    'eso.store.auth-unsupported',
  );
  assert.match(msg, /^spec\.provider\.vault\.auth\.kubernetes\.secretRef: /);
});

test('a store admission refuses for custom headers is refused by the connector too', async () => {
  await refused(store({ headers: { 'X-Vault-Request': 'true' } }), 'eso.store.unsupported-field');
});

test('a store whose mount path climbs out is refused by the connector too', async () => {
  await refused(store({ path: 'secret/../sys' }), 'eso.store.vault-path');
});

const BAD_SERVERS = [
  'http://allowed:8200/v1/secret/data/team-b/db?x=',
  'http://allowed:8200/v1/secret/data/team-b/db',
  'http://allowed:8200?x=',
  'http://allowed:8200#x',
  'http://user:hunter2@allowed:8200',
  'http://allowed:8200\\v1\\secret',
  'http://allowed:8200/..',
  'ftp://allowed:8200',
];

test('server must be scheme://host[:port]: a path, query, fragment, user info or backslash is refused at admission and in the connector, without quoting it', async () => {
  for (const server of BAD_SERVERS) {
    const s = store({ server });
    const denied = admissionDenials(s, defaultContext({ vaultServers: [ALLOWED] }));
    assert.deepEqual(
      denied.map((f) => [f.field, f.rule]),
      [['spec.provider.vault.server', 'eso.store.vault-server-syntax']],
      server,
    );
    assert.match(denied[0]!.message, /spec\.provider\.vault\.server must be scheme:\/\/host\[:port\]/);
    assert.doesNotMatch(denied[0]!.message, /hunter2|team-b/);
    const msg = await refused(s, 'eso.store.vault-server-syntax');
    assert.doesNotMatch(msg, /hunter2|team-b/);
  }
});

test('plain origins pass, the allow-list compares normalised origins', async () => {
  for (const server of ['http://allowed:8200', 'http://allowed:8200/', 'HTTP://Allowed:8200', 'http://allowed:08200']) {
    assert.deepEqual(
      admissionDenials(store({ server }), defaultContext({ vaultServers: [ALLOWED] })).map((f) => f.rule),
      [],
      server,
    );
  }
  for (const server of ['https://vault.example', 'https://10.0.0.1:8200', 'https://[::1]:8200/']) {
    assert.deepEqual(
      admissionDenials(store({ server }), defaultContext()).map((f) => f.rule),
      [],
      server,
    );
  }
  const r = rig();
  await (await r.connector.connect('SecretStore', store({ server: 'HTTP://Allowed:8200/' }))).session.token();
  assert.equal(r.sent.length, 1);
});
