// Issue #21 items 2, 3 and 7 on the real servers (kube-apiserver with its garbage collector, OpenBao
// 2.7.2, vaultgate's webhook and controller as processes, the controller's signed audit trail on):
// - a hand-made Secret is not taken over in two steps (a Merge ExternalSecret writes into it, then one
//   with Owner targets it): SecretNotOwned, its keys and owners untouched;
// - an Orphan Secret vaultgate creates names its ExternalSecret (created-for label), and another
//   ExternalSecret cannot take it;
// - a secret transformed by a template (upper-cased into a KeysAndValues key, split and joined) reaches
//   no status, Event, log line, audit record, metric or `plan` output;
// - every KV write and delete of a PushSecret is in the controller's audit trail, with no value.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runVaultgate } from '../harness/e2e-processes.ts';
import { CommandError } from '../harness/tools.ts';
import { condition, type E2EStack, startE2E, waitForObject } from '../harness/e2e-stack.ts';
import { realTier, baoSkipReason } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';
import { canaryLeaks } from '../eso/canary-variants.ts';

const tier = await realTier();
const skip = tier.skip || baoSkipReason();
const NS = 'team-a';
const CANARY = 'hunter2-Vb7Qm4Xz';
const PUSHED = 'Pz3Lk8Wq-pushed';

