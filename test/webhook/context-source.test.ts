// The webhook's admission context over informer caches: what a review sees follows the cluster
// (guardrails, namespace labels, policies, store classes), even though the context object is reused
// between guardrail changes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { NAMESPACES } from '../../kube/index.ts';
import { SECRET_STORES, VAULT_GUARDRAILS, VAULT_POLICIES, VAULT_ROLE_BINDINGS } from '../../schemas/resources.ts';
import { silentLogger } from '../../observability/log.ts';
import { createContextSource } from '../../webhook/context-source.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

/** Polls (no fixed sleep) until the informers have delivered what `ok` waits for. */
async function until(ok: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

void describe('admission context source', () => {
  void test('follows guardrail, namespace, policy and store changes', async () => {
    const kube = new FakeKubeClient();
    const source = createContextSource({
      client: kube,
      namePrefix: 'vg',
      controllerClass: 'ours',
      logger: silentLogger,
    });
    source.start();
    try {
      await until(() => source.synced(), 'caches synced');
      const before = source.context();
      assert.deepEqual(before.guardrails, []);
      assert.equal(before.namePrefix, 'vg');
      assert.equal(before.controllerClass, 'ours');
      assert.equal(source.context(), before, 'nothing changed: the same context serves the next review');

      await kube.create(VAULT_GUARDRAILS, {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultGuardrail',
        metadata: { name: 'strict' },
        spec: { mode: 'warn' },
      });
      await until(() => source.context().guardrails.length === 1, 'the new guardrail');
      assert.equal(source.context().guardrails[0]?.metadata.name, 'strict');

      await kube.create(NAMESPACES, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team-a', labels: { tier: 'gold' } },
      });
      await until(() => source.context().namespaceLabels('team-a') !== undefined, 'the namespace');
      assert.deepEqual(source.context().namespaceLabels('team-a'), {
        tier: 'gold',
        'kubernetes.io/metadata.name': 'team-a',
      });

      const ctx = source.context();
      assert.equal(ctx.policyExists?.('team-a', 'app'), false);
      await kube.create(VAULT_POLICIES, {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'app', namespace: 'team-a' },
        spec: { rules: [{ path: 'secret/data/team-a/*', capabilities: ['read'] }] },
      });
      await until(() => ctx.policyExists?.('team-a', 'app') === true, 'the policy');

      await kube.create(SECRET_STORES, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault', namespace: 'team-a' },
        spec: {
          controller: 'theirs',
          provider: { vault: { server: 'https://v', auth: { tokenSecretRef: { name: 't', key: 'k' } } } },
        },
      });
      await until(
        () => ctx.storeControllerClass?.({ kind: 'SecretStore', name: 'vault', namespace: 'team-a' }) === 'theirs',
        'the store',
      );

      await kube.delete(VAULT_GUARDRAILS, 'strict');
      await until(() => source.context().guardrails.length === 0, 'the guardrail deletion');
    } finally {
      await source.stop();
    }
  });

  void test('serves VaultPolicies, VaultRoleBindings and stores whole (the VaultDynamicSecret access rules), known absent once listed', async () => {
    const kube = new FakeKubeClient();
    const source = createContextSource({ client: kube, namePrefix: 'vg', controllerClass: '', logger: silentLogger });
    source.start();
    try {
      await until(
        () => source.synced() && source.context().vaultRoleBinding?.('team-a', 'app') !== undefined,
        'caches',
      );
      const ctx = source.context();
      assert.equal(ctx.vaultRoleBinding?.('team-a', 'app'), null, 'listed and absent: null, not unknown');
      assert.equal(ctx.vaultPolicy?.('team-a', 'creds'), null);
      await kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
      await kube.create(VAULT_ROLE_BINDINGS, {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultRoleBinding',
        metadata: { name: 'app', namespace: 'team-a' },
        spec: { serviceAccounts: ['app'], policies: ['creds'], tokenMaxTTL: '1h' },
      });
      await kube.create(VAULT_POLICIES, {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'creds', namespace: 'team-a' },
        spec: { rules: [{ path: 'database/creds/app', capabilities: ['read'] }] },
      });
      await kube.create(SECRET_STORES, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault', namespace: 'team-a' },
        spec: { provider: { vault: { server: 'https://v', auth: { kubernetes: { role: 'vg.team-a.app' } } } } },
      });
      await until(
        () =>
          Boolean(ctx.vaultRoleBinding?.('team-a', 'app')) &&
          Boolean(ctx.vaultPolicy?.('team-a', 'creds')) &&
          Boolean(ctx.secretStore?.('SecretStore', 'vault', 'team-a')),
        'the binding, policy and store',
      );
      const binding = ctx.vaultRoleBinding?.('team-a', 'app') as { spec: { tokenMaxTTL: string } };
      assert.equal(binding.spec.tokenMaxTTL, '1h');
      assert.equal(ctx.secretStore?.('SecretStore', 'vault', 'team-b'), null);
      assert.equal(ctx.secretStore?.('SecretStore', 'vault'), undefined, 'a SecretStore needs its namespace');
    } finally {
      await source.stop();
    }
  });

  void test('a namespaced install does not claim to know objects of namespaces it does not read', async () => {
    const kube = new FakeKubeClient();
    const source = createContextSource({
      client: kube,
      namePrefix: 'vg',
      controllerClass: '',
      namespaces: ['team-a'],
      logger: silentLogger,
    });
    source.start();
    try {
      await until(() => source.synced() && source.context().vaultRoleBinding?.('team-a', 'x') !== undefined, 'caches');
      const ctx = source.context();
      assert.equal(ctx.vaultRoleBinding?.('team-a', 'x'), null);
      assert.equal(ctx.vaultRoleBinding?.('team-b', 'x'), undefined);
      assert.equal(ctx.secretStore?.('ClusterSecretStore', 'shared'), undefined, 'no ClusterSecretStore cache');
    } finally {
      await source.stop();
    }
  });
});
