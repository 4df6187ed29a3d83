// Issue #13 on real servers (real tier): the ExternalSecret fields vaultgate used to refuse, through
// `kubectl apply` (vaultgate's webhook), vaultgate's controller, a real kube-apiserver with the real
// kube-controller-manager (garbage collector) and a real OpenBao 2.7.2 read with the tenant's own
// kubernetes-auth identity. The fields ESO v0.16.2 also has (remoteRef.version, metadataPolicy Fetch,
// sourceRef.storeRef) are compared with the real ESO by the side-by-side corpus
// (test/eso/corpus/differential.yaml); the ones it lacks (ESO v2: CreateOrMerge, finalizers,
// syncWindows, nullBytePolicy, rewrite.merge) are checked here against ESO v2.9's documented behaviour.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { condition, type E2EStack, startE2E, waitForObject } from '../harness/e2e-stack.ts';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';
import { startPeerStack, type PeerStack } from '../harness/peer-stack.ts';
import { waitFor } from '../harness/wait.ts';
import { CommandError } from '../harness/tools.ts';
import { ANNOTATION_FORCE_SYNC } from '../../eso/target.ts';

const tier = await realTier();
const NS = 'team-a';
const STORE = { name: 'vault-backend', kind: 'SecretStore' };

type Meta = {
  uid: string;
  resourceVersion?: string;
  finalizers?: string[];
  deletionTimestamp?: string;
  ownerReferences?: Array<{ kind: string; name: string }>;
};
interface SecretObj extends Record<string, unknown> {
  metadata: Meta;
  data?: Record<string, string>;
}
interface EsObj extends Record<string, unknown> {
  metadata: Meta;
  status?: {
    refreshTime?: string;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

const decode = (s: SecretObj | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

const es = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): object => ({
  apiVersion: 'external-secrets.io/v1',
  kind: 'ExternalSecret',
  metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
  spec: { refreshInterval: '1h', secretStoreRef: STORE, ...spec },
});
const dbPassword = [{ secretKey: 'password', remoteRef: { key: 'team-a/app/db', property: 'password' } }];

/** Secrets the stack's real garbage collector may hold with a finalizer: release them so teardown is clean. */
async function releaseFinalizers(stack: E2EStack, names: string[]): Promise<void> {
  for (const name of names) {
    if ((await stack.getJson<SecretObj>('secret', name, NS))?.metadata.finalizers?.length) {
      await stack.cp.kubectl([
        'patch',
        '-n',
        NS,
        `secret/${name}`,
        '--type=merge',
        '-p',
        JSON.stringify({ metadata: { finalizers: null } }),
      ]);
    }
  }
}

void describe('#13 ExternalSecret fields on a real apiserver and OpenBao 2.7.2', { skip: tier.skip }, () => {
  let stack: E2EStack;
  const secretOf = (name: string): Promise<SecretObj | undefined> => stack.getJson<SecretObj>('secret', name, NS);

  before(async () => {
    stack = await startE2E({ controllerManager: true });
    await stack.cp.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app-reader', namespace: NS } },
    ]);
    await stack.vaultRoot('POST', 'secret/data/team-a/app/db', { data: { username: 'app', password: 'pw-first-7Q' } });
    await stack.vaultRoot('POST', 'secret/data/team-a/app/binary', {
      data: { blob: Buffer.from('ab\0cd-NULVALUE').toString('base64'), text: 'plain-text-value' },
    });
    await stack.vaultRoot('POST', 'secret/data/team-a/app/json', {
      data: { base: '{"host":"db.internal","port":5432}', override: '{"port":6432,"tls":true}' },
    });
    await stack.kubectlApply([
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'app-read', namespace: NS },
        spec: {
          rules: [
            { path: 'secret/data/{{namespace}}/app/*', capabilities: ['read'] },
            { path: 'secret/metadata/{{namespace}}/app/*', capabilities: ['read', 'list'] },
          ],
        },
      },
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultRoleBinding',
        metadata: { name: 'app-reader', namespace: NS },
        spec: { serviceAccounts: ['app-reader'], policies: ['app-read'], audience: 'vault' },
      },
    ]);
    await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', NS, 'vrb/app-reader']);
    await stack.kubectlApply({
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: STORE.name, namespace: NS },
      spec: {
        provider: {
          vault: {
            server: stack.vault.addr,
            path: 'secret',
            version: 'v2',
            auth: {
              kubernetes: {
                mountPath: 'kubernetes',
                role: 'vaultgate.team-a.app-reader',
                serviceAccountRef: { name: 'app-reader' },
              },
            },
          },
        },
      },
    });
    await waitForObject(
      stack,
      'secretstore',
      STORE.name,
      NS,
      (o) => condition(o)?.status === 'True',
      'SecretStore Ready',
    );
  });
  after(async () => {
    if (stack) await releaseFinalizers(stack, ['fin']).catch(() => undefined);
    await stack?.stop();
  });

  void test('creationPolicy CreateOrMerge: keys added to a Secret someone else made (theirs kept, no owner); a missing one created without owner', async () => {
    await stack.cp.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'legacy', namespace: NS },
      stringData: { existing: 'keep-me' },
    });
    await stack.kubectlApply([
      es('com-existing', { data: dbPassword, target: { name: 'legacy', creationPolicy: 'CreateOrMerge' } }),
      es('com-new', { data: dbPassword, target: { name: 'com-new', creationPolicy: 'CreateOrMerge' } }),
    ]);
    const legacy = await waitForObject<SecretObj>(
      stack,
      'secret',
      'legacy',
      NS,
      (s) => decode(s).password === 'pw-first-7Q',
      'legacy Secret with the key added',
    );
    assert.deepEqual(decode(legacy), { existing: 'keep-me', password: 'pw-first-7Q' });
    assert.deepEqual(legacy?.metadata.ownerReferences ?? [], []);
    const fresh = await waitForObject<SecretObj>(
      stack,
      'secret',
      'com-new',
      NS,
      (s) => decode(s).password === 'pw-first-7Q',
      'Secret com-new created',
    );
    assert.deepEqual(fresh?.metadata.ownerReferences ?? [], [], 'created without an owner, as Orphan');
    for (const name of ['com-existing', 'com-new'])
      assert.equal(condition(await stack.getJson<EsObj>('externalsecret', name, NS))?.reason, 'SecretSynced');
  });

  void test('template.metadata.finalizers: added to the Secret, kept when the template drops them (server-side apply does not take them away), holding the Secret when its ExternalSecret goes', async () => {
    const spec = (finalizers: string[]): Record<string, unknown> => ({
      data: dbPassword,
      target: { name: 'fin', template: { metadata: { finalizers, labels: { app: 'fin' } } } },
    });
    await stack.kubectlApply(es('fin', spec(['example.com/hold'])));
    await waitForObject<SecretObj>(
      stack,
      'secret',
      'fin',
      NS,
      (s) => (s?.metadata.finalizers ?? []).includes('example.com/hold'),
      'finalizer on Secret fin',
    );
    // A template change that drops the finalizer (and changes a label, so the Secret is re-applied).
    await stack.kubectlApply(
      es('fin', { data: dbPassword, target: { name: 'fin', template: { metadata: { labels: { app: 'fin-2' } } } } }),
    );
    const relabelled = await waitForObject<SecretObj>(
      stack,
      'secret',
      'fin',
      NS,
      (s) => (s?.metadata as { labels?: Record<string, string> } | undefined)?.labels?.app === 'fin-2',
      'Secret fin re-applied',
    );
    assert.deepEqual(
      relabelled?.metadata.finalizers,
      ['example.com/hold'],
      'still there: vaultgate, like ESO, never removes one',
    );
    // The ExternalSecret goes: the garbage collector deletes its Owner Secret, the finalizer holds it.
    await stack.cp.kubectl(['delete', '-n', NS, 'externalsecret/fin', '--wait=true', '--timeout=60s']);
    const held = await waitForObject<SecretObj>(
      stack,
      'secret',
      'fin',
      NS,
      (s) => s?.metadata.deletionTimestamp !== undefined,
      'Secret fin being deleted (held by its finalizer)',
      90_000,
    );
    assert.deepEqual(held?.metadata.finalizers, ['example.com/hold']);
    await releaseFinalizers(stack, ['fin']);
    await waitForObject(stack, 'secret', 'fin', NS, (s) => s === undefined, 'Secret fin gone once released');
  });

  void test('syncWindows deny: a due periodic refresh waits while the window is open (a peer without windows picks the change up), a force-sync does not', async () => {
    const d = new Date(Date.now() - 3_600_000);
    const openNow = { schedule: `${d.getUTCMinutes()} ${d.getUTCHours()} * * *`, duration: '3h' };
    await stack.vaultRoot('POST', 'secret/data/team-a/app/rotating', { data: { token: 'tok-v1' } });
    const spec = (syncWindows?: object): Record<string, unknown> => ({
      refreshInterval: '3s',
      data: [{ secretKey: 'token', remoteRef: { key: 'team-a/app/rotating', property: 'token' } }],
      ...(syncWindows ? { syncWindows } : {}),
    });
    await stack.kubectlApply([es('win-deny', spec({ kind: 'deny', windows: [openNow] })), es('win-none', spec())]);
    for (const name of ['win-deny', 'win-none'])
      await waitForObject<SecretObj>(
        stack,
        'secret',
        name,
        NS,
        (s) => decode(s).token === 'tok-v1',
        `${name}: first sync (a new spec is not gated)`,
      );
    const firstRefresh = (await stack.getJson<EsObj>('externalsecret', 'win-deny', NS))?.status?.refreshTime;

    await stack.vaultRoot('POST', 'secret/data/team-a/app/rotating', { data: { token: 'tok-v2' } });
    await waitForObject<SecretObj>(
      stack,
      'secret',
      'win-none',
      NS,
      (s) => decode(s).token === 'tok-v2',
      'the peer without windows refreshed',
      60_000,
    );
    // Give the windowed one several of its own intervals past the peer's refresh.
    const peerAt = Date.now();
    await waitForObject<EsObj>(
      stack,
      'externalsecret',
      'win-none',
      NS,
      (o) => Date.parse(o?.status?.refreshTime ?? '') > peerAt + 6_000,
      'the peer refreshed twice more',
      60_000,
    );
    assert.equal(decode(await secretOf('win-deny')).token, 'tok-v1', 'the deny window kept the old value');
    assert.equal(
      (await stack.getJson<EsObj>('externalsecret', 'win-deny', NS))?.status?.refreshTime,
      firstRefresh,
      'no refresh recorded',
    );

    await stack.cp.kubectl(['annotate', '-n', NS, 'externalsecret/win-deny', `${ANNOTATION_FORCE_SYNC}=${Date.now()}`]);
    await waitForObject<SecretObj>(
      stack,
      'secret',
      'win-deny',
      NS,
      (s) => decode(s).token === 'tok-v2',
      'a metadata change syncs at once, window or not',
    );
  });

  void test('syncWindows: a schedule the controller could not parse is refused at apply, naming the field and the rule', async () => {
    const err = await stack
      .kubectlApply(
        es('win-bad', {
          data: dbPassword,
          syncWindows: { kind: 'allow', windows: [{ schedule: '0 25 * * *', duration: '1h' }] },
        }),
      )
      .then(
        () => assert.fail('kubectl apply of a bad schedule succeeded'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof CommandError, String(err));
    assert.match(err.stderr, /admission webhook "validate\.vaultgate\.io" denied the request/);
    assert.match(
      err.stderr,
      /spec\.syncWindows\.windows\[0\]\.schedule: schedule is not a cron expression: end of range \(25\) above maximum \(23\): 25 \(rule eso\.es\.sync-window\)/,
    );
  });

  void test('nullBytePolicy Fail: a value with a NUL byte fails the sync naming the key, never the value; nothing is written', async () => {
    await stack.kubectlApply(
      es('nul', {
        data: [
          {
            secretKey: 'blob',
            remoteRef: {
              key: 'team-a/app/binary',
              property: 'blob',
              decodingStrategy: 'Base64',
              nullBytePolicy: 'Fail',
            },
          },
          { secretKey: 'text', remoteRef: { key: 'team-a/app/binary', property: 'text', nullBytePolicy: 'Fail' } },
        ],
      }),
    );
    const o = await waitForObject<EsObj>(
      stack,
      'externalsecret',
      'nul',
      NS,
      (x) => condition(x)?.status === 'False',
      'ExternalSecret nul refused',
    );
    assert.equal(condition(o)?.reason, 'SecretSyncedError');
    assert.match(condition(o)?.message ?? '', /fetched secret value for key "blob" contains null bytes/);
    assert.equal(await secretOf('nul'), undefined);
    assert.doesNotMatch(JSON.stringify(o), /NULVALUE|plain-text-value/);
  });

  void test('rewrite.merge: JSON values merged into keys (Extract) or into one key (JSON), priority last, as ESO v2', async () => {
    await stack.kubectlApply([
      es('merge-extract', {
        dataFrom: [
          {
            extract: { key: 'team-a/app/json' },
            rewrite: [{ merge: { priority: ['override'], conflictPolicy: 'Ignore' } }],
          },
        ],
      }),
      es('merge-json', {
        dataFrom: [
          {
            extract: { key: 'team-a/app/json' },
            rewrite: [
              { merge: { strategy: 'JSON', into: 'config', priority: ['override'], conflictPolicy: 'Ignore' } },
            ],
          },
        ],
      }),
      es('merge-conflict', { dataFrom: [{ extract: { key: 'team-a/app/json' }, rewrite: [{ merge: {} }] }] }),
    ]);
    const extract = await waitForObject<SecretObj>(
      stack,
      'secret',
      'merge-extract',
      NS,
      (s) => s !== undefined,
      'Secret merge-extract',
    );
    assert.deepEqual(decode(extract), { host: 'db.internal', port: '6432', tls: 'true' });
    const json = await waitForObject<SecretObj>(
      stack,
      'secret',
      'merge-json',
      NS,
      (s) => s !== undefined,
      'Secret merge-json',
    );
    assert.deepEqual(decode(json), {
      base: '{"host":"db.internal","port":5432}',
      override: '{"port":6432,"tls":true}',
      config: '{"host":"db.internal","port":6432,"tls":true}',
    });
    const conflict = await waitForObject<EsObj>(
      stack,
      'externalsecret',
      'merge-conflict',
      NS,
      (x) => condition(x)?.status === 'False',
      'merge-conflict refused at sync',
    );
    assert.match(condition(conflict)?.message ?? '', /merge failed with conflicts: port/);
  });

  void test("ClusterExternalSecret through kubectl: each ExternalSecret it creates reads with its own namespace's identity, limited by that namespace's guardrails", async () => {
    await stack.cp.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b', labels: { ces: 'selected' } } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app-reader', namespace: 'team-b' } },
    ]);
    await stack.cp.kubectl(['label', 'namespace', NS, 'ces=selected', '--overwrite']);
    // team-b cannot even be granted team-a's path: the built-in floor keeps each namespace in its subtree.
    const refused = await stack
      .kubectlApply({
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'steal', namespace: 'team-b' },
        spec: { rules: [{ path: 'secret/data/team-a/app/*', capabilities: ['read'] }] },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(refused instanceof CommandError && /guardrail\.allowed-path/.test(refused.stderr), String(refused));
    await stack.kubectlApply([
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'app-read', namespace: 'team-b' },
        spec: { rules: [{ path: 'secret/data/{{namespace}}/app/*', capabilities: ['read'] }] },
      },
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultRoleBinding',
        metadata: { name: 'app-reader', namespace: 'team-b' },
        spec: { serviceAccounts: ['app-reader'], policies: ['app-read'], audience: 'vault' },
      },
    ]);
    await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', 'team-b', 'vrb/app-reader']);
    await stack.kubectlApply({
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: STORE.name, namespace: 'team-b' },
      spec: {
        provider: {
          vault: {
            server: stack.vault.addr,
            path: 'secret',
            version: 'v2',
            auth: {
              kubernetes: {
                mountPath: 'kubernetes',
                role: 'vaultgate.team-b.app-reader',
                serviceAccountRef: { name: 'app-reader' },
              },
            },
          },
        },
      },
    });
    await waitForObject(
      stack,
      'secretstore',
      STORE.name,
      'team-b',
      (o) => condition(o)?.status === 'True',
      'team-b SecretStore Ready',
    );
    await stack.kubectlApply({
      apiVersion: 'external-secrets.io/v1',
      kind: 'ClusterExternalSecret',
      metadata: { name: 'shared-db' },
      spec: {
        externalSecretName: 'shared-db',
        namespaceSelectors: [{ matchLabels: { ces: 'selected' } }],
        refreshTime: '5s',
        externalSecretSpec: { refreshInterval: '1h', secretStoreRef: STORE, data: dbPassword },
      },
    });
    const a = await waitForObject<SecretObj>(
      stack,
      'secret',
      'shared-db',
      NS,
      (x) => decode(x).password === 'pw-first-7Q',
      "team-a: Secret shared-db synced with team-a's identity",
    );
    assert.ok(a);
    const b = await waitForObject<EsObj>(
      stack,
      'externalsecret',
      'shared-db',
      'team-b',
      (x) => condition(x)?.status === 'False',
      'team-b: ExternalSecret shared-db refused by Vault',
    );
    assert.match(condition(b)?.message ?? '', /permission denied|403/i);
    assert.equal(await stack.getJson('secret', 'shared-db', 'team-b'), undefined, 'nothing read into team-b');
    const ces = await stack.cp.request('GET', '/apis/external-secrets.io/v1/clusterexternalsecrets/shared-db');
    assert.deepEqual((ces.body as { status?: { provisionedNamespaces?: string[] } }).status?.provisionedNamespaces, [
      NS,
      'team-b',
    ]);
    assert.ok(
      stack.vault
        .logins()
        .some(
          (l) =>
            l.namespace === 'team-b' && l.serviceAccount === 'app-reader' && l.role === 'vaultgate.team-b.app-reader',
        ),
      'team-b read as team-b/app-reader',
    );
    await stack.cp.kubectl(['delete', 'clusterexternalsecret/shared-db', '--wait=true']);
  });

  void test("PushSecret on vaultgate's CRDs (ESO v0.18+ / v2 fields): dataTo per key and as a bundle, KV v2 check-and-set against a key that requires it", async () => {
    await stack.cp.apply([
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'pusher', namespace: NS } },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'jsons', namespace: NS },
        stringData: { a: '{"x":"1"}', b: '{"y":"2"}', skip: 'not-json', user: 'push-user' },
      },
    ]);
    await stack.kubectlApply([
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'app-push', namespace: NS },
        spec: {
          rules: [
            { path: 'secret/data/{{namespace}}/push/*', capabilities: ['create', 'read', 'update'] },
            { path: 'secret/metadata/{{namespace}}/push/*', capabilities: ['create', 'read', 'update'] },
          ],
        },
      },
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultRoleBinding',
        metadata: { name: 'pusher', namespace: NS },
        spec: { serviceAccounts: ['pusher'], policies: ['app-push'], audience: 'vault' },
      },
    ]);
    await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', NS, 'vrb/pusher']);
    const store = (name: string, extra: Record<string, unknown> = {}): object => ({
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name, namespace: NS },
      spec: {
        provider: {
          vault: {
            server: stack.vault.addr,
            path: 'secret',
            version: 'v2',
            ...extra,
            auth: {
              kubernetes: {
                mountPath: 'kubernetes',
                role: 'vaultgate.team-a.pusher',
                serviceAccountRef: { name: 'pusher' },
              },
            },
          },
        },
      },
    });
    await stack.kubectlApply([store('push'), store('push-cas', { checkAndSet: { required: true } })]);
    for (const name of ['push', 'push-cas'])
      await waitForObject(
        stack,
        'secretstore',
        name,
        NS,
        (o) => condition(o)?.status === 'True',
        `SecretStore ${name} Ready`,
      );
    await stack.vaultRoot('POST', 'secret/data/team-a/push/cas', { data: { k: 'v' } });
    await stack.vaultRoot('POST', 'secret/metadata/team-a/push/cas', {
      cas_required: true,
      custom_metadata: { 'managed-by': 'external-secrets' },
    });
    const ps = (name: string, spec: Record<string, unknown>): object => ({
      apiVersion: 'external-secrets.io/v1alpha1',
      kind: 'PushSecret',
      metadata: { name, namespace: NS },
      spec: { refreshInterval: '1h', selector: { secret: { name: 'jsons' } }, ...spec },
    });
    await stack.kubectlApply([
      ps('to', {
        secretStoreRefs: [{ name: 'push' }],
        dataTo: [
          {
            storeRef: { name: 'push' },
            match: { regexp: '^[ab]$' },
            rewrite: [{ regexp: { source: '^(.*)$', target: 'team-a/push/keys/$1' } }],
          },
          { storeRef: { name: 'push' }, remoteKey: 'team-a/push/bundle', match: { regexp: '^[ab]$' } },
        ],
      }),
      ps('cas', {
        secretStoreRefs: [{ name: 'push-cas' }],
        data: [{ match: { secretKey: 'user', remoteRef: { remoteKey: 'team-a/push/cas', property: 'user' } } }],
      }),
    ]);
    for (const name of ['to', 'cas']) {
      await waitFor(
        async () =>
          condition(
            (await stack.cp.request('GET', `/apis/external-secrets.io/v1alpha1/namespaces/${NS}/pushsecrets/${name}`))
              .body as Record<string, unknown>,
          )?.reason === 'Synced'
            ? true
            : undefined,
        { what: `PushSecret ${name} Synced`, timeoutMs: 60_000, intervalMs: 500 },
      );
    }
    const data = async (p: string): Promise<unknown> =>
      ((await stack.vaultRoot('GET', `secret/data/team-a/push/${p}`)).body as { data?: { data?: unknown } }).data?.data;
    assert.deepEqual(await data('keys/a'), { x: '1' });
    assert.deepEqual(await data('keys/b'), { y: '2' });
    assert.deepEqual(await data('bundle'), { a: '{"x":"1"}', b: '{"y":"2"}' });
    assert.deepEqual(await data('cas'), { k: 'v', user: 'push-user' });
    // The same through the webhook: a dataTo whose store is not among secretStoreRefs is refused at apply.
    const refused = await stack
      .kubectlApply(ps('bad', { secretStoreRefs: [{ name: 'push' }], dataTo: [{ storeRef: { name: 'elsewhere' } }] }))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(
      refused instanceof CommandError &&
        /spec\.dataTo\[0\]\.storeRef\.name: .*not found in secretStoreRefs \(rule eso\.ps\.datato-store\)/.test(
          refused.stderr,
        ),
      String(refused),
    );
  });

  void test('no secret value in any ExternalSecret status, Event or the controller log', async () => {
    const list = await stack.cp.request('GET', `/apis/external-secrets.io/v1/namespaces/${NS}/externalsecrets`);
    const events = await stack.cp.request('GET', `/api/v1/namespaces/${NS}/events`);
    for (const text of [list.text, events.text, stack.procs.log('controller')])
      assert.doesNotMatch(text, /pw-first-7Q|tok-v[12]|NULVALUE|plain-text-value|db\.internal/);
  });
});

