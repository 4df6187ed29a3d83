// Real tier, real pods (#23, first "Done when"): two 2-replica Deployments on the one-node cluster
// (kubelet + containerd, test/harness/node/) consume PostgreSQL 15 credentials minted by OpenBao 2.7.2's
// database engine, side by side in one run, each in its own namespace with its own database role:
//   - team-db: vaultgate's own VaultDynamicSecret kind (spec.rolloutRestartTargets, a lease policy);
//   - team-eso: an unchanged ESO manifest, a generators.external-secrets.io/v1alpha1 VaultDynamicSecret
//     generator (its own provider block) referenced from an ExternalSecret's
//     dataFrom[].sourceRef.generatorRef, the ExternalSecret annotated vaultgate.io/rollout-restart-targets.
// Each Deployment takes the Secret through env valueFrom, so only a restart gives a pod the new credential.
// Each pod logs in once a second (test/harness/pg-probe.ts, pure Node in the vaultgate image, mounted from
// a ConfigMap) and prints a line per login; the test keeps every container's log (node/pod-logs.ts) and
// checks, for each consumer with the same function, what a user would notice: no pod ever fails a login
// over two rotations; each rotation restarts the Deployment exactly once (one new ReplicaSet, whose pods
// all use the new credential); the only leases revoked are replaced ones, each after the rollout that
// replaced it completed, and the current one never. A pod is Ready while its last login succeeded, so a
// rollout completes only with working credentials. With the kind's revocation.previous Immediately this
// test fails (30 failed logins: the old pods between the revocation and their replacement); with the
// generator path's grace at 0 it fails alike (58 failed logins, each replaced lease revoked 15 s before its
// rollout completed). Then deleting the ExternalSecret revokes its current lease (sys/leases/lookup).
//
// TTLs, kind (team-db): lease 30 s, max TTL 100 s, minValidity 40 s, so a credential is replaced 60 s
// after its issue (max TTL - minValidity) at the earliest, once a renewal asking for more than the max
// TTL allows has shown it. 60 s is also the rollout coordinator's default cool-down (kube/workloads.ts),
// so the `vaultgate controller` process runs with its defaults (coalescing 10 s); 40 s of validity covers
// that window plus a rollout of 2 pods (maxSurge 100 %) on a busy 2-core machine.
// TTLs, generator (team-eso): ESO's manifest states no lease policy, so the generator path applies a fixed
// one (GENERATOR_LEASE_POLICY: replace 2 min before the max TTL; revoke the replaced lease 60 s after its
// replacement was written, whatever its rollout). Lease 60 s, max TTL 180 s: the first renewal (a tenth of
// the lease in, asking lease + 2 min) is capped and shows the max TTL, so a credential is replaced 60 s
// after its issue, as the kind's; the second replaced one is revoked ~180 s after the first credential,
// ~35 s after the kind's. A max TTL under 180 s would rotate faster than the 60 s cool-down lets a
// Deployment restart; each 60 s more adds ~2 min to the file's wall time (two rotations and a grace).
// Measured with both consumers (2 cores, busy): rotations every 60 s each, revocations 7-10 s (kind) and
// 45-47 s (generator) after the successor's rollout completed, 200 s test + 65-117 s setup; the generator's
// figures with its lease maintenance requeued after the sync that rotates (without it the new lease is
// never renewed: it expires 60 s later under the pods, ~300 failed logins, and the replaced one is left
// to its max TTL).
// The controller runs on the host (as in the e2e stack), the pods reach PostgreSQL on the node IP.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEMPLATE_ANNOTATION } from '../../controller/rollouts/plan.ts';
import { ROLLOUT_TARGETS_ANNOTATION } from '../../eso/rollout-targets.ts';
import { buildVaultgateImage, type VaultgateImage } from '../image/images.ts';
import { type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import { type NodeCluster, startNodeCluster } from '../harness/node/cluster.ts';
import { NODE_IP, POD_CIDR } from '../harness/node/layout.ts';
import { PodLogCollector } from '../harness/node/pod-logs.ts';
import { nodeTier } from '../harness/node/tier.ts';
import { PG_PROBE_FILE, pgProbeScript } from '../harness/pg-probe-script.ts';
import type { ProbeLine } from '../harness/pg-probe.ts';
import {
  configureDatabaseEngine,
  postgresSkipReason,
  startPostgres,
  type PostgresServer,
} from '../harness/postgres.ts';
import { createTenantStore, LEASE_RULES } from '../harness/tenant-store.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await nodeTier();
const skip = tier.skip || postgresSkipReason();
const APP = 'app';
const SECRET = 'app-db';
const REPLICAS = 2;
const ROTATIONS = 2;
const GEN = 'generators.external-secrets.io/v1alpha1';
const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** One workload consuming one Secret of dynamic database credentials, and what minted them. */
interface Consumer {
  label: string;
  namespace: string;
  /** The database role at database/creds/<role>, and the tenant's Vault role and policy. */
  dbRole: string;
  leaseS: number;
  maxS: number;
  /** Seconds from a credential's issue to its replacement, at the earliest. */
  rotationS: number;
  /** The objects that write the Secret (the Deployment comes after the first credential). */
  manifests: (vaultAddr: string) => object[];
  podLogs: PodLogCollector;
}

const KIND: Consumer = {
  label: 'vaultgate kind',
  namespace: 'team-db',
  dbRole: 'app',
  leaseS: 30,
  maxS: 100,
  rotationS: 60,
  manifests: () => [
    {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultDynamicSecret',
      metadata: { name: SECRET, namespace: 'team-db' },
      spec: {
        storeRef: { name: 'vault' },
        path: 'database/creds/app',
        target: { name: SECRET },
        leasePolicy: { minValidity: '40s' },
        revocation: { grace: '5s' },
        rolloutRestartTargets: [{ kind: 'Deployment', name: APP }],
      },
    },
  ],
  podLogs: new PodLogCollector('team-db'),
};

const ESO: Consumer = {
  label: 'ESO generator',
  namespace: 'team-eso',
  dbRole: 'eso',
  leaseS: 60,
  maxS: 180,
  rotationS: 60,
  // As ESO's users write them (ESO's docs, VaultDynamicSecret generator): nothing vaultgate-only but the
  // annotation, which ESO ignores.
  manifests: (server) => [
    {
      apiVersion: GEN,
      kind: 'VaultDynamicSecret',
      metadata: { name: 'pg', namespace: 'team-eso' },
      spec: {
        path: '/database/creds/eso',
        method: 'GET',
        provider: {
          server,
          path: 'database',
          auth: {
            kubernetes: {
              mountPath: 'kubernetes',
              role: 'team-eso-eso',
              serviceAccountRef: { name: 'vault-client', audiences: ['vault'] },
            },
          },
        },
      },
    },
    {
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      metadata: {
        name: SECRET,
        namespace: 'team-eso',
        annotations: { [ROLLOUT_TARGETS_ANNOTATION]: `deployment/${APP}` },
      },
      spec: {
        refreshInterval: '1h',
        target: { name: SECRET },
        dataFrom: [{ sourceRef: { generatorRef: { apiVersion: GEN, kind: 'VaultDynamicSecret', name: 'pg' } } }],
      },
    },
  ],
  podLogs: new PodLogCollector('team-eso'),
};
const CONSUMERS = [KIND, ESO];

interface Deployment {
  metadata: { generation: number };
  spec: { replicas: number; template: { metadata?: { annotations?: Record<string, string> } } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
}
interface Owned {
  metadata: {
    name: string;
    creationTimestamp: string;
    ownerReferences?: Array<{ kind: string; name: string }>;
  };
}

/** Every replica runs the current template and is ready; no pod of an older template counts any more. */
function rolledOut(d: Deployment): boolean {
  const s = d.status ?? {};
  const want = d.spec.replicas;
  return (
    (s.observedGeneration ?? 0) >= d.metadata.generation &&
    s.updatedReplicas === want &&
    s.readyReplicas === want &&
    s.availableReplicas === want &&
    s.replicas === want
  );
}

/** What the test saw of one consumer, once a second. */
interface Observed {
  /** The Secret's credential each time it changed (ms). */
  credentials: Array<{ user: string; at: number }>;
  /** ReplicaSet name → creation time (ms). */
  replicaSets: Map<string, number>;
  /** Newest ReplicaSet → first time the Deployment was rolled out on it. */
  rolloutDone: Map<string, number>;
  templates: string[];
}

const newObserved = (): Observed => ({
  credentials: [],
  replicaSets: new Map(),
  rolloutDone: new Map(),
  templates: [],
});
const byCreation = (o: Observed): string[] => [...o.replicaSets.entries()].sort((a, b) => a[1] - b[1]).map(([n]) => n);

void describe(
  'Dynamic database credentials under real pods, from the vaultgate kind and an unchanged ESO generator: one-node cluster, OpenBao 2.7.2, PostgreSQL 15',
  { skip },
  () => {
    let cluster: NodeCluster;
    let stack: E2EStack;
    let pg: PostgresServer;
    let probeScript: string;
    let image: VaultgateImage;
    let started = 0;
    const figures: Record<string, Record<string, string | number>> = { all: {}, [KIND.label]: {}, [ESO.label]: {} };
    const at = (ms: number): string => `+${Math.round((ms - started) / 1000)}s`;

    const get = async <T>(path: string): Promise<T> => {
      const res = await cluster.cp.request('GET', path);
      assert.equal(res.status, 200, `GET ${path}: ${res.text.slice(0, 300)}`);
      return res.body as T;
    };
    const secretUser = async (c: Consumer): Promise<string | undefined> => {
      const res = await cluster.cp.request('GET', `/api/v1/namespaces/${c.namespace}/secrets/${SECRET}`);
      const data = (res.body as { data?: Record<string, string> }).data;
      return res.status === 200 && data?.username ? Buffer.from(data.username, 'base64').toString() : undefined;
    };
    const owned = async (c: Consumer, resource: 'replicasets' | 'pods'): Promise<Owned[]> => {
      const path =
        resource === 'pods'
          ? `/api/v1/namespaces/${c.namespace}/pods?labelSelector=app%3D${APP}`
          : `/apis/apps/v1/namespaces/${c.namespace}/replicasets?labelSelector=app%3D${APP}`;
      return (await get<{ items: Owned[] }>(path)).items;
    };
    /** Whether OpenBao still knows a lease (sys/leases/lookup answers 400 "invalid lease" once it is revoked). */
    const leaseKnown = async (id: string): Promise<boolean> =>
      (await stack.vaultRoot('PUT', 'sys/leases/lookup', { lease_id: id })).status === 200;
    /** The leases the generator path keeps for the ExternalSecret (its state Secret `esgen-<uid>-0`, ids only). */
    const esoLeases = async (): Promise<{ lease?: { id: string }; previous?: Array<{ id: string }> }> => {
      const es = await get<{ metadata: { uid: string } }>(
        `/apis/external-secrets.io/v1/namespaces/${ESO.namespace}/externalsecrets/${SECRET}`,
      );
      const state = await get<{ metadata: { annotations?: Record<string, string> } }>(
        `/api/v1/namespaces/${ESO.namespace}/secrets/esgen-${es.metadata.uid}-0`,
      );
      return JSON.parse(state.metadata.annotations?.['vaultgate.io/generator-lease'] ?? '{}') as {
        lease?: { id: string };
        previous?: Array<{ id: string }>;
      };
    };
    const diagnostics = (c: Consumer): string =>
      [
        stack?.diagnostics(),
        cluster?.podLogs(c.namespace, APP, 5),
        `--- kubelet\n${cluster?.componentLog('kubelet', 10) ?? ''}`,
      ].join('\n');

    /** The consumer's Deployment (and the probe's ConfigMap): env from the Secret, Ready while logins work. */
    const workload = (c: Consumer): object[] => {
      const fromSecret = (key: 'username' | 'password'): Record<string, unknown> => ({
        valueFrom: { secretKeyRef: { name: SECRET, key } },
      });
      return [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'pg-probe', namespace: c.namespace },
          data: { [PG_PROBE_FILE]: probeScript },
        },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: APP, namespace: c.namespace },
          spec: {
            replicas: REPLICAS,
            selector: { matchLabels: { app: APP } },
            strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '100%', maxUnavailable: 0 } },
            template: {
              metadata: { labels: { app: APP } },
              spec: {
                automountServiceAccountToken: false,
                terminationGracePeriodSeconds: 10,
                securityContext: { runAsUser: 65532, runAsGroup: 65532, runAsNonRoot: true },
                containers: [
                  {
                    name: 'client',
                    image: image.ref,
                    imagePullPolicy: 'Never',
                    command: ['node', `/probe/${PG_PROBE_FILE}`],
                    env: [
                      { name: 'PGHOST', value: NODE_IP },
                      { name: 'PGPORT', value: String(pg.port) },
                      { name: 'PGUSER', ...fromSecret('username') },
                      { name: 'PGPASSWORD', ...fromSecret('password') },
                      { name: 'PROBE_PORT', value: '8080' },
                    ],
                    readinessProbe: {
                      httpGet: { path: '/ready', port: 8080 },
                      periodSeconds: 1,
                      failureThreshold: 1,
                    },
                    securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
                    volumeMounts: [{ name: 'probe', mountPath: '/probe', readOnly: true }],
                  },
                ],
                volumes: [{ name: 'probe', configMap: { name: 'pg-probe' } }],
              },
            },
          },
        },
      ];
    };

    /** One tick: the Secret's credential, the ReplicaSets, whether the Deployment is rolled out on the newest. */
    const observe = async (c: Consumer, o: Observed, tick: number): Promise<void> => {
      c.podLogs.poll();
      const user = await secretUser(c);
      if (user && o.credentials.at(-1)?.user !== user) o.credentials.push({ user, at: tick });
      for (const rs of await owned(c, 'replicasets'))
        if (!o.replicaSets.has(rs.metadata.name))
          o.replicaSets.set(rs.metadata.name, Date.parse(rs.metadata.creationTimestamp));
      const d = await get<Deployment>(`/apis/apps/v1/namespaces/${c.namespace}/deployments/${APP}`);
      const template = d.spec.template.metadata?.annotations?.[TEMPLATE_ANNOTATION] ?? '(none)';
      if (o.templates.at(-1) !== template) o.templates.push(template);
      const newest = byCreation(o).at(-1);
      if (newest && rolledOut(d) && !o.rolloutDone.has(newest)) o.rolloutDone.set(newest, tick);
    };
    /**
     * The first ROTATIONS credentials replaced, rolled out and revoked, and the newest rolled out. Not every
     * replaced one: the generator path replaces a credential every 60 s and revokes the one before 60 s
     * after, so a newer one is written as the last is revoked.
     */
    const settled = (o: Observed, revokedAt: Map<string, number>): boolean =>
      o.credentials.length > ROTATIONS &&
      o.replicaSets.size >= o.credentials.length &&
      o.credentials.slice(0, ROTATIONS).every((cr) => revokedAt.has(cr.user)) &&
      o.rolloutDone.has(byCreation(o).at(-1) ?? '');

    /**
     * The checks a user of either consumer relies on: no failed login; one restart per rotation (a
     * ReplicaSet per credential, its pods on that credential only); only replaced credentials revoked, each
     * after the rollout to its successor completed; the current one live. Records the consumer's figures.
     */
    const checkConsumer = async (c: Consumer, o: Observed, revokedAt: Map<string, number>): Promise<void> => {
      const f = figures[c.label]!;
      const byPod = new Map<string, { users: Set<string>; ok: number; failed: ProbeLine[]; restarts: number }>();
      for (const l of c.podLogs.logs()) {
        const p = byPod.get(l.pod) ?? { users: new Set<string>(), ok: 0, failed: [], restarts: 0 };
        p.restarts = Math.max(p.restarts, l.restart);
        for (const line of l.lines) {
          if (!line.includes('"ok"')) continue;
          const probe = JSON.parse(line) as ProbeLine;
          p.users.add(probe.user);
          if (probe.ok) p.ok++;
          else p.failed.push(probe);
        }
        byPod.set(l.pod, p);
      }
      const pods = [...byPod.entries()];
      const failed = pods.flatMap(([pod, p]) => p.failed.map((l) => `${pod} ${l.at} ${l.user}: ${l.code} ${l.error}`));
      const rsNames = byCreation(o);
      const rotations = o.credentials.length - 1;
      const users = new Set(o.credentials.map((cr) => cr.user));
      const revoked = [...revokedAt].filter(([user]) => users.has(user));
      Object.assign(f, {
        rotations,
        restarts: rsNames.length - 1,
        'template values': o.templates.length,
        pods: pods.length,
        'logins ok': pods.reduce((n, [, p]) => n + p.ok, 0),
        'logins failed': failed.length,
      });
      for (const [i, cr] of o.credentials.entries()) {
        const done = rsNames[i] ? o.rolloutDone.get(rsNames[i]) : undefined;
        const successorDone = rsNames[i + 1] ? o.rolloutDone.get(rsNames[i + 1]!) : undefined;
        const rev = revokedAt.get(cr.user);
        f[`credential ${i}`] =
          `written ${at(cr.at)}, rolled out ${done ? at(done) : '-'}, revoked ${rev ? at(rev) : '-'}` +
          (rev && successorDone
            ? ` (${Math.round((rev - successorDone) / 1000)} s after its successor rolled out)`
            : '');
      }
      log(`[dynamic-secret-pods] ${c.label}: ${JSON.stringify(f)}`);

      assert.deepEqual(failed.slice(0, 20), [], `${c.label}: failed logins in the pods\n${diagnostics(c)}`);
      assert.ok(rotations >= ROTATIONS, `${c.label}: ${rotations} rotations\n${diagnostics(c)}`);
      for (const [pod, p] of pods) {
        assert.ok(p.ok >= 3, `${c.label}: pod ${pod} logged in (${p.ok} logins)`);
        assert.equal(p.users.size, 1, `${c.label}: pod ${pod} ran with one credential`);
        assert.equal(p.restarts, 0, `${c.label}: pod ${pod}'s container never restarted`);
      }
      // One restart per rotation: one ReplicaSet per credential, in order, each with pods of its credential only.
      assert.equal(
        rsNames.length,
        o.credentials.length,
        `${c.label}: ReplicaSets ${rsNames.join(', ')} for ${o.credentials.length} credentials`,
      );
      for (const [pod, p] of pods) {
        const rs = rsNames.find((n) => pod.startsWith(`${n}-`));
        assert.ok(rs, `${c.label}: pod ${pod} belongs to a ReplicaSet of ${APP}`);
        assert.equal(
          [...p.users][0],
          o.credentials[rsNames.indexOf(rs)]?.user,
          `${c.label}: pod ${pod} of ${rs} used its rollout's credential`,
        );
      }
      const podsNow = await owned(c, 'pods');
      assert.equal(
        podsNow.filter((p) => p.metadata.ownerReferences?.[0]?.name === rsNames.at(-1)).length,
        REPLICAS,
        `${c.label}: the pods running now are the last rollout`,
      );
      // Revoked: the replaced credentials, each after the rollout to its successor completed; never the current one.
      const current = o.credentials.at(-1)!.user;
      assert.ok((await pg.loginRoles()).includes(current), `${c.label}: the current credential is not revoked`);
      for (const [user, when] of revoked) {
        const i = o.credentials.findIndex((cr) => cr.user === user);
        assert.ok(i < o.credentials.length - 1, `${c.label}: revoked ${user} is a replaced credential`);
        const successorRolledOut = o.rolloutDone.get(rsNames[i + 1] ?? '');
        assert.ok(
          successorRolledOut !== undefined && when >= successorRolledOut,
          `${c.label}: ${user} revoked at ${at(when)}, after its replacement rolled out (${successorRolledOut ? at(successorRolledOut) : 'never'})`,
        );
      }
      for (const cr of o.credentials.slice(0, ROTATIONS))
        assert.ok(revokedAt.has(cr.user), `${c.label}: replaced credential ${cr.user} revoked`);
    };

    before(
      async () => {
        const t = performance.now();
        [image, cluster, probeScript] = await Promise.all([
          buildVaultgateImage({ log }),
          startNodeCluster({ log }),
          pgProbeScript(),
        ]);
        cluster.importImage(image);
        // PostgreSQL listens on the node IP (the bridge exists once the node is up) and admits the pod range.
        [pg, stack] = await Promise.all([
          startPostgres({ clients: { address: NODE_IP, cidr: POD_CIDR } }),
          startE2E({ controlPlane: cluster.cp, webhook: false, log }),
        ]);
        for (const c of CONSUMERS) {
          await configureDatabaseEngine({ addr: stack.vault.addr, token: stack.vault.rootToken }, pg, {
            role: c.dbRole,
            defaultTtl: `${c.leaseS}s`,
            maxTtl: `${c.maxS}s`,
          });
          // The tenant's Vault identity: a ServiceAccount that is not the pods' (they get no token at all).
          // The generator logs in with its own provider block; the SecretStore made here serves the kind only.
          await createTenantStore(stack, {
            namespace: c.namespace,
            role: `${c.namespace}-${c.dbRole}`,
            rules: [`path "database/creds/${c.dbRole}" { capabilities = ["read"] }`, ...LEASE_RULES],
            serviceAccount: 'vault-client',
          });
        }
        figures.all!['setup s'] = Math.round((performance.now() - t) / 1000);
      },
      { timeout: 600_000 },
    );
    after(async () => {
      log(`[dynamic-secret-pods] figures: ${JSON.stringify(figures)}`);
      await stack?.stop();
      await pg?.stop();
      const left = await cluster?.stop();
      for (const c of CONSUMERS) c.podLogs.dispose();
      assert.deepEqual(left ?? [], [], 'the node stack leaves nothing behind');
    });

    void test(
      `over ${ROTATIONS} rotations, for each consumer, the pods never fail a login; one restart per rotation; only replaced leases revoked, after their rollout`,
      { timeout: 9 * 60_000 },
      async (t: TestContext) => {
        started = Date.now();
        await stack.kubectlApply(CONSUMERS.flatMap((c) => c.manifests(stack.vault.addr)));
        for (const c of CONSUMERS)
          await waitFor(() => secretUser(c), {
            what: `${c.label}: Secret ${c.namespace}/${SECRET} with a credential`,
            timeoutMs: 90_000,
            intervalMs: 250,
          }).catch((err: unknown) => {
            throw new Error(`${(err as Error).message}\n${diagnostics(c)}`);
          });
        await cluster.cp.apply(CONSUMERS.flatMap(workload));

        // Observe both once a second until each one's rotations rolled out and their replaced leases were revoked.
        const observed = new Map(CONSUMERS.map((c) => [c, newObserved()]));
        const roleSeen = new Set<string>();
        const revokedAt = new Map<string, number>(); // PostgreSQL role → first tick it was gone
        const deadline = Date.now() + (ROTATIONS + 1) * Math.max(...CONSUMERS.map((c) => c.rotationS)) * 1000 + 90_000;
        for (;;) {
          const tick = Date.now();
          await Promise.all(CONSUMERS.map((c) => observe(c, observed.get(c)!, tick)));
          const live = new Set(await pg.loginRoles());
          for (const r of live) roleSeen.add(r);
          for (const r of roleSeen) if (!live.has(r) && !revokedAt.has(r)) revokedAt.set(r, tick);
          if (CONSUMERS.every((c) => settled(observed.get(c)!, revokedAt)) || Date.now() > deadline) break;
          await sleep(Math.max(0, 1000 - (Date.now() - tick)));
        }
        await sleep(2000); // the last lines of the pods stopped last
        for (const c of CONSUMERS) c.podLogs.poll();
        figures.all!['test s'] = Math.round((Date.now() - started) / 1000);

        // Each consumer's checks as a subtest: one failing still reports the other's.
        for (const c of CONSUMERS) await t.test(c.label, () => checkConsumer(c, observed.get(c)!, revokedAt));
        await t.test('no other database role was revoked', () => {
          const users = new Set(CONSUMERS.flatMap((c) => observed.get(c)!.credentials.map((cr) => cr.user)));
          assert.deepEqual(
            [...revokedAt.keys()].filter((r) => !users.has(r)),
            [],
            'every role dropped was a credential some Secret held',
          );
        });
        await t.test(
          `${KIND.label}: the replaced leases were revoked by the controller after their rollout`,
          async () => {
            const vds = await get<{ status?: { lease?: { id: string } } }>(
              `/apis/vaultgate.io/v1alpha1/namespaces/${KIND.namespace}/vaultdynamicsecrets/${SECRET}`,
            );
            assert.ok(vds.status?.lease?.id, 'the object holds its current lease');
            // Not by Vault at their max TTL (a dropped role looks the same in PostgreSQL).
            const events = await get<{
              items: Array<{
                reason?: string;
                note?: string;
                message?: string;
                count?: number;
                series?: { count?: number };
              }>;
            }>(`/api/v1/namespaces/${KIND.namespace}/events`);
            const revocations = events.items
              .filter(
                (e) => e.reason === 'PreviousLeaseRevoked' && /its rollout completed/.test(e.note ?? e.message ?? ''),
              )
              .reduce((n, e) => n + (e.count ?? e.series?.count ?? 1), 0);
            figures[KIND.label]!['revocations after rollout (Events)'] = revocations;
            assert.ok(revocations >= ROTATIONS, `${revocations} PreviousLeaseRevoked Events after a rollout`);
          },
        );
        await t.test(
          `${ESO.label}: the replaced leases were revoked by the controller, not at their max TTL`,
          async () => {
            // The generator path records no Event for it: a role dropped well before its max TTL (issue <= written)
            // was revoked, not expired. The policy revokes 60 s after the replacement, 60 s after issue.
            const o = observed.get(ESO)!;
            for (const cr of o.credentials.slice(0, ROTATIONS)) {
              const when = revokedAt.get(cr.user);
              assert.ok(
                when !== undefined && when < cr.at + (ESO.maxS - 20) * 1000,
                `${cr.user} written at ${at(cr.at)} revoked at ${when ? at(when) : 'never'}, ${ESO.maxS - 20} s after at the latest`,
              );
            }
            const kept = await esoLeases();
            assert.ok(kept.lease?.id && (await leaseKnown(kept.lease.id)), 'the ExternalSecret keeps a live lease');
          },
        );
      },
    );

    void test(`${ESO.label}: deleting the ExternalSecret revokes its current lease`, async () => {
      const kept = await esoLeases();
      const ids = [kept.lease?.id, ...(kept.previous ?? []).map((p) => p.id)].filter((x): x is string => !!x);
      const user = await secretUser(ESO);
      assert.ok(kept.lease?.id && (await leaseKnown(kept.lease.id)), 'a live lease before the delete');
      const t0 = Date.now();
      const path = `/apis/external-secrets.io/v1/namespaces/${ESO.namespace}/externalsecrets/${SECRET}`;
      await cluster.cp.request('DELETE', path);
      await waitFor(async () => ((await cluster.cp.request('GET', path)).status === 404 ? true : undefined), {
        what: 'ExternalSecret deleted',
        timeoutMs: 60_000,
        intervalMs: 250,
      }).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${diagnostics(ESO)}`);
      });
      figures[ESO.label]!['delete to gone ms'] = Date.now() - t0;
      for (const id of ids) assert.equal(await leaseKnown(id), false, `lease ${id} revoked (sys/leases/lookup)`);
      assert.ok(user && !(await pg.loginRoles()).includes(user), `role ${user} dropped`);
    });
  },
);
