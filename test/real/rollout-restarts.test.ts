// Rollout restarts on the real apiserver and kube-controller-manager's Deployment and ReplicaSet controllers (issue #23 item 4): a Deployment
// consuming the Secret an ExternalSecret syncs from OpenBao 2.7.2, opted in with
// vaultgate.io/rollout-restart-targets, is restarted exactly once per data change (two changes inside the
// coalescing window: one restart), never for unchanged data (refreshes every second), never after a
// controller restart; settled() says `rolling` from the data change until the Deployment controller has
// observed the restarted template, then `settled`. Without a kubelet the Deployment has 0 replicas, so a
// restart is counted as what the Deployment controller does with it: one new ReplicaSet per template
// (not metadata.generation: a Deployment's generation also counts annotation changes, kubernetes
// pkg/registry/apps/deployment/strategy.go, and the coordinator's record is an annotation).
// The controller runs in this process (buildControllerApp, as the CLI builds it) so the test can ask its
// coordinator settled(); its "restart" is a new app: new manager, caches, key read from its Secret.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadKubeConfig } from '../../cli/commands/kubeconfig.ts';
import { buildControllerApp, type ControllerApp } from '../../controller/main.ts';
import { RECORD_ANNOTATION, TEMPLATE_ANNOTATION } from '../../controller/rollouts/plan.ts';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import { createWriteStream } from 'node:fs';
import { createLogger } from '../../observability/log.ts';
import { CONTROLLERS } from '../harness/controller-manager.ts';
import { type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import { realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-a';
const POLICY = { coalesceMs: 5_000, cooldownMs: 15_000, maxConcurrent: 2 };
const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

interface Deployment {
  metadata: { generation: number; annotations?: Record<string, string> };
  spec: { template: { metadata?: { annotations?: Record<string, string> } } };
  status?: { observedGeneration?: number };
}

void describe("real tier: rollout restarts of an opted-in ExternalSecret's Deployment", { skip: tier.skip }, () => {
  let stack: E2EStack;
  let app: ControllerApp | undefined;
  const target = [{ kind: 'Deployment' as const, name: 'app' }];

  const startApp = async (): Promise<ControllerApp> => {
    const a = buildControllerApp({
      client: new HttpKubeClient(loadKubeConfig(stack.cp.kubeconfigPath)),
      vault: { address: stack.vault.addr, auth: { method: 'token', token: stack.vault.rootToken } },
      rolloutRestarts: { namespace: 'vaultgate-system', policy: POLICY },
      informer: { resyncMs: 0 },
      // The controller's log, for a failure's diagnosis (VAULTGATE_ROLLOUT_TEST_LOG=<file>).
      ...(process.env.VAULTGATE_ROLLOUT_TEST_LOG
        ? {
            log: createLogger({
              level: 'debug',
              destination: createWriteStream(process.env.VAULTGATE_ROLLOUT_TEST_LOG, { flags: 'a' }),
            }),
          }
        : {}),
    });
    await a.start();
    return a;
  };
  const deployment = async (): Promise<Deployment> => {
    const res = await stack.cp.request('GET', `/apis/apps/v1/namespaces/${NS}/deployments/app`);
    assert.equal(res.status, 200);
    return res.body as Deployment;
  };
  const replicaSets = async (): Promise<number> => {
    const res = await stack.cp.request('GET', `/apis/apps/v1/namespaces/${NS}/replicasets`);
    return (res.body as { items: unknown[] }).items.length;
  };
  const templateValue = (d: Deployment): string | undefined =>
    d.spec.template.metadata?.annotations?.[TEMPLATE_ANNOTATION];
  const setPassword = (password: string): Promise<unknown> =>
    stack.vaultRoot('POST', 'secret/data/team-a/app/db', { data: { username: 'app', password } });
  const secretPassword = async (): Promise<string | undefined> => {
    const res = await stack.cp.request('GET', `/api/v1/namespaces/${NS}/secrets/app-db`);
    const data = (res.body as { data?: Record<string, string> }).data;
    return res.status === 200 && data?.password ? Buffer.from(data.password, 'base64').toString() : undefined;
  };

  before(async () => {
    // The Deployment and ReplicaSet controllers too: they turn a restarted template into a ReplicaSet and observe it.
    stack = await startE2E({
      controllerManager: { controllers: [...CONTROLLERS, 'deployment-controller', 'replicaset-controller'] },
      controller: false,
    });
    await stack.cp.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app-reader', namespace: NS } },
    ]);
    await setPassword('first');
    app = await startApp();
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
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'app', namespace: NS },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'app' } },
          template: {
            metadata: { labels: { app: 'app' } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'registry.invalid/app:1',
                  env: [{ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'app-db', key: 'password' } } }],
                },
              ],
            },
          },
        },
      },
      {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: {
          name: 'app-db',
          namespace: NS,
          annotations: { 'vaultgate.io/rollout-restart-targets': 'deployment/app' },
        },
        spec: {
          refreshInterval: '1s',
          secretStoreRef: { name: 'vault-backend', kind: 'SecretStore' },
          target: { name: 'app-db' },
          data: [
            { secretKey: 'username', remoteRef: { key: 'team-a/app/db', property: 'username' } },
            { secretKey: 'password', remoteRef: { key: 'team-a/app/db', property: 'password' } },
          ],
        },
      },
    ]);
  });
  after(async () => {
    await app?.stop();
    await stack?.stop();
  });

  test("an ExternalSecret naming another namespace's workload is refused at admission with the field and the rule", async () => {
    const err = await stack
      .kubectlApply({
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: {
          name: 'other',
          namespace: NS,
          annotations: { 'vaultgate.io/rollout-restart-targets': 'deployment/team-b/app' },
        },
        spec: {
          secretStoreRef: { name: 'vault-backend', kind: 'SecretStore' },
          target: { name: 'other' },
          data: [{ secretKey: 'p', remoteRef: { key: 'team-a/app/db', property: 'password' } }],
        },
      })
      .then(
        () => '',
        (e: unknown) => String(e),
      );
    assert.match(
      err,
      /metadata\.annotations\[vaultgate\.io\/rollout-restart-targets\].*names another namespace.*eso\.es\.rollout-targets/s,
    );
  });

  test('first sight: recorded without a restart; settled', async () => {
    await waitFor(async () => (await secretPassword()) === 'first' || undefined, {
      what: 'the Secret synced',
      timeoutMs: 60_000,
    });
    const d = await waitFor(
      async () => {
        const x = await deployment();
        return x.metadata.annotations?.[RECORD_ANNOTATION] ? x : undefined;
      },
      { what: 'the record on the Deployment', timeoutMs: 30_000 },
    );
    assert.equal(d.spec.template.metadata?.annotations?.[TEMPLATE_ANNOTATION], undefined);
    await waitFor(async () => (await app!.rollouts!.settled(NS, target, 'app-db')) === 'settled' || undefined, {
      what: 'settled',
      timeoutMs: 30_000,
    });
    assert.equal(await replicaSets(), 1);
  });

  test('two changes two seconds apart (inside the window): one restart; settled() rolling until the Deployment controller observed it', async () => {
    const t0 = performance.now();
    await setPassword('second');
    await waitFor(async () => (await secretPassword()) === 'second' || undefined, {
      what: 'the Secret changed',
      timeoutMs: 30_000,
    });
    const states: string[] = [await app!.rollouts!.settled(NS, target, 'app-db')];
    await setPassword('third');
    await waitFor(async () => (await secretPassword()) === 'third' || undefined, {
      what: 'the Secret changed again',
      timeoutMs: 30_000,
    });
    for (;;) {
      const s = await app!.rollouts!.settled(NS, target, 'app-db');
      if (states.at(-1) !== s) states.push(s);
      const d = await deployment();
      if (s === 'settled') {
        assert.ok(d.spec.template.metadata?.annotations?.[TEMPLATE_ANNOTATION], 'settled only once restarted');
        assert.ok(
          (d.status?.observedGeneration ?? 0) >= d.metadata.generation,
          'settled only once the Deployment controller observed the restart',
        );
        break;
      }
      assert.ok(performance.now() - t0 < 60_000, `no settle within 60 s: ${states.join(' → ')}`);
      await sleep(100);
    }
    log(`[rollout] data change → settled in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${states.join(' → ')}`);
    assert.deepEqual(states, ['rolling', 'settled']);
    assert.equal(await replicaSets(), 2, 'one new ReplicaSet: one restart for two changes');
    assert.match(
      (await deployment()).spec.template.metadata?.annotations?.[TEMPLATE_ANNOTATION] ?? '',
      /^v1\.[A-Za-z0-9_-]{43}$/,
    );
    const metrics = await app!.registry.metrics();
    assert.match(metrics, /vaultgate_rollout_restarts_total\{namespace="team-a",kind="Deployment"\} 1\b/);
    assert.match(metrics, /vaultgate_rollout_coalesced_total\{namespace="team-a",kind="Deployment"\} 1\b/);
    assert.match(metrics, /vaultgate_rollout_duration_seconds_count\{kind="Deployment"\} 1\b/);
  });

  test('unchanged data (refreshed every second) and a controller restart: no restart', async () => {
    const before = templateValue(await deployment());
    await sleep(10_000);
    assert.equal(await replicaSets(), 2, 'refreshes of unchanged data restarted it');
    await app!.stop();
    app = await startApp();
    await sleep(10_000);
    assert.equal(await replicaSets(), 2, 'a controller restart restarted it');
    assert.equal(templateValue(await deployment()), before);
    assert.equal(await app.rollouts!.settled(NS, target, 'app-db'), 'settled');
  });

  test('the next change, after the cool-down: exactly one more restart', async () => {
    await setPassword('fourth');
    await waitFor(async () => (await replicaSets()) === 3 || undefined, {
      what: 'the third template',
      timeoutMs: 60_000,
    });
    await waitFor(async () => (await app!.rollouts!.settled(NS, target, 'app-db')) === 'settled' || undefined, {
      what: 'settled',
      timeoutMs: 30_000,
    });
    await sleep(6_000);
    assert.equal(await replicaSets(), 3);
  });
});
