// Real tier: a VaultGuardrail's status as `kubectl get vaultguardrails` shows it on a real apiserver with
// the generated CRD (printer columns): READY=True once the controller has seen it, and NAMESPACES
// following the namespaces' labels (one relabel moves the count, both ways).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import { realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const GUARDRAIL = 'prod-floor';

void describe('VaultGuardrail status: READY and the namespace count in kubectl get', { skip: tier.skip }, () => {
  let stack: E2EStack;

  /** The row of `kubectl get vaultguardrails`, by column header. */
  const row = async (): Promise<Record<string, string>> => {
    const out = await stack.cp.kubectl(['get', 'vaultguardrails', GUARDRAIL]);
    const [header = '', line = ''] = out.trim().split('\n');
    const names = header.trim().split(/\s+/);
    const values = line.trim().split(/\s+/);
    return Object.fromEntries(names.map((n, i) => [n, values[i] ?? '']));
  };
  const until = async (want: Record<string, string>, what: string): Promise<Record<string, string>> => {
    let last: Record<string, string> = {};
    try {
      return await waitFor(
        async () => {
          last = await row();
          return Object.entries(want).every(([k, v]) => last[k] === v) ? last : undefined;
        },
        { what, timeoutMs: 30_000, intervalMs: 250 },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\nlast row: ${JSON.stringify(last)}\n${stack.diagnostics()}`);
    }
  };

  before(async () => {
    stack = await startE2E();
    await stack.cp.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { tier: 'prod' } } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b', labels: { tier: 'dev' } } },
    ]);
  });
  after(async () => {
    await stack?.stop();
  });

  void test('a new guardrail is READY=True with the count of namespaces its selector picks', async () => {
    await stack.kubectlApply({
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultGuardrail',
      metadata: { name: GUARDRAIL },
      spec: { namespaceSelector: { matchLabels: { tier: 'prod' } }, relaxFloor: ['sudo'], forbiddenCapabilities: [] },
    });
    const r = await until({ READY: 'True', NAMESPACES: '1' }, 'READY=True, NAMESPACES=1');
    assert.equal(r.MODE, 'enforce');
    const g = await stack.getJson<{
      metadata: { generation: number };
      status: { observedGeneration: number; floor: { relaxed?: string[]; forbiddenCapabilities?: string[] } };
    }>('vaultguardrail', GUARDRAIL);
    assert.equal(g?.status.observedGeneration, g?.metadata.generation);
    assert.deepEqual(g?.status.floor.relaxed, ['sudo']);
    assert.equal(g?.status.floor.forbiddenCapabilities, undefined, 'sudo relaxed: the floor forbids no capability');
  });

  void test('labelling a namespace into the selector raises the count, labelling one out lowers it', async () => {
    await stack.cp.kubectl(['label', 'namespace', 'team-b', 'tier=prod', '--overwrite']);
    await until({ READY: 'True', NAMESPACES: '2' }, 'NAMESPACES=2 after team-b is labelled tier=prod');
    await stack.cp.kubectl(['label', 'namespace', 'team-a', 'tier-']);
    await stack.cp.kubectl(['label', 'namespace', 'team-b', 'tier-']);
    await until({ READY: 'True', NAMESPACES: '0' }, 'NAMESPACES=0 after both labels are removed');
  });

  void test('a spec change is reported for its generation', async () => {
    await stack.kubectlApply({
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultGuardrail',
      metadata: { name: GUARDRAIL },
      spec: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } } },
    });
    await until({ READY: 'True', NAMESPACES: '1' }, 'NAMESPACES=1 for a selector on the namespace name');
    const g = await stack.getJson<{
      metadata: { generation: number };
      status: { observedGeneration: number; floor: { relaxed?: string[]; forbiddenCapabilities?: string[] } };
    }>('vaultguardrail', GUARDRAIL);
    assert.equal(g?.status.observedGeneration, g?.metadata.generation);
    assert.equal(g?.status.floor.relaxed, undefined, 'nothing relaxed any more');
    assert.deepEqual(g?.status.floor.forbiddenCapabilities, ['sudo']);
  });
});
