// `helm install` runs real pods (issue #15): a one-node cluster (kubelet on containerd, kube-scheduler,
// kube-proxy, bridge CNI; test/harness/node/) with the image the Dockerfile describes, built here without
// Docker (test/image/), and the chart unchanged but for the image reference and pull policy. OpenBao 2.7.2
// is real and listens on the node IP, where the pods reach it. What a user would notice is checked:
// pods Running and Ready behind their probes with a read-only root and uid 65532; the apiserver calls
// the webhook through its Service; a bad VaultPolicy refused, a good one written to Vault; a killed
// leader replaced within the lease timings with never two leaders; no failed admission call while a
// webhook pod is deleted under load or while `helm upgrade` rolls the pods; `helm uninstall` leaves no
// pods and keeps the CRDs. Figures (pod start to Ready, takeover, failed calls) are printed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildVaultgateImage, REPO_ROOT, type VaultgateImage } from '../image/images.ts';
import { ctr } from '../harness/node/containerd.ts';
import { type NodeCluster, startNodeCluster } from '../harness/node/cluster.ts';
import { NODE_IP, POD_CIDR } from '../harness/node/layout.ts';
import { nodeTier } from '../harness/node/tier.ts';
import {
  CHART,
  grantControllerVaultIdentity,
  helmInstall,
  imageValues,
  RELEASE,
  RELEASE_NS,
} from '../harness/node/vaultgate-release.ts';
import { CommandError } from '../harness/tools.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await nodeTier();
const NS = 'team-a';
const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

interface Pod {
  metadata: {
    name: string;
    uid: string;
    creationTimestamp: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  spec: {
    nodeName?: string;
    containers: Array<{
      image: string;
      imagePullPolicy: string;
      securityContext?: { readOnlyRootFilesystem?: boolean; runAsNonRoot?: boolean };
    }>;
    securityContext?: { runAsUser?: number };
  };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: Array<{ type: string; status: string }>;
    containerStatuses?: Array<{
      containerID?: string;
      image: string;
      ready: boolean;
      restartCount: number;
      state?: { running?: unknown };
    }>;
  };
}

// The drain answers `Connection: close` (webhook/http-app.ts), so the apiserver's pooled keep-alive
// connections to a terminating pod are not reused into the final close() (kubernetes#127335); before
// that fix 1 of 288 calls failed here when a webhook pod was deleted under load.

const isReady = (p: Pod): boolean =>
  !p.metadata.deletionTimestamp && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

const policy = (name: string): Record<string, unknown> => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: NS },
  spec: { rules: [{ path: 'secret/data/{{namespace}}/app/*', capabilities: ['read'] }] },
});

/**
 * Steady admission load: dry-run creates of a valid VaultPolicy, one after another on 2 lanes, until
 * stopped (bounded to `maxSeconds`). A call counts as failed unless the apiserver admits it (201): with
 * failurePolicy Fail, any webhook pod the apiserver could not reach or that dropped the call shows here.
 */
function admissionLoad(
  cluster: NodeCluster,
  maxSeconds = 300,
): { stop: () => Promise<{ ok: number; failed: number; failures: string[] }> } {
  let running = true;
  const res = { ok: 0, failed: 0, failures: [] as string[] };
  const deadline = Date.now() + maxSeconds * 1000;
  const lane = async (): Promise<void> => {
    let i = 0;
    while (running && Date.now() < deadline) {
      const r = await cluster.cp
        .request('POST', `/apis/vaultgate.io/v1alpha1/namespaces/${NS}/vaultpolicies?dryRun=All`, policy(`load-${i++}`))
        .catch((e: unknown) => ({ status: 0, text: String(e) }));
      if (r.status === 201) res.ok++;
      else {
        res.failed++;
        if (res.failures.length < 5) res.failures.push(`${r.status} ${r.text.slice(0, 700)}`);
      }
      await sleep(25);
    }
  };
  const lanes = [lane(), lane()];
  return {
    stop: async () => {
      running = false;
      await Promise.all(lanes);
      return res;
    },
  };
}

