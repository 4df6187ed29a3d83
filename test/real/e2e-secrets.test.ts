// Scenario 3 (real tier): a SecretStore logging in with kubernetes auth as the tenant's own
// ServiceAccount (TokenRequest → real OpenBao → real TokenReview) and an ExternalSecret produce a
// Secret with the right data, owned by the ExternalSecret; a change in Vault reaches the Secret on the
// next refresh; deleting the ExternalSecret lets the real kube-controller-manager's garbage collector
// delete an Owner Secret and keep an Orphan one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runVaultgate } from '../harness/e2e-processes.ts';
import { CommandError } from '../harness/tools.ts';
import { condition, type E2EStack, startE2E, waitForObject } from '../harness/e2e-stack.ts';
import { realTier } from '../harness/real-tier.ts';

const tier = await realTier();
const NS = 'team-a';

type Obj = Record<string, unknown> & {
  metadata: { uid: string; ownerReferences?: Array<{ kind: string; name: string; uid: string; controller?: boolean }> };
};
interface SecretObj extends Obj {
  data?: Record<string, string>;
  type?: string;
}

const decode = (s: SecretObj | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

function externalSecret(name: string, creationPolicy: 'Owner' | 'Orphan'): object {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { name, namespace: NS },
    spec: {
      refreshInterval: '2s',
      secretStoreRef: { name: 'vault-backend', kind: 'SecretStore' },
      target: { name, creationPolicy },
      data: [
        { secretKey: 'username', remoteRef: { key: 'team-a/app/db', property: 'username' } },
        { secretKey: 'password', remoteRef: { key: 'team-a/app/db', property: 'password' } },
      ],
    },
  };
}