type Obj = Record<string, unknown> & {
  metadata: {
    uid: string;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ kind: string; name: string; uid: string }>;
  };
};
interface SecretObj extends Obj {
  data?: Record<string, string>;
}
const decode = (s: SecretObj | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

const es = (name: string, target: Record<string, unknown>): object => ({
  apiVersion: 'external-secrets.io/v1',
  kind: 'ExternalSecret',
  metadata: { name, namespace: NS },
  spec: {
    refreshInterval: '1h',
    secretStoreRef: { name: 'vault', kind: 'SecretStore' },
    target,
    data: [{ secretKey: 'admin.password', remoteRef: { key: 'team-a/app/db', property: 'password' } }],
  },
});

void describe(
  'issue #21: no Secret taken over, no value in any message, every Vault write in the trail (real apiserver, OpenBao 2.7.2)',
  { skip },
  () => {
    let stack: E2EStack;
    const keyDir = join(process.env.TMPDIR ?? '/tmp', `vaultgate-ownership-audit-${process.pid}`);

    before(async () => {
      mkdirSync(keyDir, { recursive: true });
      await runVaultgate(['audit', 'keygen', '--out', keyDir]);
      stack = await startE2E({
        controllerManager: true,
        controller: { extraArgs: ['--audit-key-file', join(keyDir, 'audit-signing-key.pem')] },
      });
      await stack.cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: NS } },
      ]);
      await stack.vaultRoot('POST', 'secret/data/team-a/app/db', { data: { password: CANARY } });
      await stack.kubectlApply([
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultPolicy',
          metadata: { name: 'app', namespace: NS },
          spec: {
            rules: [
              { path: 'secret/data/{{namespace}}/*', capabilities: ['create', 'read', 'update', 'delete'] },
              { path: 'secret/metadata/{{namespace}}/*', capabilities: ['create', 'read', 'update', 'delete', 'list'] },
            ],
          },
        },
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultRoleBinding',
          metadata: { name: 'app', namespace: NS },
          spec: { serviceAccounts: ['app'], policies: ['app'], audience: 'vault' },
        },
      ]);
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', NS, 'vrb/app']);
      await stack.kubectlApply({
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault', namespace: NS },
        spec: {
          provider: {
            vault: {
              server: stack.vault.addr,
              path: 'secret',
              version: 'v2',
              auth: {
                kubernetes: {
                  mountPath: 'kubernetes',
                  role: 'vaultgate.team-a.app',
                  serviceAccountRef: { name: 'app', audiences: ['vault'] },
                },
              },
            },
          },
        },
      });
      await waitForObject(
        stack,
        'secretstore',
        'vault',
        NS,
        (o) => condition(o)?.status === 'True',
        'SecretStore Ready',
      );
    });
    after(async () => {
      await stack?.stop();
    });

    void test('two steps: a Merge ExternalSecret writes into argocd-secret, then one with Owner is refused (SecretNotOwned), the Secret untouched', async () => {
      await stack.cp.apply({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'argocd-secret', namespace: NS },
        stringData: { 'server.secretkey': 'signing-key-of-argocd' },
      });
      await stack.kubectlApply(es('merge-in', { name: 'argocd-secret', creationPolicy: 'Merge' }));
      const merged = await waitForObject<SecretObj>(
        stack,
        'secret',
        'argocd-secret',
        NS,
        (s) => decode(s)['admin.password'] === CANARY,
        'argocd-secret with the merged key',
      );
      assert.deepEqual(merged?.metadata.ownerReferences ?? [], []);
      assert.deepEqual(
        Object.keys(merged?.metadata.labels ?? {}).filter((k) => /created-(by|for)/.test(k)),
        [],
        'Merge marks no Secret as created for it',
      );

      await stack.kubectlApply(es('take', { name: 'argocd-secret', creationPolicy: 'Owner' }));
      const refused = await waitForObject<Obj>(
        stack,
        'externalsecret',
        'take',
        NS,
        (o) => condition(o)?.reason === 'SecretNotOwned',
        'ExternalSecret take: SecretNotOwned',
      );
      assert.equal(condition(refused)?.status, 'False');
      const after = await stack.getJson<SecretObj>('secret', 'argocd-secret', NS);
      assert.deepEqual(decode(after), { 'server.secretkey': 'signing-key-of-argocd', 'admin.password': CANARY });
      assert.deepEqual(
        after?.metadata.ownerReferences ?? [],
        [],
        'no ownerReference: the garbage collector will not delete it with the ExternalSecret',
      );
    });

    void test('an Orphan Secret vaultgate creates names its ExternalSecret; another ExternalSecret cannot take it', async () => {
      await stack.kubectlApply(es('orphan', { name: 'orphan-secret', creationPolicy: 'Orphan' }));
      const created = await waitForObject<SecretObj>(
        stack,
        'secret',
        'orphan-secret',
        NS,
        (s) => decode(s)['admin.password'] === CANARY,
        'Secret orphan-secret',
      );
      const owner = await stack.getJson<Obj>('externalsecret', 'orphan', NS);
      assert.equal(created?.metadata.labels?.['vaultgate.io/created-for'], owner?.metadata.uid);
      await stack.kubectlApply(es('second', { name: 'orphan-secret', creationPolicy: 'Owner' }));
      await waitForObject<Obj>(
        stack,
        'externalsecret',
        'second',
        NS,
        (o) => condition(o)?.reason === 'SecretNotOwned',
        'ExternalSecret second: SecretNotOwned',
      );
      assert.deepEqual(
        (await stack.getJson<SecretObj>('secret', 'orphan-secret', NS))?.metadata.ownerReferences ?? [],
        [],
      );
    });

    void test('a secret upper-cased into a KeysAndValues key, or split and joined: no form of it in status, Events, logs, audit records, metrics or plan', async () => {
      const literals = [
        '{{ .password | upper }}: [1]',
        '{{ splitList "" .password | join "." }}: [1]',
        'k: *{{ .password | upper }}',
        '{{ fail .password }}',
      ];
      await stack.kubectlApply(
        literals.map((literal, i) => ({
          apiVersion: 'external-secrets.io/v1',
          kind: 'ExternalSecret',
          metadata: { name: `leak-${i}`, namespace: NS },
          spec: {
            refreshInterval: '1h',
            secretStoreRef: { name: 'vault', kind: 'SecretStore' },
            target: { name: `leak-${i}`, template: { templateFrom: [{ literal }] } },
            data: [{ secretKey: 'password', remoteRef: { key: 'team-a/app/db', property: 'password' } }],
          },
        })),
      );
      for (const i of literals.keys())
        await waitForObject<Obj>(
          stack,
          'externalsecret',
          `leak-${i}`,
          NS,
          (o) => condition(o)?.status === 'False',
          `ExternalSecret leak-${i} failed`,
        );
      // `vaultgate plan --vault` over everything in the namespace, compared with the real OpenBao.
      const dump = join(stack.procs.dir, 'plan-input.yaml');
      writeFileSync(
        dump,
        await stack.cp.kubectl([
          'get',
          'vaultpolicies,vaultrolebindings,secretstores,externalsecrets',
          '-n',
          NS,
          '-o',
          'yaml',
        ]),
      );
      const plan = await runVaultgate(['plan', '-f', dump, '--vault', '--vault-addr', stack.vault.addr], {
        env: { ...process.env, VAULT_TOKEN: stack.vault.rootToken },
      }).catch((err: unknown) => {
        if (err instanceof CommandError) return err.stdout;
        throw err;
      });
      const texts = {
        status: (await stack.cp.request('GET', `/apis/external-secrets.io/v1/namespaces/${NS}/externalsecrets`)).text,
        events: (await stack.cp.request('GET', `/api/v1/namespaces/${NS}/events`)).text,
        'controller log and audit records': stack.procs.log('controller'),
        'webhook log and audit records': stack.procs.log('webhook'),
        metrics: await (await fetch(`${stack.controller!.metricsUrl}/metrics`)).text(),
        plan,
      };
      assert.match(texts.plan, /Plan: \d+ to create/);
      for (const [where, text] of Object.entries(texts)) {
        assert.deepEqual(canaryLeaks(text, ['Vb7Qm4Xz']), [], where);
        assert.doesNotMatch(text, /\d+ bytes\)|column \d+/, where);
      }
      assert.match(
        texts.status,
        /could not unmarshal template to 'map\[string\]\[\]byte': a value is a list, not a string/,
      );
    });

    void test("every PushSecret KV write and delete is in the controller's signed audit trail, with the PushSecret and no value", async () => {
      await stack.cp.apply({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'src', namespace: NS },
        stringData: { token: PUSHED },
      });
      const push = {
        apiVersion: 'external-secrets.io/v1alpha1',
        kind: 'PushSecret',
        metadata: { name: 'pusher', namespace: NS },
        spec: {
          refreshInterval: '1h',
          deletionPolicy: 'Delete',
          secretStoreRefs: [{ name: 'vault', kind: 'SecretStore' }],
          selector: { secret: { name: 'src' } },
          data: [{ match: { secretKey: 'token', remoteRef: { remoteKey: 'team-a/pushed/token', property: 'token' } } }],
        },
      };
      await stack.kubectlApply(push);
      await waitFor(
        async () =>
          condition(
            (await stack.cp.request('GET', `/apis/external-secrets.io/v1alpha1/namespaces/${NS}/pushsecrets/pusher`))
              .body as Obj,
          )?.reason === 'Synced'
            ? true
            : undefined,
        { what: 'PushSecret pusher Synced', timeoutMs: 60_000, intervalMs: 500 },
      );
      const read = await stack.vaultRoot('GET', 'secret/data/team-a/pushed/token');
      assert.equal((read.body as { data?: { data?: Record<string, string> } }).data?.data?.token, PUSHED);
      await stack.cp.kubectl(['delete', '-n', NS, 'pushsecret/pusher', '--wait=true', '--timeout=60s']);
      assert.equal(
        (await stack.vaultRoot('GET', 'secret/metadata/team-a/pushed/token')).status,
        404,
        'deleted with every version',
      );

      const records = stack.procs
        .log('controller')
        .split('\n')
        .filter((l) => l.startsWith('{"audit"'))
        .map(
          (l) =>
            JSON.parse(l) as {
              event: {
                type: string;
                action?: string;
                object?: string;
                vaultName?: string;
                owner?: { kind: string; name: string };
              };
            },
        );
      const kv = records.map((r) => r.event).filter((e) => e.type === 'vault-write' && e.owner?.kind === 'PushSecret');
      const seen = kv.map((e) => `${e.action} ${e.object} ${e.vaultName}`);
      for (const expected of [
        'create kv-metadata secret/metadata/team-a/pushed/token',
        'create kv-secret secret/data/team-a/pushed/token',
        'delete kv-secret secret/data/team-a/pushed/token',
        'delete kv-metadata secret/metadata/team-a/pushed/token',
      ]) {
        assert.ok(seen.includes(expected), `${expected} in ${JSON.stringify(seen)}`);
      }
      assert.deepEqual(canaryLeaks(JSON.stringify(records), ['Pz3Lk8Wq', 'Vb7Qm4Xz']), []);
      // The trail verifies (hash chain and signatures), PushSecret records included.
      const verify = await runVaultgate([
        'audit',
        'verify',
        stack.controller!.logPath,
        '--jwks',
        join(keyDir, 'audit-jwks.json'),
      ]);
      assert.match(verify, /^OK: /m);
    });
  },
);