// ------------------------------------------------------------------------------------------------------
// ClusterExternalSecret side by side with the real ESO v0.16.2. ESO's ClusterExternalSecret controller
// has no controller class (it acts on every ClusterExternalSecret), so the two run one after the other
// on the same control plane and OpenBao: ESO first on its own copy of the scenario, then vaultgate on
// its own, each in namespaces of its own; what each made is compared after the namespace prefix is
// normalised.

type System = 'eso' | 'vaultgate';
interface CesSnapshot {
  status: unknown;
  perNamespace: Record<string, unknown>;
}

const CES_NS = ['a', 'b', 'c', 'd'] as const;
const nsFor = (s: System, n: string): string => `ces-${s}-${n}`;

/** The scenario's objects for one system: namespaces, reader ServiceAccounts, SecretStores of its class, a foreign ExternalSecret in c. */
function cesWorld(s: System, vaultAddr: string): object[] {
  return CES_NS.flatMap((n): object[] => [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: nsFor(s, n), labels: n === 'b' || n === 'c' ? { 'ces-target': s } : {} },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'reader', namespace: nsFor(s, n) } },
    {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name: 'vault', namespace: nsFor(s, n) },
      spec: {
        controller: s,
        provider: {
          vault: {
            server: vaultAddr,
            path: 'secret',
            version: 'v2',
            auth: { kubernetes: { mountPath: 'kubernetes', role: 'ces', serviceAccountRef: { name: 'reader' } } },
          },
        },
      },
    },
  ]).concat([
    {
      // Someone else's ExternalSecret under the name the ClusterExternalSecret wants in c.
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      metadata: { name: 'db-creds', namespace: nsFor(s, 'c') },
      spec: {
        refreshInterval: '1h',
        secretStoreRef: { name: 'vault', kind: 'SecretStore' },
        target: { name: 'theirs' },
        data: [{ secretKey: 'user', remoteRef: { key: 'ces/db', property: 'username' } }],
      },
    },
  ]);
}

