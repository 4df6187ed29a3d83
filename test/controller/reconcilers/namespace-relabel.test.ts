// Issue #12 item 2: labels pick guardrails, so a namespace relabel re-checks that namespace's
// VaultPolicies and VaultRoleBindings at once (controller/main.ts watches Namespaces), not at the next
// drift check (5 min ±10% by default; 10 min here, so only the watch can explain a prompt re-check).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildControllerApp } from '../../../controller/main.ts';
import { nullRecorder } from '../../../kube/events.ts';
import { NAMESPACES } from '../../../kube/resources.ts';
import { VAULT_GUARDRAILS, VAULT_POLICIES, VAULT_ROLE_BINDINGS } from '../../../schemas/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { createVaultClient } from '../../../vault/client.ts';
import { createSysApi } from '../../../vault/sys.ts';
import type { VaultRequest } from '../../../vault/types.ts';
import { FakeKubeClient } from '../../sim/kube-fake-client.ts';
import { KubeStore } from '../../sim/kube-store.ts';
import { VaultSim } from '../../sim/vault.ts';

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const readyOf = (o: KubeObject | undefined) =>
  (
    o?.status as { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } | undefined
  )?.conditions?.find((c) => c.type === 'Ready');

const NS = 'team-n';
const G = 'vaultgate.io/v1alpha1';

void test('relabelling a namespace re-checks its VaultPolicies and VaultRoleBindings at once', async () => {
  const store = new KubeStore({ namespaces: ['default', NS] });
  const kube = new FakeKubeClient({ store });
  const sim = await VaultSim.start();
  const root = createVaultClient({ address: sim.addr, timeoutMs: 2000 });
  const sys = createSysApi({ request: <T>(req: VaultRequest) => root.request<T>({ ...req, token: sim.rootToken }) });
  const app = buildControllerApp({
    client: kube,
    vault: { address: sim.addr, auth: { method: 'token', token: sim.rootToken }, timeoutMs: 2000 },
    workers: 2,
    events: nullRecorder,
    driftCheckMs: 600_000,
  });
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    await kube.patch(NAMESPACES, NS, undefined, { metadata: { labels: { 'vaultgate.io/tier': 'trusted' } } }, 'merge');
    // The cluster admin's guardrails: trusted namespaces may also read the shared tree (an enforce
    // relaxation of the floor); namespaces labelled vaultgate.io/ttl=short get tokens of at most 2h.
    await kube.create(VAULT_GUARDRAILS, {
      apiVersion: G,
      kind: 'VaultGuardrail',
      metadata: { name: 'trusted' },
      spec: {
        namespaceSelector: { matchLabels: { 'vaultgate.io/tier': 'trusted' } },
        mode: 'enforce',
        relaxFloor: ['namespace-subtree'],
        allowedPaths: ['secret/data/{{namespace}}/*', 'secret/data/shared/*'],
      },
    });
    await kube.create(VAULT_GUARDRAILS, {
      apiVersion: G,
      kind: 'VaultGuardrail',
      metadata: { name: 'short-ttl' },
      spec: {
        namespaceSelector: { matchLabels: { 'vaultgate.io/ttl': 'short' } },
        mode: 'enforce',
        maxTokenTTL: '2h',
      },
    });
    await kube.create(VAULT_POLICIES, {
      apiVersion: G,
      kind: 'VaultPolicy',
      metadata: { name: 'shared', namespace: NS },
      spec: { rules: [{ path: 'secret/data/shared/*', capabilities: ['read'] }] },
    });
    await kube.create(VAULT_POLICIES, {
      apiVersion: G,
      kind: 'VaultPolicy',
      metadata: { name: 'own', namespace: NS },
      spec: { rules: [{ path: `secret/data/${NS}/*`, capabilities: ['read'] }] },
    });
    await kube.create(VAULT_ROLE_BINDINGS, {
      apiVersion: G,
      kind: 'VaultRoleBinding',
      metadata: { name: 'app', namespace: NS },
      spec: { serviceAccounts: ['app'], policies: ['own'], tokenTTL: '1h', tokenMaxTTL: '4h' },
    });
    await app.start();
    await until(
      async () => readyOf(await kube.get(VAULT_POLICIES, 'shared', NS))?.status === 'True',
      'VaultPolicy shared Ready',
    );
    await until(
      async () => readyOf(await kube.get(VAULT_ROLE_BINDINGS, 'app', NS))?.status === 'True',
      'VaultRoleBinding Ready',
    );
    assert.ok(await sys.readPolicy(`vaultgate.${NS}.shared`));
    assert.ok(await sys.readKubernetesRole('kubernetes', `vaultgate.${NS}.app`));

    // Whoever may label the namespace moves it out of the relaxation and into the short-TTL guardrail.
    await kube.patch(
      NAMESPACES,
      NS,
      undefined,
      { metadata: { labels: { 'vaultgate.io/tier': null, 'vaultgate.io/ttl': 'short' } } },
      'merge',
    );
    await until(
      async () => readyOf(await kube.get(VAULT_POLICIES, 'shared', NS))?.status === 'False',
      'VaultPolicy shared re-checked after the relabel',
    );
    await until(
      async () => readyOf(await kube.get(VAULT_ROLE_BINDINGS, 'app', NS))?.status === 'False',
      'VaultRoleBinding re-checked after the relabel',
    );
    assert.equal(
      await sys.readPolicy(`vaultgate.${NS}.shared`),
      undefined,
      'the relaxation is gone, and with it the access',
    );
    assert.equal(
      await sys.readKubernetesRole('kubernetes', `vaultgate.${NS}.app`),
      undefined,
      'tokenMaxTTL 4h exceeds the new guardrail',
    );
    assert.match(
      readyOf(await kube.get(VAULT_ROLE_BINDINGS, 'app', NS))?.message ?? '',
      /rule guardrail\.max-token-ttl/,
    );
    assert.equal(readyOf(await kube.get(VAULT_POLICIES, 'own', NS))?.status, 'True', 'an allowed policy is unaffected');
  } finally {
    await app.stop();
    clearInterval(keepAlive);
    root.close();
    await sim.stop();
  }
});