void describe(
  'e2e 3: SecretStore (kubernetes auth as the tenant) + ExternalSecret → Secret, refresh, garbage collection',
  { skip: tier.skip },
  () => {
    let stack: E2EStack;

    before(async () => {
      stack = await startE2E({ controllerManager: true });
      await stack.cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app-reader', namespace: NS } },
      ]);
      await stack.vaultRoot('POST', 'secret/data/team-a/app/db', {
        data: { username: 'app', password: 'first-password' },
      });
      await stack.kubectlApply([
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultPolicy',
          metadata: { name: 'app-read', namespace: NS },
          spec: { rules: [{ path: 'secret/data/{{namespace}}/app/*', capabilities: ['read'] }] },
        },
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultRoleBinding',
          metadata: { name: 'app-reader', namespace: NS },
          spec: { serviceAccounts: ['app-reader'], policies: ['app-read'], audience: 'vault' },
        },
      ]);
      // The store is applied once its role exists: a store whose login fails ("invalid role name") is
      // re-validated only after its recheck interval (5 min by default, as ESO's store requeue interval).
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', NS, 'vrb/app-reader']);
      await stack.kubectlApply([
        {
          apiVersion: 'external-secrets.io/v1',
          kind: 'SecretStore',
          metadata: { name: 'vault-backend', namespace: NS },
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
                    serviceAccountRef: { name: 'app-reader', audiences: ['vault'] },
                  },
                },
              },
            },
          },
        },
      ]);
    });
    after(async () => {
      await stack?.stop();
    });

    void test('the SecretStore becomes Ready by logging in as team-a/app-reader (verified by TokenReview)', async () => {
      const store = await waitForObject<Obj>(
        stack,
        'secretstore',
        'vault-backend',
        NS,
        (o) => condition(o)?.status === 'True',
        'SecretStore Ready',
      );
      assert.equal(condition(store)?.status, 'True');
      const ok = stack.vault
        .logins()
        .filter(
          (l) =>
            l.ok && l.namespace === NS && l.serviceAccount === 'app-reader' && l.role === 'vaultgate.team-a.app-reader',
        );
      assert.ok(
        ok.length > 0,
        "the store logged in with a TokenRequest token of its own ServiceAccount (OpenBao's audit log)",
      );
    });

    void test('an ExternalSecret produces a Secret with the Vault data, owned by the ExternalSecret', async () => {
      await stack.kubectlApply(externalSecret('app-db', 'Owner'));
      const secret = await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => decode(s).password === 'first-password',
        'Secret app-db with the Vault data',
      );
      assert.deepEqual(decode(secret), { username: 'app', password: 'first-password' });
      const es = await stack.getJson<Obj>('externalsecret', 'app-db', NS);
      const owner = secret?.metadata.ownerReferences?.find((r) => r.kind === 'ExternalSecret');
      assert.equal(owner?.name, 'app-db');
      assert.equal(owner?.uid, es?.metadata.uid);
      assert.equal(owner?.controller, true);
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=30s', '-n', NS, 'externalsecret/app-db']);
    });

    void test('a new value in Vault reaches the Secret on the next refresh (refreshInterval 2s)', async () => {
      await stack.vaultRoot('POST', 'secret/data/team-a/app/db', {
        data: { username: 'app', password: 'second-password' },
      });
      const secret = await waitForObject<SecretObj>(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => decode(s).password === 'second-password',
        'the Secret to carry the new password',
        30_000,
      );
      assert.deepEqual(decode(secret), { username: 'app', password: 'second-password' });
    });

    void test('no secret value appears in the ExternalSecret status, events, logs, metrics, audit records or plan output', async () => {
      const SECRETS = /first-password|second-password/;
      const es = await stack.getJson<Obj>('externalsecret', 'app-db', NS);
      assert.doesNotMatch(JSON.stringify(es), SECRETS);
      const events = await stack.cp.request('GET', `/api/v1/namespaces/${NS}/events`);
      assert.doesNotMatch(events.text, SECRETS);
      assert.doesNotMatch(stack.procs.log('controller'), /first-password|second-password|eyJhbGciOi/);
      // The controller's /metrics (its reconcile and Vault request series are there: the page is real).
      const metricsUrl = stack.controller?.metricsUrl;
      assert.ok(metricsUrl);
      const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
      assert.match(metrics, /controller_runtime_reconcile_total\{[^}]*controller="externalsecret"/);
      assert.doesNotMatch(metrics, SECRETS);
      // The webhook's log holds its signed admission records (of these ExternalSecrets among them).
      const webhookLog = stack.procs.log('webhook');
      assert.match(webhookLog, /"kind":"external-secrets\.io\/v1\/ExternalSecret"/);
      assert.doesNotMatch(webhookLog, SECRETS);
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
      assert.match(plan, /Plan: \d+ to create, \d+ to update, \d+ to delete, \d+ unchanged/);
      assert.doesNotMatch(plan, SECRETS);
    });

    void test('deleting the ExternalSecrets: the garbage collector deletes the Owner Secret and keeps the Orphan one', async () => {
      await stack.kubectlApply(externalSecret('kept', 'Orphan'));
      const kept = await waitForObject<SecretObj>(
        stack,
        'secret',
        'kept',
        NS,
        (s) => decode(s).password === 'second-password',
        'Secret kept',
      );
      assert.equal(
        (kept?.metadata.ownerReferences ?? []).filter((r) => r.kind === 'ExternalSecret').length,
        0,
        'an Orphan Secret has no owner',
      );

      await stack.cp.kubectl([
        'delete',
        '-n',
        NS,
        'externalsecret/app-db',
        'externalsecret/kept',
        '--wait=true',
        '--timeout=60s',
      ]);
      // The Owner Secret's deletion by the real garbage collector is also the point by which it has
      // processed both deletions: only then is "the Orphan Secret is still there" meaningful. The garbage
      // collector starts watching a CRD's kind at its next discovery resync (every 30 s), so this can take
      // up to ~30 s after the CRDs were installed: real kube-controller-manager behaviour.
      await waitForObject(
        stack,
        'secret',
        'app-db',
        NS,
        (s) => s === undefined,
        'the garbage collector to delete Secret app-db',
      );
      const still = await stack.getJson<SecretObj>('secret', 'kept', NS);
      assert.ok(still, 'the Orphan Secret is kept');
      assert.deepEqual(decode(still), { username: 'app', password: 'second-password' });
    });

    void test('a SecretStore applied in one kubectl apply with the VaultPolicy and VaultRoleBinding behind its role becomes Ready promptly', async () => {
      await stack.cp.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'together', namespace: NS } });
      await stack.kubectlApply([
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultPolicy',
          metadata: { name: 'together', namespace: NS },
          spec: { rules: [{ path: 'secret/data/{{namespace}}/together/*', capabilities: ['read'] }] },
        },
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultRoleBinding',
          metadata: { name: 'together', namespace: NS },
          spec: { serviceAccounts: ['together'], policies: ['together'], audience: 'vault' },
        },
        {
          apiVersion: 'external-secrets.io/v1',
          kind: 'SecretStore',
          metadata: { name: 'together', namespace: NS },
          spec: {
            provider: {
              vault: {
                server: stack.vault.addr,
                path: 'secret',
                version: 'v2',
                auth: {
                  kubernetes: {
                    mountPath: 'kubernetes',
                    role: 'vaultgate.team-a.together',
                    serviceAccountRef: { name: 'together', audiences: ['vault'] },
                  },
                },
              },
            },
          },
        },
      ]);
      await waitForObject<Obj>(
        stack,
        'secretstore',
        'together',
        NS,
        (o) => condition(o)?.status === 'True',
        'SecretStore together Ready',
        60_000,
      );
    });

    void test('an ExternalSecret applied before the VaultPolicy its role needs gets its Secret when the policy lands, not at its next refresh (1 h)', async () => {
      await stack.cp.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'late', namespace: NS } });
      await stack.vaultRoot('POST', 'secret/data/team-a/late/db', { data: { password: 'late-password' } });
      await stack.kubectlApply([
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultRoleBinding',
          metadata: { name: 'late', namespace: NS },
          spec: { serviceAccounts: ['late'], policies: ['late'], audience: 'vault' },
        },
        {
          apiVersion: 'external-secrets.io/v1',
          kind: 'SecretStore',
          metadata: { name: 'late', namespace: NS },
          spec: {
            provider: {
              vault: {
                server: stack.vault.addr,
                path: 'secret',
                version: 'v2',
                auth: {
                  kubernetes: {
                    mountPath: 'kubernetes',
                    role: 'vaultgate.team-a.late',
                    serviceAccountRef: { name: 'late', audiences: ['vault'] },
                  },
                },
              },
            },
          },
        },
        {
          apiVersion: 'external-secrets.io/v1',
          kind: 'ExternalSecret',
          metadata: { name: 'late', namespace: NS },
          spec: {
            refreshInterval: '1h',
            secretStoreRef: { name: 'late', kind: 'SecretStore' },
            target: { name: 'late' },
            data: [{ secretKey: 'password', remoteRef: { key: 'team-a/late/db', property: 'password' } }],
          },
        },
      ]);
      // The role is written without the policy that does not exist yet (fail closed): the store logs in and
      // is Ready, and OpenBao refuses the read.
      await waitForObject<Obj>(
        stack,
        'secretstore',
        'late',
        NS,
        (o) => condition(o)?.status === 'True',
        'SecretStore late Ready',
      );
      await waitForObject<Obj>(
        stack,
        'externalsecret',
        'late',
        NS,
        (o) => /permission denied/.test(condition(o)?.message ?? ''),
        'ExternalSecret late refused by OpenBao',
      );
      await stack.kubectlApply({
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'late', namespace: NS },
        spec: { rules: [{ path: 'secret/data/{{namespace}}/late/*', capabilities: ['read'] }] },
      });
      const secret = await waitForObject<SecretObj>(
        stack,
        'secret',
        'late',
        NS,
        (s) => decode(s).password === 'late-password',
        'Secret late once the policy is in OpenBao',
      );
      assert.deepEqual(decode(secret), { password: 'late-password' });
      await waitForObject<Obj>(
        stack,
        'externalsecret',
        'late',
        NS,
        (o) => condition(o)?.status === 'True',
        'ExternalSecret late Ready',
      );
    });
  },
);
