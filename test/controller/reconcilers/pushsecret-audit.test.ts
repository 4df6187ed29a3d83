// Every Vault write is in the trail (issue #21 item 7): each KV write and delete a PushSecret makes (data,
// custom metadata, KV v1 and v2, a property removed, a remote secret deleted with every version) reaches
// the Vault-write observer that feeds the signed audit trail, one record per request Vault received,
// naming the path and the PushSecret; the audit event holds no pushed value in any form.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stopVault, type Vault } from './eso-world.ts';
import {
  KV1_STORE,
  KV2_STORE,
  LEGACY_KV_GUARDRAIL,
  pushSecret,
  pushWorld,
  type PushWorld,
  startPushVault,
} from './push-world.ts';
import { SECRETS } from '../../../kube/resources.ts';
import { PUSH_SECRETS, VAULT_GUARDRAILS } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { auditVaultWrite, type VaultWriteInput } from '../../../trail/events.ts';
import { canaryLeaks } from '../../eso/canary-variants.ts';

let v: Vault;
void before(async () => {
  v = await startPushVault([KV2_STORE, KV1_STORE]);
});
void after(() => stopVault(v));

const PASSWORD = 'Mx4Qz8Rt-Wv7Kp';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

function world(): PushWorld {
  const w = pushWorld(v, [KV2_STORE, KV1_STORE], { user: 'app', password: PASSWORD });
  w.kube.put(VAULT_GUARDRAILS, LEGACY_KV_GUARDRAIL);
  return w;
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

const ps = (name: string, spec: Record<string, unknown>): KubeObject =>
  pushSecret(name, { deletionPolicy: 'Delete', ...spec });

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
