// Every Vault write is in the trail (issue #21 item 7): each KV write and delete a PushSecret makes (data,
// custom metadata, KV v1 and v2, a property removed, a remote secret deleted with every version) reaches
// the Vault-write observer that feeds the signed audit trail, one record per request Vault received,
// naming the path and the PushSecret; the audit event holds no pushed value in any form.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeKube } from './harness.ts';
import { startVault, stopVault, type Vault } from './eso-world.ts';
import { createSysApi } from '../../../vault/sys.ts';
import { TokenCache } from '../../../vault/token-cache.ts';
import type { VaultRequest } from '../../../vault/types.ts';
import { NAMESPACES, SECRETS } from '../../../kube/resources.ts';
import { PUSH_SECRETS, SECRET_STORES, VAULT_GUARDRAILS } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { StoreConnector } from '../../../controller/reconcilers/store-connector.ts';
import { createPushSecretReconciler } from '../../../controller/reconcilers/pushsecret.ts';
import { auditVaultWrite, type VaultWriteInput } from '../../../trail/events.ts';
import { canaryLeaks } from '../../eso/canary-variants.ts';

let v: Vault;
const root = () => ({ request: <T>(req: VaultRequest) => v.root.request<T>({ ...req, token: v.sim.rootToken }) });
void before(async () => {
  v = await startVault();
  const sys = createSysApi(root());
  await sys.writePolicy(
    'pusher',
    'path "secret/*" { capabilities = ["create", "read", "update", "delete", "list"] }\npath "kv1/*" { capabilities = ["create", "read", "update", "delete", "list"] }\n',
  );
  await sys.writeKubernetesRole('kubernetes', 'pusher', {
    bound_service_account_names: ['pusher'],
    bound_service_account_namespaces: ['team-a'],
    token_policies: ['pusher'],
    audience: 'vault',
    token_ttl: 3600,
  });
  await root().request({
    operation: 't',
    method: 'POST',
    path: 'sys/mounts/kv1',
    body: { type: 'kv', options: { version: '1' } },
  });
});
void after(() => stopVault(v));

const PASSWORD = 'Mx4Qz8Rt-Wv7Kp';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

function world(): { kube: FakeKube; writes: VaultWriteInput[]; run: (name: string) => Promise<unknown> } {
  const kube = new FakeKube();
  kube.tokenFor = (ns, sa, opts) => v.sim.jwtFor(ns, sa, { audiences: opts?.audiences });
  kube.put(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } },
  });
  for (const [name, path, version] of [
    ['vault', 'secret', 'v2'],
    ['legacy', 'kv1', 'v1'],
  ] as const) {
    kube.put(SECRET_STORES, {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name, namespace: 'team-a' },
      spec: {
        provider: {
          vault: {
            server: v.sim.addr,
            path,
            version,
            auth: { kubernetes: { mountPath: 'kubernetes', role: 'pusher', serviceAccountRef: { name: 'pusher' } } },
          },
        },
      },
    });
  }
  // kv1/ is outside every namespace's subtree of secret/: a cluster admin's enforce guardrail opens team-a's part of it.
  kube.put(VAULT_GUARDRAILS, {
    apiVersion: 'vaultgate.io/v1alpha1',
    kind: 'VaultGuardrail',
    metadata: { name: 'legacy-kv' },
    spec: {
      mode: 'enforce',
      relaxFloor: ['namespace-subtree'],
      allowedPaths: ['secret/data/{{namespace}}/*', 'secret/metadata/{{namespace}}/*', 'kv1/{{namespace}}/*'],
    },
  });
  kube.put(SECRETS, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'src', namespace: 'team-a' },
    data: { user: b64('app'), password: b64(PASSWORD) },
  });
  const writes: VaultWriteInput[] = [];
  const connector = new StoreConnector({
    client: kube,
    tokens: new TokenCache({ revokeOnEvict: false }),
    timeoutMs: 2000,
  });
  const r = createPushSecretReconciler({
    connector,
    controllerClass: '',
    namePrefix: 'vaultgate',
    onVaultWrite: (w) => writes.push(w),
  });
  return { kube, writes, run: (name) => kube.reconcile(r, `team-a/${name}`) };
}

