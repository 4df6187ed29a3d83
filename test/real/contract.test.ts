// owner: A
// The contract suites (test/contract/*.contract.ts) against the REAL servers: kube-apiserver 1.34 + etcd
// 3.6 for the Kubernetes contract, OpenBao 2.7.2 `server -dev` for the Vault contract, and the Vault
// simulator under the same suite with the same real ServiceAccount tokens. A simulator that disagrees
// with OpenBao's answers is the simulator's bug. No OpenBao check is skipped: OpenBao is part of the tier.
// One control plane for the file, shared by both suites, stopped after the last one.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.ts';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';
import { describeKubeContract } from '../contract/kube.contract.ts';
import { describeVaultContract } from '../contract/vault.contract.ts';
import { ANSWERS_FILE, type AnswersFile, ask, RECORD_COMMAND } from '../contract/openbao-exchanges.ts';
import { type SimulatedVault, startSimulatedVault } from '../harness/e2e-vault.ts';
import type { OpenBaoServer } from '../harness/openbao.ts';

function bao(cp: ControlPlane): OpenBaoServer {
  if (!cp.openbao) throw new Error('the control plane has no OpenBao');
  return cp.openbao;
}

const tier = await realTier();
const baoSkip = tier.skip ? tier.skip : baoSkipReason();
// VAULTGATE_CRD_DIR: install CRDs from elsewhere (e.g. a fixed copy while the generator is being repaired).
const CRD_DIR = process.env['VAULTGATE_CRD_DIR'] ?? new URL('../../charts/vaultgate/crds/', import.meta.url).pathname;

let shared: Promise<ControlPlane> | undefined;

/** Started on first use by either suite; stopped once, after both (the suites' own teardowns are no-ops). */
function controlPlane(): Promise<ControlPlane> {
  shared ??= startControlPlane({ controllerManager: true, vault: !baoSkip });
  return shared;
}
const noTeardown = (): Promise<void> => Promise.resolve();

after(async () => {
  const cp = await shared?.catch(() => undefined);
  await cp?.stop();
});

/**
 * After compact() restarts the apiserver, each CRD's watch cache is rebuilt lazily and, until ready, a watch
 * gets 429 "storage is (re)initializing" (ResilientWatchCacheInitialization, k8s >= 1.31) rather than the 410 the
 * contract asks about. Opening a short watch on every served CRD until it is accepted makes old RVs plain 410.
 */
async function warmWatchCaches(cp: ControlPlane): Promise<void> {
  const crds = await cp.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
  const items =
    (
      crds.body as {
        items?: Array<{
          spec: { group: string; names: { plural: string }; versions: Array<{ name: string; served: boolean }> };
        }>;
      }
    ).items ?? [];
  await Promise.all(
    items.flatMap((crd) =>
      crd.spec.versions
        .filter((v) => v.served)
        .map((v) =>
          waitFor(
            async () => {
              const res = await cp.request(
                'GET',
                `/apis/${crd.spec.group}/${v.name}/${crd.spec.names.plural}?watch=1&timeoutSeconds=1&labelSelector=harness.vaultgate.io%2Fnone%3Dx`,
              );
              return res.status === 429 ? undefined : true;
            },
            { what: `watch cache of ${crd.spec.names.plural}.${crd.spec.group}`, timeoutMs: 30_000, intervalMs: 250 },
          ),
        ),
    ),
  );
}

const namespacesMade = new Set<string>();

async function ensureServiceAccount(cp: ControlPlane, ns: string, sa: string): Promise<void> {
  if (!namespacesMade.has(ns)) {
    await cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    namespacesMade.add(ns);
  }
  await cp.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: ns } });
}

if (tier.skip) {
  void describe('contract suites against the real servers', { skip: tier.skip }, () => {});
} else {
  describeKubeContract(
    'real kube-apiserver v1.34.4 + etcd v3.6.4',
    async () => {
      const cp = await controlPlane();
      const crds = existsSync(CRD_DIR) ? readdirSync(CRD_DIR).filter((f) => /\.ya?ml$/.test(f)) : [];
      if (crds.length === 0) throw new Error(`no CRDs in ${CRD_DIR}: run \`npm run generate\` first`);
      await cp.installCRDs(CRD_DIR);
      const kubeconfig = new KubeConfig();
      kubeconfig.loadFromFile(cp.kubeconfigPath);
      await cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-contract' } });
      return {
        kubeconfig,
        namespace: 'kube-contract',
        compact: async () => {
          await cp.compact();
          await warmWatchCaches(cp);
        },
      };
    },
    noTeardown,
  );

  if (baoSkip) {
    void describe('Vault contract: real OpenBao dev server', { skip: baoSkip }, () => {});
  } else {
    describeVaultContract(
      'real OpenBao dev server',
      async () => {
        const cp = await controlPlane();
        return {
          addr: cp.vaultAddr ?? '',
          rootToken: cp.vaultToken ?? '',
          kubernetes: {
            mount: 'kubernetes',
            // Default audiences (the apiserver's issuer): what a role WITHOUT `audience` accepts.
            jwtFor: async (ns: string, sa: string) => {
              await ensureServiceAccount(cp, ns, sa);
              return cp.serviceAccountToken(ns, sa);
            },
          },
          seal: { seal: () => bao(cp).seal(), unseal: () => bao(cp).unseal() },
        };
      },
      noTeardown,
    );

    // The fast tier holds the simulator to answers recorded from OpenBao; they must still be OpenBao's.
    void describe(`recorded answers (${RECORD_COMMAND}) are what this OpenBao answers`, () => {
      void test('every answer of test/contract/openbao-answers.json, asked again', async () => {
        const cp = await controlPlane();
        const recorded = JSON.parse(readFileSync(ANSWERS_FILE, 'utf8')) as AnswersFile;
        assert.equal(
          recorded.server.split(' (')[0],
          bao(cp).version.split(' (')[0],
          'recorded from this OpenBao version',
        );
        const now = await ask(cp.vaultAddr ?? '', cp.vaultToken ?? '');
        const changed = Object.keys(recorded.answers).filter(
          (k) => JSON.stringify(now[k]) !== JSON.stringify(recorded.answers[k]),
        );
        assert.deepEqual(
          changed.map((k) => `${k}: recorded ${JSON.stringify(recorded.answers[k])}, now ${JSON.stringify(now[k])}`),
          [],
          `re-record with ${RECORD_COMMAND}`,
        );
      });
    });

    // The same suite against the simulator, with the same real ServiceAccount tokens (RS256 from the
    // apiserver) verified by a real TokenReview: whatever OpenBao answers above, the simulator must answer.
    let simVault: SimulatedVault | undefined;
    describeVaultContract(
      'simulator (logins through a real TokenReview)',
      async () => {
        const cp = await controlPlane();
        simVault = await startSimulatedVault(cp, { log: () => undefined });
        const v = simVault;
        return {
          addr: v.addr,
          rootToken: v.rootToken,
          kubernetes: {
            mount: 'kubernetes',
            jwtFor: async (ns: string, sa: string) => {
              await ensureServiceAccount(cp, ns, sa);
              return cp.serviceAccountToken(ns, sa);
            },
          },
          seal: { seal: () => Promise.resolve(v.sim.seal()), unseal: () => Promise.resolve(v.sim.unseal()) },
        };
      },
      async () => {
        await simVault?.stop();
      },
    );
  }
}