function cesObject(s: System, esName = 'db-creds'): object {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ClusterExternalSecret',
    metadata: { name: `ces-${s}` },
    spec: {
      externalSecretName: esName,
      namespaces: [nsFor(s, 'a')],
      namespaceSelectors: [{ matchLabels: { 'ces-target': s } }],
      refreshTime: '2s',
      externalSecretMetadata: { labels: { app: 'db' }, annotations: { 'example.com/owner': 'platform' } },
      externalSecretSpec: {
        refreshInterval: '1h',
        secretStoreRef: { name: 'vault', kind: 'SecretStore' },
        data: [{ secretKey: 'password', remoteRef: { key: 'ces/db', property: 'password' } }],
      },
    },
  };
}

void describe(
  '#13 ClusterExternalSecret: vaultgate and the real ESO v0.16.2 make the same ExternalSecrets and status',
  { skip: tier.skip || baoSkipReason() },
  () => {
    let stack: PeerStack;
    const snaps: Record<System, CesSnapshot[]> = { eso: [], vaultgate: [] };

    const normalise = (s: System, v: unknown): unknown =>
      JSON.parse(JSON.stringify(v ?? null).replaceAll(`ces-${s}`, 'ces-S')) as unknown;

    async function snapshot(s: System, esName: string): Promise<CesSnapshot> {
      const ces = await stack.cp.request('GET', `/apis/external-secrets.io/v1/clusterexternalsecrets/ces-${s}`);
      const perNamespace: Record<string, unknown> = {};
      for (const n of CES_NS) {
        const es = await stack.cp.request(
          'GET',
          `/apis/external-secrets.io/v1/namespaces/${nsFor(s, n)}/externalsecrets/${esName}`,
        );
        const secret = await stack.cp.request('GET', `/api/v1/namespaces/${nsFor(s, n)}/secrets/${esName}`);
        const e =
          es.status === 200
            ? (es.body as {
                metadata: {
                  labels?: Record<string, string>;
                  annotations?: Record<string, string>;
                  ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }>;
                };
                spec: unknown;
              })
            : undefined;
        perNamespace[n] = e
          ? {
              labels: e.metadata.labels ?? {},
              annotations: Object.fromEntries(
                Object.entries(e.metadata.annotations ?? {}).filter(([k]) => !k.startsWith('kubectl.kubernetes.io/')),
              ),
              owners: (e.metadata.ownerReferences ?? []).map(
                (r) => `${r.kind}/${r.name}${r.controller ? ' (controller)' : ''}`,
              ),
              spec: e.spec,
              secret: secret.status === 200 ? decode(secret.body as SecretObj) : null,
            }
          : null;
      }
      return normalise(s, { status: (ces.body as { status?: unknown }).status ?? null, perNamespace }) as CesSnapshot;
    }

    /** Polls until the snapshot meets `done` and stays the same twice in a row. */
    async function settle(s: System, esName: string, done: (snap: CesSnapshot) => boolean): Promise<CesSnapshot> {
      let previous = '';
      const deadline = Date.now() + 120_000;
      for (;;) {
        const snap = await snapshot(s, esName);
        const text = JSON.stringify(snap);
        if ((done(snap) && text === previous) || Date.now() > deadline) return snap;
        previous = text;
        await new Promise((r) => setTimeout(r, 1500));
      }
    }

    const synced = (snap: CesSnapshot, namespaces: string[]): boolean =>
      namespaces.every(
        (n) => (snap.perNamespace[n] as { secret?: Record<string, string> } | null)?.secret?.password === 'ces-pw-1',
      );

    async function runScenario(s: System): Promise<void> {
      await stack.cp.apply(cesWorld(s, stack.bao.addr));
      await stack.cp.apply(cesObject(s));
      snaps[s].push(await settle(s, 'db-creds', (snap) => synced(snap, ['a', 'b'])));
      // b leaves the selection (relabelled), and the ExternalSecrets get a new name.
      await stack.cp.kubectl(['label', 'namespace', nsFor(s, 'b'), 'ces-target=none', '--overwrite']);
      snaps[s].push(await settle(s, 'db-creds', (snap) => snap.perNamespace.b === null));
      await stack.cp.apply(cesObject(s, 'db-creds-2'));
      snaps[s].push(await settle(s, 'db-creds-2', (snap) => synced(snap, ['a'])));
      snaps[s].push(await snapshot(s, 'db-creds'));
    }

    before(async () => {
      stack = await startPeerStack({ controllerManager: true });
      const v = async (method: string, path: string, body?: unknown): Promise<void> => {
        const r = await stack.vault(method, path, body);
        if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
      };
      await v('PUT', 'sys/policies/acl/ces-read', { policy: 'path "secret/data/ces/*" { capabilities = ["read"] }\n' });
      await v('POST', 'auth/kubernetes/role/ces', {
        bound_service_account_names: ['reader'],
        bound_service_account_namespaces: (['eso', 'vaultgate'] as const).flatMap((s) =>
          CES_NS.map((n) => nsFor(s, n)),
        ),
        token_policies: ['ces-read'],
        token_ttl: 3600,
      });
      await v('POST', 'secret/data/ces/db', { data: { username: 'ces-user', password: 'ces-pw-1' } });

      await stack.startEso({ controllerClass: 'eso' });
      await runScenario('eso');
      await stack.stopProcess('eso');
      await stack.startVaultgate({ controllerClass: 'vaultgate', bundled: true });
      await runScenario('vaultgate');
    });
    after(async () => {
      await stack?.stop();
    });

    void test('the scenario ran: ESO created the ExternalSecrets, listed the foreign one as failed, removed what it no longer selects', () => {
      const [first, deselected, renamed, oldName] = snaps.eso;
      assert.deepEqual((first?.status as { provisionedNamespaces?: string[] }).provisionedNamespaces, [
        'ces-S-a',
        'ces-S-b',
      ]);
      assert.deepEqual((first?.status as { failedNamespaces?: unknown }).failedNamespaces, [
        { namespace: 'ces-S-c', reason: 'external secret already exists in namespace' },
      ]);
      assert.equal(deselected?.perNamespace.b, null);
      assert.ok(synced(renamed!, ['a']));
      assert.deepEqual(
        Object.values(oldName!.perNamespace).filter((x) => x !== null).length,
        1,
        'only the foreign db-creds in c is left',
      );
    });

    for (const [i, phase] of [
      'first sync',
      'a namespace deselected',
      'externalSecretName renamed',
      'the old name afterwards',
    ].entries()) {
      void test(`${phase}: the same ExternalSecrets (labels, annotations, owner, spec), Secrets and ClusterExternalSecret status`, () => {
        assert.deepEqual(snaps.vaultgate[i], snaps.eso[i], stack.group.logTail('vaultgate'));
      });
    }
  },
);

