// owner: A
// The contract suites (test/contract/*.contract.ts) against the REAL servers: kube-apiserver 1.34 + etcd
// 3.6 for the Kubernetes contract, OpenBao `server -dev` for the Vault contract (when a bao binary is
// available). A simulator that disagrees with these answers is the simulator's bug.
// One control plane for the file, shared by both suites, stopped after the last one.
import { after, describe } from 'node:test';
import { existsSync, readdirSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.ts';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';
import { describeKubeContract } from '../contract/kube.contract.ts';
import { describeVaultContract } from '../contract/vault.contract.ts';

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
  const items = (crds.body as { items?: Array<{ spec: { group: string; names: { plural: string }; versions: Array<{ name: string; served: boolean }> } }> }).items ?? [];
  await Promise.all(items.flatMap((crd) => crd.spec.versions.filter((v) => v.served).map((v) =>
    waitFor(async () => {
      const res = await cp.request('GET', `/apis/${crd.spec.group}/${v.name}/${crd.spec.names.plural}?watch=1&timeoutSeconds=1&labelSelector=harness.vaultgate.io%2Fnone%3Dx`);
      return res.status === 429 ? undefined : true;
    }, { what: `watch cache of ${crd.spec.names.plural}.${crd.spec.group}`, timeoutMs: 30_000, intervalMs: 250 }))));
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
      return { kubeconfig, namespace: 'kube-contract', compact: async () => { await cp.compact(); await warmWatchCaches(cp); } };
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
        };
      },
      noTeardown,
    );
  }
}
