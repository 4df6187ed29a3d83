// Real tier, real pods (#23, "the same for a PKI certificate and for a kubernetes-secrets-engine token"):
// two VaultDynamicSecrets with rolloutRestartTargets, consumed at the same time on the one-node cluster
// (kubelet + containerd, test/harness/node/) by 2-replica Deployments whose pods take the credential from
// the Secret through env valueFrom, so only a restart gives a pod the new one:
// - a certificate from OpenBao 2.7.2's pki engine (kubernetes.io/tls Secret): each pod serves TLS with it
//   on loopback and, once a second, connects to itself verifying it against the PKI's CA at the current
//   time with the CRL fetched from OpenBao just before (test/harness/tls-probe.ts): expired or revoked
//   under a running pod fails the check;
// - a token from OpenBao's kubernetes secrets engine against the real kube-apiserver (its own
//   ServiceAccount and generated Role, deleted on revocation): each pod lists ConfigMaps with it once a
//   second (test/harness/token-probe.ts): a 401/403 fails the check.
// Each pod prints a line per check (the pods' logs are kept, node/pod-logs.ts). For each consumer
// (test/harness/rollout-checks.ts checkConsumer): no failed check over two rotations; each rotation
// restarts the Deployment exactly once (one new ReplicaSet, whose pods all use the new credential); only
// replaced credentials are revoked (serial in OpenBao's pki/cert, ServiceAccount deleted), each after the
// rollout that replaced it completed, the current one never. No private key or token appears in the
// controller log, Events, status or the Deployments.
//
// TTLs: both consumers rotate ~62-65 s after issue, just over the rollout coordinator's default cool-down
// (60 s, kube/workloads.ts DEFAULT_ROLLOUT_POLICY), so each rotation gets its own restart; two rotations,
// their rollouts and revocations were observed in 160-164 s, the one-node cluster, image, stack and engines
// took 40-90 s (2 busy cores): 3.4-4.3 min, plus any wait for another test's node stack (printed apart).
// - Certificate: ttl 150 s; OpenBao back-dates notBefore 30 s, so a 180 s lifetime, renewAtPercent 51
//   (+ up to 2 % jitter) re-issues 62-65 s after issue, 85-88 s before notAfter: the coalescing window
//   (10 s), a 2-pod rollout and the grace (5 s) fit well before the replaced certificate would expire.
// - Token: the apiserver refuses a TokenRequest under 600 s, so the lease is 600 s (not renewable);
//   minValidity 535 s replaces it 65 s after issue.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildVaultgateImage, type VaultgateImage } from '../image/images.ts';
import { type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import { TcpFront } from '../harness/e2e-vault.ts';
import { type NodeCluster, startNodeCluster } from '../harness/node/cluster.ts';
import { NODE_IP } from '../harness/node/layout.ts';
import { PodLogCollector } from '../harness/node/pod-logs.ts';
import { nodeTier } from '../harness/node/tier.ts';
import { bundleProbe } from '../harness/probe-bundle.ts';
import { assertNoSecretIn, checkConsumer, type Consumer, RolloutWatch } from '../harness/rollout-checks.ts';
import { createTenantStore, LEASE_RULES } from '../harness/tenant-store.ts';
import { vaultSerial } from '../harness/tls-probe.ts';
import { setUpKubernetesEngine, setUpPkiEngine } from '../harness/vault-engines.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await nodeTier();
const fileStarted = performance.now();
const REPLICAS = 2;
const ROTATIONS = 2;
const GRACE_S = 5;
const TLS = { ns: 'team-tls', app: 'tls-app', object: 'app-tls', name: 'tls-app.team-tls.svc.test' } as const;
const TOKEN = { ns: 'team-token', app: 'token-app', object: 'app-token' } as const;
const CERT_TTL_S = 150;
const RENEW_AT_PERCENT = 51;
const JITTER_PERCENT = 2;
const CERT_MIN_VALIDITY_S = 30;
const TOKEN_LEASE_S = 600;
const TOKEN_MIN_VALIDITY_S = 535;
const PROBES = { tls: 'tls-probe.mjs', token: 'token-probe.mjs', kubeCa: 'kube-ca.crt' } as const;
const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

void describe(
  'certificates and kubernetes tokens under real pods: one-node cluster, OpenBao 2.7.2 pki and kubernetes engines',
  { skip: tier.skip },
  () => {
    let cluster: NodeCluster;
    let stack: E2EStack;
    let image: VaultgateImage;
    let scripts: { tls: string; token: string };
    let vaultForPods: TcpFront | undefined;
    const logs = { tls: new PodLogCollector(TLS.ns), token: new PodLogCollector(TOKEN.ns) };
    const keys = new Set<string>();
    const tokens = new Set<string>();
    const watches: { tls?: RolloutWatch; token?: RolloutWatch } = {};
    const figures: Record<string, unknown> = {};

    const secretData = async (ns: string, name: string): Promise<Record<string, string> | undefined> => {
      const res = await cluster.cp.request('GET', `/api/v1/namespaces/${ns}/secrets/${name}`);
      if (res.status !== 200) return undefined;
      const data = (res.body as { data?: Record<string, string> }).data ?? {};
      return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    };
    const diagnostics = (): string =>
      [
        stack?.diagnostics(),
        cluster?.podLogs(TLS.ns, TLS.app, 5),
        cluster?.podLogs(TOKEN.ns, TOKEN.app, 5),
        `--- kubelet\n${cluster?.componentLog('kubelet', 10) ?? ''}`,
      ].join('\n');

    /** The pki engine (vault-engines.ts); the tenant may issue and revoke. */
    const setUpPki = async (): Promise<void> => {
      await setUpPkiEngine(stack);
      await createTenantStore(stack, {
        namespace: TLS.ns,
        role: 'team-tls-app',
        rules: [
          'path "pki/issue/web" { capabilities = ["update"] }',
          'path "pki/revoke" { capabilities = ["update"] }',
        ],
        serviceAccount: 'vault-client',
      });
    };
    /** The kubernetes engine against the real apiserver (vault-engines.ts); the tenant may issue from its role. */
    const setUpKubernetes = async (): Promise<void> => {
      await setUpKubernetesEngine(stack, { namespace: TOKEN.ns, ttlSeconds: TOKEN_LEASE_S });
      await createTenantStore(stack, {
        namespace: TOKEN.ns,
        role: 'team-token-app',
        rules: ['path "kubernetes/creds/app" { capabilities = ["update"] }', ...LEASE_RULES],
        serviceAccount: 'vault-client',
      });
    };

    /** A Deployment of the probe `script` with the Secret's keys and plain values as env. */
    const deployment = (
      ns: string,
      app: string,
      script: string,
      env: Array<Record<string, unknown>>,
    ): Record<string, unknown> => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: app, namespace: ns },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: { app } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '100%', maxUnavailable: 0 } },
        template: {
          metadata: { labels: { app } },
          spec: {
            automountServiceAccountToken: false,
            terminationGracePeriodSeconds: 10,
            securityContext: { runAsUser: 65532, runAsGroup: 65532, runAsNonRoot: true },
            containers: [
              {
                name: 'client',
                image: image.ref,
                imagePullPolicy: 'Never',
                command: ['node', `/probe/${script}`],
                env: [...env, { name: 'PROBE_PORT', value: '8080' }],
                readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1, failureThreshold: 1 },
                securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
                volumeMounts: [{ name: 'probe', mountPath: '/probe', readOnly: true }],
              },
            ],
            volumes: [{ name: 'probe', configMap: { name: 'probes' } }],
          },
        },
      },
    });
    const fromSecret = (name: string, secret: string, key: string): Record<string, unknown> => ({
      name,
      valueFrom: { secretKeyRef: { name: secret, key } },
    });

    before(
      async () => {
        const t = performance.now();
        const [img, c, tlsScript, tokenScript] = await Promise.all([
          buildVaultgateImage({ log }),
          startNodeCluster({ log }),
          bundleProbe('tls-probe.ts', 'tlsProbeMain'),
          bundleProbe('token-probe.ts', 'tokenProbeMain'),
        ]);
        [image, cluster, scripts] = [img, c, { tls: tlsScript, token: tokenScript }];
        cluster.importImage(image);
        // Time spent waiting for another test's node stack (one per machine), not this file's cost.
        const {
          total,
          'control plane': cpS = 0,
          'containerd + images': ctrS = 0,
          'node Ready': readyS = 0,
        } = cluster.timings;
        figures['node lock wait s'] = Math.round((total ?? 0) - cpS - ctrS - readyS);
        stack = await startE2E({ controlPlane: cluster.cp, webhook: false, log });
        // OpenBao (and its front) listen on loopback; the pods fetch the CRL through a front on the node IP.
        vaultForPods = new TcpFront(Number(new URL(stack.vault.addr).port), NODE_IP);
        await vaultForPods.start();
        await Promise.all([setUpPki(), setUpKubernetes()]);
        figures['setup s'] = Math.round((performance.now() - t) / 1000);
      },
      { timeout: 600_000 },
    );
    after(async () => {
      log(`[vds-pods-cert-token] figures: ${JSON.stringify(figures)}`);
      await vaultForPods?.stop();
      await stack?.stop();
      const left = await cluster?.stop();
      logs.tls.dispose();
      logs.token.dispose();
      const wall = (performance.now() - fileStarted) / 1000;
      const waited = Number(figures['node lock wait s'] ?? 0);
      log(
        `[vds-pods-cert-token] file wall ${wall.toFixed(1)}s, ${(wall - waited).toFixed(1)}s without the node-lock wait`,
      );
      assert.deepEqual(left ?? [], [], 'the node stack leaves nothing behind');
    });

    void test(
      `pods consume a certificate and a token over ${ROTATIONS} rotations each, at the same time`,
      { timeout: 8 * 60_000 },
      async () => {
        const started = Date.now();
        const rolloutTargets = (app: string): Array<Record<string, string>> => [{ kind: 'Deployment', name: app }];
        await stack.kubectlApply([
          {
            apiVersion: 'vaultgate.io/v1alpha1',
            kind: 'VaultDynamicSecret',
            metadata: { name: TLS.object, namespace: TLS.ns },
            spec: {
              storeRef: { name: 'vault' },
              credentialType: 'Certificate',
              path: 'pki/issue/web',
              method: 'PUT',
              parameters: { common_name: TLS.name, ttl: `${CERT_TTL_S}s` },
              target: { name: TLS.object },
              leasePolicy: {
                renewAtPercent: RENEW_AT_PERCENT,
                jitterPercent: JITTER_PERCENT,
                minValidity: `${CERT_MIN_VALIDITY_S}s`,
              },
              revocation: { grace: `${GRACE_S}s` },
              rolloutRestartTargets: rolloutTargets(TLS.app),
            },
          },
          {
            apiVersion: 'vaultgate.io/v1alpha1',
            kind: 'VaultDynamicSecret',
            metadata: { name: TOKEN.object, namespace: TOKEN.ns },
            spec: {
              storeRef: { name: 'vault' },
              path: 'kubernetes/creds/app',
              method: 'POST',
              parameters: { kubernetes_namespace: TOKEN.ns },
              target: { name: TOKEN.object },
              leasePolicy: { minValidity: `${TOKEN_MIN_VALIDITY_S}s` },
              revocation: { grace: `${GRACE_S}s` },
              rolloutRestartTargets: rolloutTargets(TOKEN.app),
            },
          },
        ]);
        for (const [ns, name, key] of [
          [TLS.ns, TLS.object, 'tls.crt'],
          [TOKEN.ns, TOKEN.object, 'service_account_token'],
        ] as const)
          await waitFor(async () => ((await secretData(ns, name))?.[key] ? true : undefined), {
            what: `Secret ${ns}/${name} with ${key}`,
            timeoutMs: 90_000,
            intervalMs: 250,
          }).catch((err: unknown) => {
            throw new Error(`${(err as Error).message}\n${diagnostics()}`);
          });
        figures['first credentials s'] = Math.round((Date.now() - started) / 1000);

        const configMap = (ns: string): Record<string, unknown> => ({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'probes', namespace: ns },
          data: { [PROBES.tls]: scripts.tls, [PROBES.token]: scripts.token, [PROBES.kubeCa]: cluster.cp.caPem },
        });
        await cluster.cp.apply([
          configMap(TLS.ns),
          configMap(TOKEN.ns),
          deployment(TLS.ns, TLS.app, PROBES.tls, [
            fromSecret('TLS_CRT', TLS.object, 'tls.crt'),
            fromSecret('TLS_KEY', TLS.object, 'tls.key'),
            fromSecret('CA_CRT', TLS.object, 'ca.crt'),
            { name: 'TLS_NAME', value: TLS.name },
            { name: 'CRL_URL', value: `http://${NODE_IP}:${vaultForPods!.port}/v1/pki/crl/pem` },
          ]),
          deployment(TOKEN.ns, TOKEN.app, PROBES.token, [
            fromSecret('KUBE_TOKEN', TOKEN.object, 'service_account_token'),
            fromSecret('KUBE_USER', TOKEN.object, 'service_account_name'),
            { name: 'KUBE_SERVER', value: cluster.cp.server },
            { name: 'KUBE_CA', valueFrom: { configMapKeyRef: { name: 'probes', key: PROBES.kubeCa } } },
            { name: 'KUBE_PATH', value: `/api/v1/namespaces/${TOKEN.ns}/configmaps` },
          ]),
        ]);

        const tlsConsumer: Consumer = {
          cp: cluster.cp,
          namespace: TLS.ns,
          app: TLS.app,
          replicas: REPLICAS,
          object: TLS.object,
          current: async () => {
            const d = await secretData(TLS.ns, TLS.object);
            if (!d?.['tls.crt']) return undefined;
            if (d['tls.key']) keys.add(d['tls.key']);
            return vaultSerial(new X509Certificate(d['tls.crt']));
          },
          revoked: async (serials) => {
            const out = new Set<string>();
            for (const serial of serials) {
              const r = await stack.vaultRoot('GET', `pki/cert/${serial}`);
              assert.equal(r.status, 200, `pki/cert/${serial}: ${JSON.stringify(r.body)}`);
              if (Number((r.body as { data: { revocation_time?: number } }).data.revocation_time ?? 0) > 0)
                out.add(serial);
            }
            return out;
          },
        };
        const tokenConsumer: Consumer = {
          cp: cluster.cp,
          namespace: TOKEN.ns,
          app: TOKEN.app,
          replicas: REPLICAS,
          object: TOKEN.object,
          current: async () => {
            const d = await secretData(TOKEN.ns, TOKEN.object);
            if (d?.service_account_token) tokens.add(d.service_account_token);
            return d?.service_account_name || undefined;
          },
          // Revoking the lease deletes the credential's ServiceAccount (and with it the token).
          revoked: async (names) => {
            const res = await cluster.cp.request('GET', `/api/v1/namespaces/${TOKEN.ns}/serviceaccounts`);
            assert.equal(res.status, 200, res.text);
            const live = new Set(
              (res.body as { items: Array<{ metadata: { name: string } }> }).items.map((i) => i.metadata.name),
            );
            return new Set(names.filter((n) => !live.has(n)));
          },
        };
        const tls = (watches.tls = new RolloutWatch(tlsConsumer, started));
        const token = (watches.token = new RolloutWatch(tokenConsumer, started));
        // Until both consumers rotated twice, rolled out and saw the replaced credentials revoked.
        const deadline = started + ((ROTATIONS + 1) * 65 + 60) * 1000;
        for (;;) {
          const tick = Date.now();
          logs.tls.poll();
          logs.token.poll();
          await Promise.all([tls.sample(), token.sample()]);
          if ((tls.settled(ROTATIONS) && token.settled(ROTATIONS)) || Date.now() > deadline) break;
          await sleep(Math.max(0, 1000 - (Date.now() - tick)));
        }
        await sleep(2000); // the last lines of the pods stopped last
        logs.tls.poll();
        logs.token.poll();
        figures['observed s'] = Math.round((Date.now() - started) / 1000);
      },
    );

    void test('the certificate: no failed check, one restart per rotation, replaced serials revoked after their rollout', async () => {
      assert.ok(watches.tls, 'observed');
      figures.certificate = await checkConsumer(watches.tls, logs.tls.logs(), { rotations: ROTATIONS, diagnostics });
    });

    void test('the token: no failed check, one restart per rotation, replaced leases revoked after their rollout', async () => {
      assert.ok(watches.token, 'observed');
      figures.token = await checkConsumer(watches.token, logs.token.logs(), { rotations: ROTATIONS, diagnostics });
    });

    void test('no private key or token in the controller log, Events, status or the Deployments', async () => {
      const text = async (path: string): Promise<string> => (await cluster.cp.request('GET', path)).text;
      const texts: Record<string, string> = {
        'controller log': readFileSync(stack.controller!.logPath, 'utf8'),
      };
      for (const [ns, object] of [
        [TLS.ns, TLS.object],
        [TOKEN.ns, TOKEN.object],
      ] as const) {
        texts[`${ns} Events`] = await text(`/api/v1/namespaces/${ns}/events`);
        texts[`${ns}/${object} status`] = await text(
          `/apis/vaultgate.io/v1alpha1/namespaces/${ns}/vaultdynamicsecrets/${object}`,
        );
        texts[`${ns} Deployments`] = await text(`/apis/apps/v1/namespaces/${ns}/deployments`);
      }
      assertNoSecretIn(texts, keys, 'a private key');
      assertNoSecretIn(texts, tokens, 'a token');
      figures['canaries'] = `${keys.size} keys, ${tokens.size} tokens`;
    });
  },
);