// ------------------------------------------------------------------------------------------------------
// PushSecret side by side with the real ESO v0.16.2 (both running: ESO's PushSecret controller skips
// stores of another class), each in its own namespace pushing under its own namespace's subtree of the
// same real OpenBao; what lands in Vault (data and markers) and the PushSecrets' status are compared
// after the namespace prefix is normalised. Then what ESO v0.16.2 lacks (dataTo, check-and-set) and
// vaultgate's tenancy check, against the same OpenBao.

const PS_SYSTEMS = ['eso', 'vaultgate'] as const;
const psNs = (s: System): string => `ps-${s}`;

function psWorld(s: System, vaultAddr: string): object[] {
  const ns = psNs(s);
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'pusher', namespace: ns } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'src', namespace: ns },
      stringData: { user: 'push-user', password: 'push-pw-1', json: '{"k":"v"}' },
    },
    ...(['vault', 'legacy'] as const).map((name) => ({
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name, namespace: ns },
      spec: {
        controller: s,
        provider: {
          vault: {
            server: vaultAddr,
            path: name === 'vault' ? 'secret' : 'kv1',
            version: name === 'vault' ? 'v2' : 'v1',
            auth: { kubernetes: { mountPath: 'kubernetes', role: 'pusher', serviceAccountRef: { name: 'pusher' } } },
          },
        },
      },
    })),
  ];
}