/** The write and delete requests Vault received on the KV mounts since the last reset, as `verb path`. */
function kvRequests(): string[] {
  return Object.entries(v.sim.counts())
    .filter(([k]) => /^(write|delete) (secret|kv1)\//.test(k))
    .flatMap(([k, n]) => Array<string>(n).fill(k))
    .sort();
}
const recorded = (writes: VaultWriteInput[]): string[] =>
  writes.map((w) => `${w.action === 'delete' ? 'delete' : 'write'} ${w.vaultName}`).sort();

const ps = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'external-secrets.io/v1alpha1',
  kind: 'PushSecret',
  metadata: { name, namespace: 'team-a' },
  spec: { refreshInterval: '1h', deletionPolicy: 'Delete', selector: { secret: { name: 'src' } }, ...spec },
});

void describe('PushSecret KV writes in the audit trail', () => {
  for (const store of ['vault', 'legacy']) {
    void test(`${store === 'vault' ? 'KV v2' : 'KV v1'}: push, update, property removed, PushSecret deleted: one record per Vault request, no value`, async () => {
      const w = world();
      const name = `audit-${store}`;
      const all: VaultWriteInput[] = [];
      const step = async (what: string, change: () => void): Promise<void> => {
        v.sim.resetCounts();
        w.writes.length = 0;
        change();
        await w.run(name);
        assert.deepEqual(
          recorded(w.writes),
          kvRequests(),
          `${what}: every KV write and delete Vault received is recorded, and nothing else`,
        );
        all.push(...w.writes);
      };
      const data = (extra: Array<Record<string, unknown>> = []) => [
        { match: { secretKey: 'password', remoteRef: { remoteKey: `team-a/${store}/db`, property: 'password' } } },
        { match: { secretKey: 'user', remoteRef: { remoteKey: `team-a/${store}/db`, property: 'user' } } },
        ...extra,
      ];
      await step('first push', () =>
        w.kube.put(
          PUSH_SECRETS,
          ps(name, {
            secretStoreRefs: [{ name: store, kind: 'SecretStore' }],
            data: data([{ match: { remoteRef: { remoteKey: `team-a/${store}/all` } } }]),
          }),
        ),
      );
      assert.ok(
        w.writes.length >= 3,
        `${w.writes.length} records: ${JSON.stringify(w.kube.getObj(PUSH_SECRETS, `team-a/${name}`)?.status)}`,
      );
      assert.ok(
        w.writes.some(
          (x) =>
            x.action === 'create' &&
            x.object === 'kv-secret' &&
            x.vaultName === (store === 'vault' ? 'secret/data/team-a/vault/all' : 'kv1/team-a/legacy/all'),
        ),
      );
      await step('a changed value', () => {
        const s = w.kube.getObj(SECRETS, 'team-a/src')!;
        w.kube.put(SECRETS, {
          ...s,
          data: { ...(s as { data?: Record<string, string> }).data, password: b64(`${PASSWORD}-2`) },
        });
        const p = w.kube.getObj(PUSH_SECRETS, `team-a/${name}`)!;
        w.kube.put(PUSH_SECRETS, {
          ...p,
          metadata: { ...p.metadata, annotations: { 'external-secrets.io/force-sync': '1' } },
        });
      });
      assert.ok(
        w.writes.some((x) => x.action === 'update' && x.object === 'kv-secret'),
        'the new value is an update',
      );
      await step('one property and one remote secret no longer pushed', () => {
        const p = w.kube.getObj(PUSH_SECRETS, `team-a/${name}`)!;
        w.kube.put(PUSH_SECRETS, { ...p, spec: { ...(p.spec as Record<string, unknown>), data: data().slice(0, 1) } });
      });
      assert.ok(
        w.writes.some((x) => x.action === 'delete' && x.reason?.includes('no longer pushed')),
        JSON.stringify(w.writes),
      );
      await step('the PushSecret deleted', () => w.kube.remove(PUSH_SECRETS, `team-a/${name}`));
      assert.ok(
        w.writes.some((x) => x.action === 'delete' && x.reason?.includes('PushSecret deleted')),
        JSON.stringify(w.writes),
      );

      for (const x of all) {
        assert.deepEqual(x.owner, { kind: 'PushSecret', namespace: 'team-a', name, uid: x.owner?.uid });
        assert.ok(x.owner?.uid);
        assert.ok(x.object === 'kv-secret' || x.object === 'kv-metadata', x.object);
        if (x.object === 'kv-secret')
          assert.equal(x.content, undefined, 'no content (its hash would confirm a guessed value)');
        const event = JSON.stringify(auditVaultWrite(x));
        assert.deepEqual(canaryLeaks(event, [PASSWORD, `${PASSWORD}-2`]), [], event);
      }
    });
  }
});