void describe(
  'helm install runs real pods: one-node cluster, the image built here, real OpenBao',
  { skip: tier.skip },
  () => {
    let cluster: NodeCluster;
    let image: VaultgateImage;
    const figures: Record<string, string> = {};

    const pods = async (component: 'webhook' | 'controller'): Promise<Pod[]> => {
      const res = await cluster.cp.request(
        'GET',
        `/api/v1/namespaces/${RELEASE_NS}/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=${component}`)}`,
      );
      assert.equal(res.status, 200, res.text);
      return (res.body as { items: Pod[] }).items;
    };
    const diagnostics = (): string =>
      [
        ...['webhook', 'controller'].map((c) => cluster.podLogs(RELEASE_NS, `${RELEASE}-${c}`, 15)),
        `--- kubelet\n${cluster.componentLog('kubelet', 15)}`,
      ].join('\n');
    const leaseHolder = async (): Promise<string> => {
      const res = await cluster.cp.request(
        'GET',
        `/apis/coordination.k8s.io/v1/namespaces/${RELEASE_NS}/leases/${RELEASE}-controller`,
      );
      return res.status === 200
        ? String((res.body as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? '')
        : '';
    };
    /** Controllers whose /metrics say they lead (pod IP, port 8080): never more than one. */
    const leaders = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const p of await pods('controller')) {
        if (!p.status.podIP || p.metadata.deletionTimestamp) continue;
        const text = await fetch(`http://${p.status.podIP}:8080/metrics`, { signal: AbortSignal.timeout(1500) }).then(
          (r) => r.text(),
          () => '',
        );
        if (/^leader_election_master_status\{[^}]*\} 1$/m.test(text)) out.push(p.metadata.name);
      }
      return out;
    };

    before(
      async () => {
        image = await buildVaultgateImage({ log });
        cluster = await startNodeCluster({ images: [image], log });
        await cluster.cp.startVault({ host: NODE_IP });
        await grantControllerVaultIdentity(cluster.cp);
        await cluster.cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      },
      { timeout: 900_000 },
    );
    after(async () => {
      const left = await cluster?.stop();
      log(`[pods] figures: ${JSON.stringify(figures)}`);
      assert.deepEqual(left ?? [], [], 'the node stack leaves nothing behind');
    });

    void test('helm install --wait: 2 webhook and 2 controller pods Running and Ready, from the image built here, read-only root, uid 65532', async () => {
      const t = performance.now();
      const firstReady = new Map<string, number>();
      const firstSeen = new Map<string, number>();
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          for (const p of [...(await pods('webhook')), ...(await pods('controller'))]) {
            if (!firstSeen.has(p.metadata.name)) firstSeen.set(p.metadata.name, performance.now());
            if (isReady(p) && !firstReady.has(p.metadata.name)) firstReady.set(p.metadata.name, performance.now());
          }
          await sleep(200);
        }
      })();
      const out = await helmInstall(cluster.cp, image)
        .catch((e: unknown) => {
          throw new Error(`${(e as Error).message}\n${diagnostics()}`);
        })
        .finally(() => {
          watching = false;
        });
      await watcher;
      assert.match(out, /STATUS: deployed/);
      figures['helm install --wait'] = `${((performance.now() - t) / 1000).toFixed(1)}s`;
      for (const component of ['webhook', 'controller'] as const) {
        const ps = (await pods(component)).filter(isReady);
        assert.equal(ps.length, 2, `2 ${component} pods Ready`);
        for (const p of ps) {
          assert.equal(p.status.phase, 'Running');
          assert.equal(p.spec.nodeName, cluster.nodeName);
          assert.ok(
            p.status.podIP?.startsWith(POD_CIDR.split('.').slice(0, 3).join('.')),
            `pod IP ${p.status.podIP} in the harness's pod range`,
          );
          const c = p.spec.containers[0];
          assert.equal(c?.image, image.ref, 'the image built here');
          assert.equal(c?.imagePullPolicy, 'Never');
          assert.equal(
            c?.securityContext?.readOnlyRootFilesystem,
            true,
            'the chart keeps the root filesystem read-only',
          );
          assert.equal(p.spec.securityContext?.runAsUser, 65532);
          assert.equal(p.status.containerStatuses?.[0]?.restartCount, 0, `${p.metadata.name} never restarted`);
        }
        const times = ps.map(
          (p) => ((firstReady.get(p.metadata.name) ?? NaN) - (firstSeen.get(p.metadata.name) ?? NaN)) / 1000,
        );
        figures[`${component} pod created→Ready`] = times.map((x) => `${x.toFixed(1)}s`).join(', ');
      }
      // The process in the container really is uid 65532 and cannot write its root filesystem.
      const cid =
        (await pods('controller'))[0]?.status.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, '') ??
        '';
      const probe = ctr([
        'tasks',
        'exec',
        '--exec-id',
        `probe-${Date.now()}`,
        cid,
        'node',
        '-e',
        "let w='writable';try{require('fs').writeFileSync('/app/x','x')}catch(e){w=e.code}console.log(process.getuid()+' '+w)",
      ]);
      assert.equal(probe.trim(), '65532 EROFS');
    });

    void test('the apiserver calls the webhook through its Service: a bad VaultPolicy is refused, a good one is written to OpenBao', async () => {
      const cfg = JSON.parse(
        await cluster.cp.kubectl([
          'get',
          'validatingwebhookconfigurations',
          '-l',
          `app.kubernetes.io/instance=${RELEASE}`,
          '-o',
          'json',
        ]),
      ) as {
        items: Array<{
          webhooks: Array<{ clientConfig: { url?: string; service?: { name: string; namespace: string } } }>;
        }>;
      };
      const hooks = cfg.items.flatMap((i) => i.webhooks);
      assert.ok(
        hooks.length > 0 && hooks.every((h) => h.clientConfig.service && !h.clientConfig.url),
        'clientConfig.service, no url',
      );
      const refused = await cluster.cp
        .kubectl(['apply', '-f', join(REPO_ROOT, 'examples/bad-vaultpolicy-sudo-sys.yaml')])
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(refused instanceof CommandError, 'the bad VaultPolicy is refused');
      assert.match(
        refused.stderr,
        new RegExp(`admission webhook "vaultgate\\.validate\\.${RELEASE}\\.vaultgate\\.io" denied the request`),
      );
      assert.match(refused.stderr, /"sudo" is forbidden .*\(rule guardrail\.forbidden-capability\)/);
      await cluster.cp.kubectl(['apply', '-f', join(REPO_ROOT, 'examples/vaultpolicy.yaml')]);
      await cluster.cp
        .kubectl(['wait', '--for=condition=Ready', '--timeout=120s', '-n', NS, 'vp/app-read'])
        .catch((e: unknown) => {
          throw new Error(`${(e as Error).message}\n${diagnostics()}`);
        });
      const hcl = await cluster.cp.bao(['policy', 'read', 'vaultgate.team-a.app-read']);
      assert.match(hcl, /secret\/data\/team-a\/app\/\*/);
    });

    void test("kill the leader controller's process: a new controller takes over within the lease timings, never two leaders", async () => {
      const holder = await leaseHolder();
      const leaderPod = (await pods('controller')).find((p) => holder.startsWith(`${p.metadata.name}_`));
      assert.ok(leaderPod, `the Lease holder ${holder} is a controller pod`);
      const lease = (
        await cluster.cp.request(
          'GET',
          `/apis/coordination.k8s.io/v1/namespaces/${RELEASE_NS}/leases/${RELEASE}-controller`,
        )
      ).body as { spec: { leaseDurationSeconds: number } };
      const cid = leaderPod.status.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, '') ?? '';
      let maxLeaders = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          maxLeaders = Math.max(maxLeaders, (await leaders().catch(() => [])).length);
          await sleep(200);
        }
      })();
      try {
        const t = performance.now();
        ctr(['tasks', 'kill', '--signal', 'SIGKILL', cid]); // a crash: the Lease is not released
        // Whoever asks first once the lease has expired wins it: the standby pod, or the killed pod's
        // container that the kubelet restarted at once (a new process, so a new identity). Either is a
        // takeover; the killed process's identity must never hold it again.
        const newHolder = await waitFor(
          async () => {
            const h = await leaseHolder();
            return h && h !== holder ? h : undefined;
          },
          { what: 'a new controller process holding the Lease', timeoutMs: 120_000, intervalMs: 100 },
        );
        const takeover = (performance.now() - t) / 1000;
        const winner = newHolder.startsWith(`${leaderPod.metadata.name}_`)
          ? 'the restarted container'
          : 'the standby pod';
        figures['leader takeover after SIGKILL'] =
          `${takeover.toFixed(1)}s by ${winner} (lease ${lease.spec.leaseDurationSeconds}s)`;
        assert.ok(
          (await pods('controller')).some((p) => newHolder.startsWith(`${p.metadata.name}_`)),
          `the new holder ${newHolder} is a controller pod`,
        );
        // client-go's rule: a standby may take the lease once leaseDuration has passed since the last renewal
        // (it retries every 2 s): 15-17 s expected; measured 16-20 s on a loaded 2-core machine. The bound is
        // two lease durations: later than that is a standby that does not take over, not a slow machine.
        assert.ok(
          takeover <= 2 * lease.spec.leaseDurationSeconds,
          `takeover in ${takeover.toFixed(1)}s, within 2 × lease ${lease.spec.leaseDurationSeconds}s`,
        );
        // The new leader writes: a policy created now lands in OpenBao.
        await cluster.cp.apply(policy('after-takeover'));
        await cluster.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=120s', '-n', NS, 'vp/after-takeover']);
        // The killed container is restarted by the kubelet: both pods Ready again, one leading.
        await waitFor(async () => ((await pods('controller')).filter(isReady).length === 2 ? true : undefined), {
          what: '2 controller pods Ready again',
          timeoutMs: 120_000,
          intervalMs: 500,
        });
      } finally {
        sampling = false;
        await sampler;
      }
      assert.equal(maxLeaders, 1, 'never two controllers reporting leadership at once');
    });

    void test('delete one webhook pod under steady admission load: no failed admission call', async () => {
      const load = admissionLoad(cluster);
      await sleep(2000);
      const victim = (await pods('webhook')).filter(isReady)[0];
      assert.ok(victim);
      await cluster.cp.kubectl([
        'delete',
        'pod',
        '-n',
        RELEASE_NS,
        victim.metadata.name,
        '--wait=true',
        '--timeout=120s',
      ]);
      await waitFor(async () => ((await pods('webhook')).filter(isReady).length === 2 ? true : undefined), {
        what: 'the replacement webhook pod Ready',
        timeoutMs: 180_000,
        intervalMs: 500,
      });
      await sleep(2000);
      const r = await load.stop();
      figures['webhook pod deletion under load'] = `${r.failed} failed of ${r.ok + r.failed} admission calls`;
      assert.ok(r.ok > 50, `the load ran (${r.ok} calls admitted)`);
      assert.equal(r.failed, 0, `failed admission calls: ${r.failures.join(' | ')}`);
    });

    void test('helm upgrade with a changed value rolls every pod with no failed admission call', async () => {
      const before = new Set([...(await pods('webhook')), ...(await pods('controller'))].map((p) => p.metadata.uid));
      const load = admissionLoad(cluster);
      await sleep(2000);
      const upgradeStart = performance.now();
      const out = await cluster.cp.helm(
        [
          'upgrade',
          RELEASE,
          CHART,
          '-n',
          RELEASE_NS,
          ...imageValues(image),
          '--set',
          `vault.address=${cluster.cp.vaultAddr ?? ''}`,
          '--set',
          'logLevel=debug',
          '--wait',
          '--timeout=5m',
        ],
        { timeoutMs: 10 * 60_000 },
      );
      figures['helm upgrade --wait'] = `${((performance.now() - upgradeStart) / 1000).toFixed(1)}s`;
      await sleep(2000);
      const r = await load.stop();
      assert.match(out, /has been upgraded/);
      figures['helm upgrade under load'] = `${r.failed} failed of ${r.ok + r.failed} admission calls`;
      const now = [...(await pods('webhook')), ...(await pods('controller'))].filter(isReady);
      assert.equal(now.length, 4);
      assert.ok(
        now.every((p) => !before.has(p.metadata.uid)),
        'every pod was replaced by the rolling update',
      );
      assert.ok(r.ok > 50, `the load ran (${r.ok} calls admitted)`);
      assert.equal(r.failed, 0, `failed admission calls: ${r.failures.join(' | ')}`);
    });

    void test('helm uninstall leaves no pods and keeps the CRDs', async () => {
      await cluster.cp.helm(['uninstall', RELEASE, '-n', RELEASE_NS, '--wait', '--timeout=3m'], {
        timeoutMs: 5 * 60_000,
      });
      await waitFor(
        async () => ((await pods('webhook')).length + (await pods('controller')).length === 0 ? true : undefined),
        { what: 'no vaultgate pods', timeoutMs: 120_000, intervalMs: 500 },
      );
      const crds = await cluster.cp.kubectl(['get', 'crd', '-o', 'name']);
      for (const c of [
        'vaultpolicies.vaultgate.io',
        'vaultrolebindings.vaultgate.io',
        'vaultguardrails.vaultgate.io',
        'secretstores.external-secrets.io',
        'clustersecretstores.external-secrets.io',
        'externalsecrets.external-secrets.io',
      ]) {
        assert.match(
          crds,
          new RegExp(`customresourcedefinition.apiextensions.k8s.io/${c.replace(/\./g, '\\.')}`),
          `${c} kept`,
        );
      }
      // The VaultPolicies (and so what the controller wrote to OpenBao) outlive the release, as the CRDs do.
      assert.equal(
        (await cluster.cp.request('GET', `/apis/vaultgate.io/v1alpha1/namespaces/${NS}/vaultpolicies/app-read`)).status,
        200,
      );
    });
  },
);