function pushSecrets(s: System, phase: 1 | 2): object[] {
  const ns = psNs(s);
  const ps = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): object => ({
    apiVersion: 'external-secrets.io/v1alpha1',
    kind: 'PushSecret',
    metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
    spec: {
      refreshInterval: '1h',
      secretStoreRefs: [{ name: 'vault', kind: 'SecretStore' }],
      selector: { secret: { name: 'src' } },
      ...spec,
    },
  });
  const whole = (key: string) => ({ match: { secretKey: 'json', remoteRef: { remoteKey: `${ns}/${key}` } } });
  return [
    ps(
      'prop',
      {
        data: ['user', 'password'].map((k) => ({
          match: { secretKey: k, remoteRef: { remoteKey: `${ns}/app/db`, property: k } },
        })),
      },
      phase === 2 ? { bump: '2' } : undefined,
    ),
    ps('whole', { data: [{ match: { remoteRef: { remoteKey: `${ns}/app/all` } } }] }),
    ps('once', {
      updatePolicy: 'IfNotExists',
      data: [{ match: { secretKey: 'user', remoteRef: { remoteKey: `${ns}/app/once`, property: 'user' } } }],
    }),
    ps('foreign', {
      data: [{ match: { secretKey: 'user', remoteRef: { remoteKey: `${ns}/foreign`, property: 'user' } } }],
    }),
    ps('del', { deletionPolicy: 'Delete', data: phase === 1 ? [whole('del/a'), whole('del/b')] : [whole('del/a')] }),
    ps('legacy', {
      secretStoreRefs: [{ name: 'legacy', kind: 'SecretStore' }],
      data: [{ match: { secretKey: 'password', remoteRef: { remoteKey: `${ns}/legacy`, property: 'password' } } }],
    }),
  ];
}

