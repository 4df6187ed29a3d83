// Scenario 4 (real tier): drift. Someone edits or deletes the Vault policy or role vaultgate owns
// directly in Vault → the controller's periodic re-read (--drift-check) puts it back; someone deletes
// the synced Secret by hand → the controller recreates it from Vault.
// Vault is a real OpenBao 2.7.2 (test/harness/e2e-vault.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type E2EStack, startE2E, waitForObject } from '../harness/e2e-stack.ts';
import { realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-a';
const POLICY = 'vaultgate.team-a.app-read';
const ROLE = 'vaultgate.team-a.app-reader';
const DRIFT_CHECK_MS = 2000;

interface SecretObj {
  metadata: { uid: string };
  data?: Record<string, string>;
}

void describe('e2e 4: drift in Vault is repaired; a Secret deleted by hand is recreated', { skip: tier.skip }, () => {
  let stack: E2EStack;
  const policyText = async (): Promise<string | undefined> => {
    const r = await stack.vaultRoot('GET', `sys/policies/acl/${POLICY}`);
    return r.status === 200 ? (r.body as { data: { policy: string } }).data.policy : undefined;
  };

  before(async () => {
    stack = await startE2E({ controller: { driftCheckMs: DRIFT_CHECK_MS } });
    await stack.cp.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app-reader', namespace: NS } },
    ]);
    await stack.vaultRoot('POST', 'secret/data/team-a/app/db', { data: { password: 'drift-test-password' } });
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
    await stack.cp.kubectl([
      'wait',
      '--for=condition=Ready',
      '--timeout=60s',
      '-n',
      NS,
      'vp/app-read',
      'vrb/app-reader',
    ]);
  });
  after(async () => {
    await stack?.stop();
  });

  void test('a policy widened directly in Vault (read, edit, write back) is rewritten to the VaultPolicy', async () => {
    const original = await policyText();
    assert.ok(original);
    // What an operator does with `vault policy read` + an editor + `vault policy write`: vaultgate's
    // ownership header stays, a rule is added.
    const widened = `${original}\npath "secret/*" {\n  capabilities = ["create", "read", "update", "delete", "list", "sudo"]\n}\n`;
    assert.equal((await stack.vaultRoot('POST', `sys/policies/acl/${POLICY}`, { policy: widened })).status, 204);
    const repaired = await waitFor(
      async () => {
        const t = await policyText();
        return t !== undefined && t !== widened ? t : undefined;
      },
      { what: 'the drift check to restore the policy', timeoutMs: 30_000, intervalMs: 250 },
    );
    assert.equal(repaired, original);
    // The repair is reported to the VaultPolicy's owners as a Warning event.
    await waitFor(
      async () => {
        const list = (await stack.cp.request('GET', `/apis/events.k8s.io/v1/namespaces/${NS}/events`)).body as {
          items?: Array<{ reason?: string; type?: string; regarding?: { name?: string } }>;
        };
        return list.items?.some(
          (e) => e.reason === 'DriftRepaired' && e.type === 'Warning' && e.regarding?.name === 'app-read',
        )
          ? true
          : undefined;
      },
      { what: 'a DriftRepaired event on the VaultPolicy', timeoutMs: 15_000, intervalMs: 250 },
    );
  });

  void test('a policy deleted directly in Vault is recreated', async () => {
    const original = await policyText();
    assert.equal((await stack.vaultRoot('DELETE', `sys/policies/acl/${POLICY}`)).status, 204);
    const back = await waitFor(async () => policyText(), {
      what: 'the deleted policy to be recreated',
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    assert.equal(back, original);
  });

  void test('a role rebound to every ServiceAccount directly in Vault is put back', async () => {
    const read = async (): Promise<Record<string, unknown> | undefined> => {
      const r = await stack.vaultRoot('GET', `auth/kubernetes/role/${ROLE}`);
      return r.status === 200 ? (r.body as { data: Record<string, unknown> }).data : undefined;
    };
    assert.deepEqual((await read())?.bound_service_account_names, ['app-reader']);
    await stack.vaultRoot('POST', `auth/kubernetes/role/${ROLE}`, {
      bound_service_account_names: ['*'],
      bound_service_account_namespaces: ['*', NS],
    });
    const repaired = await waitFor(
      async () => {
        const d = await read();
        return d &&
          JSON.stringify(d.bound_service_account_names) === '["app-reader"]' &&
          JSON.stringify(d.bound_service_account_namespaces) === `["${NS}"]`
          ? d
          : undefined;
      },
      { what: 'the drift check to restore the role', timeoutMs: 30_000, intervalMs: 250 },
    );
    assert.deepEqual(repaired.token_policies, [POLICY]);
  });

  void test('a synced Secret deleted by hand is recreated with the Vault data', async () => {
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
                  role: ROLE,
                  serviceAccountRef: { name: 'app-reader', audiences: ['vault'] },
                },
              },
            },
          },
        },
      },
      {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: { name: 'app-db', namespace: NS },
        // A long refresh: the recreation must come from watching the Secret, not from the next refresh.
        spec: {
          refreshInterval: '1h',
          secretStoreRef: { name: 'vault-backend', kind: 'SecretStore' },
          target: { name: 'app-db' },
          data: [{ secretKey: 'password', remoteRef: { key: 'team-a/app/db', property: 'password' } }],
        },
      },
    ]);
    const first = await waitForObject<SecretObj & Record<string, unknown>>(
      stack,
      'secret',
      'app-db',
      NS,
      (s) => s !== undefined,
      'Secret app-db',
    );
    assert.ok(first);
    await stack.cp.kubectl(['delete', 'secret', 'app-db', '-n', NS]);
    const again = await waitForObject<SecretObj & Record<string, unknown>>(
      stack,
      'secret',
      'app-db',
      NS,
      (s) => s !== undefined && s.metadata.uid !== first.metadata.uid,
      'Secret app-db to be recreated',
    );
    assert.equal(Buffer.from(again?.data?.password ?? '', 'base64').toString('utf8'), 'drift-test-password');
  });
});