const PS_NAMES = ['prop', 'whole', 'once', 'foreign', 'del', 'legacy'];
const REMOTES = [
  ['secret', 'app/db'],
  ['secret', 'app/all'],
  ['secret', 'app/once'],
  ['secret', 'foreign'],
  ['secret', 'del/a'],
  ['secret', 'del/b'],
  ['kv1', 'legacy'],
] as const;

void describe(
  '#13 PushSecret: vaultgate and the real ESO v0.16.2 push the same to the same real OpenBao',
  { skip: tier.skip || baoSkipReason() },
  () => {
    let stack: PeerStack;
    const snaps: Array<Record<System, unknown>> = [];
    /** vaultgate.io/pushed-by markers seen per system (ESO never writes one; every secret vaultgate pushed has one). */
    const pushedBy: Record<System, string[]> = { eso: [], vaultgate: [] };
    const v = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> =>
      stack.vault(method, path, body);

    async function remote(s: System): Promise<Record<string, unknown>> {
      const out: Record<string, unknown> = {};
      for (const [mount, key] of REMOTES) {
        const path = `${psNs(s)}/${key}`;
        if (mount === 'kv1') {
          const r = await v('GET', `kv1/${path}`);
          const data = r.status === 200 ? { ...(r.body as { data: Record<string, unknown> }).data } : null;
          const cm = data?.custom_metadata as Record<string, string> | undefined;
          if (cm?.['vaultgate.io/pushed-by']) pushedBy[s].push(cm['vaultgate.io/pushed-by']);
          if (cm) delete cm['vaultgate.io/pushed-by'];
          out[`${mount}/${key}`] = data;
          continue;
        }
        const d = await v('GET', `secret/data/${path}`);
        const m = await v('GET', `secret/metadata/${path}`);
        const cm =
          m.status === 200
            ? {
                ...((m.body as { data: { custom_metadata?: Record<string, string> | null } }).data.custom_metadata ??
                  {}),
              }
            : null;
        if (cm?.['vaultgate.io/pushed-by']) pushedBy[s].push(cm['vaultgate.io/pushed-by']);
        if (cm) delete cm['vaultgate.io/pushed-by'];
        out[`${mount}/${key}`] = {
          data: d.status === 200 ? (d.body as { data: { data: unknown } }).data.data : null,
          customMetadata: cm,
        };
      }
      return out;
    }

    async function statuses(s: System): Promise<Record<string, unknown>> {
      const list = await stack.cp.request(
        'GET',
        `/apis/external-secrets.io/v1alpha1/namespaces/${psNs(s)}/pushsecrets`,
      );
      const out: Record<string, unknown> = {};
      for (const o of (
        list.body as {
          items?: Array<{
            metadata: { name: string; finalizers?: string[] };
            status?: {
              syncedPushSecrets?: unknown;
              conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
            };
          }>;
        }
      ).items ?? []) {
        const ready = (o.status?.conditions ?? []).find((c) => c.type === 'Ready');
        out[o.metadata.name] = {
          ready: ready ? `${ready.status}/${ready.reason ?? ''}: ${ready.message ?? ''}` : 'none',
          synced: o.status?.syncedPushSecrets ?? null,
          finalizers: o.metadata.finalizers ?? [],
        };
      }
      return out;
    }

    async function snapshot(): Promise<Record<System, unknown>> {
      const out = {} as Record<System, unknown>;
      for (const s of PS_SYSTEMS)
        out[s] = JSON.parse(
          JSON.stringify({ remote: await remote(s), status: await statuses(s) }).replaceAll(psNs(s), 'ps-S'),
        ) as unknown;
      return out;
    }

    async function settle(done: (snap: Record<System, unknown>) => boolean): Promise<Record<System, unknown>> {
      let previous = '';
      const deadline = Date.now() + 120_000;
      for (;;) {
        const snap = await snapshot();
        const text = JSON.stringify(snap);
        if ((done(snap) && text === previous) || Date.now() > deadline) return snap;
        previous = text;
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
    const allReady = (snap: Record<System, unknown>, names: string[]): boolean =>
      PS_SYSTEMS.every((s) =>
        names.every(
          (n) =>
            !String((snap[s] as { status: Record<string, { ready: string }> }).status[n]?.ready ?? 'none').startsWith(
              'none',
            ),
        ),
      );

    before(async () => {
      stack = await startPeerStack({ controllerManager: true });
      const ok = async (method: string, path: string, body?: unknown): Promise<void> => {
        const r = await v(method, path, body);
        if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
      };
      await ok('POST', 'sys/mounts/kv1', { type: 'kv', options: { version: '1' } });
      // OpenBao lets this identity write anywhere under secret/ and kv1/: what keeps a tenant in its
      // subtree is vaultgate's own check of the namespace's guardrails.
      await ok('PUT', 'sys/policies/acl/pusher', {
        policy:
          'path "secret/*" { capabilities = ["create", "read", "update", "delete", "list"] }\npath "kv1/*" { capabilities = ["create", "read", "update", "delete", "list"] }\n',
      });
      await ok('POST', 'auth/kubernetes/role/pusher', {
        bound_service_account_names: ['pusher'],
        bound_service_account_namespaces: PS_SYSTEMS.map(psNs),
        token_policies: ['pusher'],
        token_ttl: 3600,
      });
      for (const s of PS_SYSTEMS) {
        await ok('POST', `secret/data/${psNs(s)}/foreign`, { data: { user: 'not-yours' } });
        await ok('POST', `secret/data/${psNs(s)}/app/once`, { data: { user: 'was-here-first' } });
      }
      // kv1/ is outside every namespace's subtree of secret/: the cluster admin opens ps-vaultgate's part.
      await stack.cp.apply({
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultGuardrail',
        metadata: { name: 'legacy-kv' },
        spec: {
          mode: 'enforce',
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': psNs('vaultgate') } },
          relaxFloor: ['namespace-subtree'],
          allowedPaths: ['secret/data/{{namespace}}/*', 'secret/metadata/{{namespace}}/*', 'kv1/{{namespace}}/*'],
        },
      });
      await Promise.all([
        stack.startEso({ controllerClass: 'eso' }),
        stack.startVaultgate({ controllerClass: 'vaultgate', bundled: true }),
      ]);
      for (const s of PS_SYSTEMS) await stack.cp.apply(psWorld(s, stack.bao.addr));
      await waitFor(
        async () => {
          for (const s of PS_SYSTEMS) {
            const r = await stack.cp.request('GET', `/apis/external-secrets.io/v1/namespaces/${psNs(s)}/secretstores`);
            const items = (r.body as { items?: Array<Record<string, unknown>> }).items ?? [];
            if (items.length < 2 || !items.every((o) => condition(o)?.status === 'True')) return undefined;
          }
          return true;
        },
        { what: 'every SecretStore Ready in both systems', timeoutMs: 120_000, intervalMs: 500 },
      );
      for (const s of PS_SYSTEMS) await stack.cp.apply(pushSecrets(s, 1));
      snaps.push(await settle((snap) => allReady(snap, PS_NAMES)));
      // Phase 2: a new source value (pushed on the metadata change), one entry dropped from the Delete one.
      for (const s of PS_SYSTEMS) {
        await stack.cp.apply({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'src', namespace: psNs(s) },
          stringData: { user: 'push-user', password: 'push-pw-2', json: '{"k":"v"}' },
        });
        await stack.cp.apply(pushSecrets(s, 2));
      }
      snaps.push(
        await settle((snap) =>
          PS_SYSTEMS.every(
            (s) =>
              (snap[s] as { remote: Record<string, { data?: { password?: string } }> }).remote['secret/app/db']?.data
                ?.password === 'push-pw-2',
          ),
        ),
      );
      // Phase 3: the Delete one goes.
      for (const s of PS_SYSTEMS)
        await stack.cp.kubectl(['delete', '-n', psNs(s), 'pushsecret/del', '--wait=true', '--timeout=90s']);
      snaps.push(await settle(() => true));
    });
    after(async () => {
      await stack?.stop();
    });

    void test('the scenario ran: ESO pushed, refused the foreign secret, left the existing one, deleted what it dropped', () => {
      const eso = snaps[0]!.eso as {
        remote: Record<string, { data: unknown; customMetadata: unknown } | null>;
        status: Record<string, { ready: string }>;
      };
      assert.deepEqual(eso.remote['secret/app/db'], {
        data: { password: 'push-pw-1', user: 'push-user' },
        customMetadata: { 'managed-by': 'external-secrets' },
      });
      assert.deepEqual(eso.remote['secret/app/once']?.data, { user: 'was-here-first' });
      assert.match(eso.status.foreign?.ready ?? '', /^False\/Errored: .*secret not managed by external-secrets/);
      assert.deepEqual((snaps[1]!.eso as { remote: Record<string, unknown> }).remote['secret/del/b'], {
        data: null,
        customMetadata: null,
      });
      assert.deepEqual((snaps[2]!.eso as { remote: Record<string, unknown> }).remote['secret/del/a'], {
        data: null,
        customMetadata: null,
      });
    });

    for (const [i, phase] of [
      'first push',
      'a new value, an entry dropped (deletionPolicy Delete)',
      'the Delete PushSecret deleted',
    ].entries()) {
      void test(`${phase}: the same remote data and markers, the same PushSecret status`, () => {
        assert.deepEqual(snaps[i]!.vaultgate, snaps[i]!.eso);
      });
    }

    void test('documented difference: vaultgate also records which PushSecret pushed a secret (vaultgate.io/pushed-by), ESO never', () => {
      assert.deepEqual(pushedBy.eso, []);
      assert.ok(
        pushedBy.vaultgate.length > 0 && pushedBy.vaultgate.every((p) => p.startsWith(`${psNs('vaultgate')}/`)),
        pushedBy.vaultgate.join(),
      );
    });

    void test("tenancy: a push outside the namespace's subtree is refused before OpenBao is asked (OpenBao itself would allow it)", async () => {
      await stack.cp.apply({
        apiVersion: 'external-secrets.io/v1alpha1',
        kind: 'PushSecret',
        metadata: { name: 'escape', namespace: psNs('vaultgate') },
        spec: {
          refreshInterval: '1h',
          secretStoreRefs: [{ name: 'vault' }],
          selector: { secret: { name: 'src' } },
          data: [{ match: { secretKey: 'json', remoteRef: { remoteKey: `${psNs('eso')}/stolen` } } }],
        },
      });
      const ps = await waitFor(
        async () => {
          const r = await stack.cp.request(
            'GET',
            `/apis/external-secrets.io/v1alpha1/namespaces/${psNs('vaultgate')}/pushsecrets/escape`,
          );
          const c = condition(r.body as Record<string, unknown>);
          return c ? { value: c } : undefined;
        },
        { what: 'PushSecret escape has a Ready condition', timeoutMs: 60_000, intervalMs: 500 },
      );
      assert.equal(ps.value.status, 'False');
      assert.match(
        ps.value.message ?? '',
        /pushing to secret\/data\/ps-eso\/stolen is not allowed in namespace ps-vaultgate: .*rule guardrail\.allowed-path/,
      );
      assert.equal((await v('GET', `secret/data/${psNs('eso')}/stolen`)).status, 404);
    });

    void test("auth.userPass: a store logging in with a username and the password from its own namespace reads the same as ESO's", async () => {
      await v('POST', 'sys/auth/userpass', { type: 'userpass' });
      await v('POST', 'auth/userpass/users/ps-reader', { password: 'up-pass-9Z', token_policies: 'pusher' });
      for (const s of PS_SYSTEMS) {
        await stack.cp.apply([
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'up-creds', namespace: psNs(s) },
            stringData: { password: 'up-pass-9Z' },
          },
          {
            apiVersion: 'external-secrets.io/v1',
            kind: 'SecretStore',
            metadata: { name: 'userpass', namespace: psNs(s) },
            spec: {
              controller: s,
              provider: {
                vault: {
                  server: stack.bao.addr,
                  path: 'secret',
                  version: 'v2',
                  auth: {
                    userPass: {
                      path: 'userpass',
                      username: 'ps-reader',
                      secretRef: { name: 'up-creds', key: 'password' },
                    },
                  },
                },
              },
            },
          },
        ]);
      }
      const storeReady = async (s: System): Promise<string | undefined> => {
        const c = condition(
          (await stack.cp.request('GET', `/apis/external-secrets.io/v1/namespaces/${psNs(s)}/secretstores/userpass`))
            .body as Record<string, unknown>,
        );
        return c?.status === 'True' ? `${c.status}/${c.reason ?? ''}` : undefined;
      };
      const ready: Record<string, string> = {};
      for (const s of PS_SYSTEMS)
        ready[s] = (
          await waitFor(
            async () => {
              const r = await storeReady(s);
              return r ? { value: r } : undefined;
            },
            { what: `${s}: userPass store Ready`, timeoutMs: 90_000, intervalMs: 500 },
          )
        ).value;
      assert.equal(ready.vaultgate, ready.eso);
      for (const s of PS_SYSTEMS) {
        await stack.cp.apply({
          apiVersion: 'external-secrets.io/v1',
          kind: 'ExternalSecret',
          metadata: { name: 'up', namespace: psNs(s) },
          spec: {
            refreshInterval: '1h',
            secretStoreRef: { name: 'userpass', kind: 'SecretStore' },
            data: [{ secretKey: 'password', remoteRef: { key: `${psNs(s)}/app/db`, property: 'password' } }],
          },
        });
      }
      const got: Record<string, unknown> = {};
      for (const s of PS_SYSTEMS) {
        got[s] = (
          await waitFor(
            async () => {
              const r = await stack.cp.request('GET', `/api/v1/namespaces/${psNs(s)}/secrets/up`);
              return r.status === 200 ? { value: decode(r.body as SecretObj) } : undefined;
            },
            { what: `${s}: Secret up synced through userPass`, timeoutMs: 90_000, intervalMs: 500 },
          )
        ).value;
      }
      assert.deepEqual(got.vaultgate, { password: 'push-pw-2' });
      assert.deepEqual(got.vaultgate, got.eso);
    });

    void test("no pushed value in a PushSecret status, an Event or the controller's log", async () => {
      const list = await stack.cp.request(
        'GET',
        `/apis/external-secrets.io/v1alpha1/namespaces/${psNs('vaultgate')}/pushsecrets`,
      );
      const events = await stack.cp.request('GET', `/api/v1/namespaces/${psNs('vaultgate')}/events`);
      for (const text of [list.text, events.text, readFileSync(join(stack.group.dir, 'logs', 'vaultgate.log'), 'utf8')])
        assert.doesNotMatch(text, /push-pw-[12]|not-yours|was-here-first|up-pass-9Z/);
    });
  },
);
