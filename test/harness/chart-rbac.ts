// The chart's RBAC on a real control plane, and vaultgate's processes running with exactly those rights:
// `helm template` renders the chart with the given values; its ServiceAccounts, (Cluster)Roles and
// (Cluster)RoleBindings are applied; each component gets a kubeconfig holding a TokenRequest token of its
// own ServiceAccount (what its pod would mount), and is started with the arguments the chart gives it
// that decide what it reads and writes (--namespace, --no-eso-kinds, --allowed-vault-server, leader
// election, audit). A request the Role does not allow is refused by the real apiserver's RBAC.
/* eslint-disable @typescript-eslint/no-unsafe-member-access -- rendered manifests are untyped YAML */
import { parseAllDocuments, stringify } from 'yaml';
import { render } from '../chart/render.ts';
import { type ControlPlane, startControlPlane } from './control-plane.ts';
import { type ControllerHandle, VaultgateProcesses, type WebhookHandle } from './e2e-processes.ts';
import { installAllCRDs } from './e2e-stack.ts';
import { kubeRequest } from './kube-http.ts';
import { waitFor } from './wait.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered manifests are untyped YAML
type Obj = Record<string, any>;

export const RELEASE_NAMESPACE = 'vaultgate';
const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
/** The chart arguments that decide what a component touches (the rest is pod plumbing: ports, files). */
const DECIDING =
  /^--(namespace|no-eso-kinds|allowed-vault-server|controller-class|name-prefix|leader-elect|no-leader-elect|leader-election-name|audit|audit-namespace|vault-flavor|vault-version)(=|$)/;

export interface ChartRbac {
  objects: Obj[];
  /** What the chart passes each component, filtered to DECIDING. */
  controllerArgs: string[];
  webhookArgs: string[];
  controllerKubeconfig: string;
  webhookKubeconfig: string;
  /** The webhook's own token in a file (its pod's token: the apiserver's audiences, no audience asked). */
  webhookTokenFile: string;
  /** The rendered webhook configurations (to point at the webhook the test runs). */
  webhookConfigYaml: string;
  /** A raw request to the apiserver as the controller's ServiceAccount. */
  asController(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

function deploymentArgs(objs: Obj[], component: string): string[] {
  const d = objs.find((o) => o.kind === 'Deployment' && String(o.metadata?.name).endsWith(`-${component}`));
  const args = (d?.spec?.template?.spec?.containers?.[0]?.args ?? []) as string[];
  return args.filter((a) => DECIDING.test(a));
}

/**
 * Renders the chart (release `rel` in namespace `vaultgate`), creates the release namespace and
 * `namespaces`, applies the RBAC objects and mints each component's token.
 */
export async function applyChartRbac(
  cp: ControlPlane,
  procs: VaultgateProcesses,
  opts: { set?: string[]; valuesFile?: string; namespaces?: string[] },
): Promise<ChartRbac> {
  const objects = render({
    namespace: RELEASE_NAMESPACE,
    ...(opts.valuesFile ? { valuesFile: opts.valuesFile } : {}),
    ...(opts.set ? { set: opts.set } : {}),
  });
  await cp.apply(
    [RELEASE_NAMESPACE, ...(opts.namespaces ?? [])].map((name) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    })),
  );
  await cp.apply(objects.filter((o) => RBAC_KINDS.has(String(o.kind))));
  const token = (component: string): Promise<string> =>
    cp.serviceAccountToken(RELEASE_NAMESPACE, `rel-vaultgate-${component}`, undefined, 4 * 3600);
  const controllerToken = await token('controller');
  const webhookToken = await token('webhook');
  const configs = objects.filter(
    (o) => o.kind === 'MutatingWebhookConfiguration' || o.kind === 'ValidatingWebhookConfiguration',
  );
  return {
    objects,
    controllerArgs: deploymentArgs(objects, 'controller'),
    webhookArgs: deploymentArgs(objects, 'webhook'),
    controllerKubeconfig: procs.writeTokenKubeconfig('controller-sa.kubeconfig', cp.server, cp.caPem, controllerToken),
    webhookKubeconfig: procs.writeTokenKubeconfig('webhook-sa.kubeconfig', cp.server, cp.caPem, webhookToken),
    webhookTokenFile: procs.writeSecretFile('webhook-sa.token', webhookToken),
    webhookConfigYaml: configs.map((c) => stringify(c)).join('---\n'),
    asController: (method, path, body) =>
      kubeRequest({ server: cp.server, caPem: cp.caPem, token: controllerToken }, method, path, body),
  };
}

/** The webhook as its pod runs it: its ServiceAccount's kubeconfig and token, the chart's arguments; registered with the chart's configurations. */
export async function startChartWebhook(
  cp: ControlPlane,
  procs: VaultgateProcesses,
  rbac: ChartRbac,
): Promise<WebhookHandle> {
  const webhook = await procs.startWebhook({
    kubeconfigPath: rbac.webhookKubeconfig,
    audit: rbac.webhookArgs.includes('--audit') ? { namespace: RELEASE_NAMESPACE } : false,
    extraArgs: [
      ...rbac.webhookArgs.filter((a) => a !== '--audit' && !a.startsWith('--audit-namespace')),
      '--service-account-token-file',
      rbac.webhookTokenFile,
    ],
  });
  const docs = parseAllDocuments(rbac.webhookConfigYaml).map((d) => d.toJS() as Obj);
  const yamlOf = (kind: string): string | undefined => {
    const found = docs.filter((d) => d.kind === kind);
    return found.length ? found.map((d) => stringify(d)).join('---\n') : undefined;
  };
  const mutatingYaml = yamlOf('MutatingWebhookConfiguration');
  const validatingYaml = yamlOf('ValidatingWebhookConfiguration');
  await cp.registerWebhooks({
    url: webhook.url,
    caBundlePem: webhook.caPem,
    ...(mutatingYaml ? { mutatingYaml } : {}),
    ...(validatingYaml ? { validatingYaml } : {}),
  });
  return webhook;
}

/** The controller as its pod runs it: its ServiceAccount's kubeconfig, the chart's arguments; Vault as root (its own bootstrap identity is not what this tests). */
export function startChartController(
  cp: ControlPlane,
  procs: VaultgateProcesses,
  rbac: ChartRbac,
  extraArgs: string[] = [],
): Promise<ControllerHandle> {
  if (!cp.vaultAddr || !cp.vaultToken) throw new Error('startChartController needs startControlPlane({ vault: true })');
  return procs.startController({
    kubeconfigPath: rbac.controllerKubeconfig,
    vaultAddr: cp.vaultAddr,
    vaultToken: cp.vaultToken,
    leaderElectionNamespace: RELEASE_NAMESPACE,
    extraArgs: [...rbac.controllerArgs, ...extraArgs],
  });
}

/** A control plane with OpenBao, the CRDs, the chart's RBAC for `opts`, and both components running with it. */
export interface ChartInstall {
  cp: ControlPlane;
  procs: VaultgateProcesses;
  rbac: ChartRbac;
  /** GET as the admin; undefined unless 200. */
  get(path: string): Promise<Record<string, unknown> | undefined>;
  /** Waits (up to 2 min) for the object's Ready condition to have `status`; fails with the controller's log tail. */
  waitReady(path: string, status?: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

type Ready = { status?: string; reason?: string; message?: string };

export function readyOf(o: unknown): Ready | undefined {
  return (
    (o as { status?: { conditions?: Array<Ready & { type: string }> } } | undefined)?.status?.conditions ?? []
  ).find((c) => c.type === 'Ready');
}

export async function startChartInstall(opts: {
  set?: string[];
  valuesFile?: string;
  namespaces: string[];
  log?: (line: string) => void;
}): Promise<ChartInstall> {
  const log =
    opts.log ??
    ((line: string): void => {
      process.stderr.write(`${line}\n`);
    });
  const cp = await startControlPlane({ vault: true, log });
  const procs = new VaultgateProcesses(cp, { log });
  const stop = async (): Promise<void> => {
    await procs.stopAll();
    await cp.stop();
  };
  try {
    await installAllCRDs(cp);
    const rbac = await applyChartRbac(cp, procs, {
      ...opts,
      set: [`vault.address=${cp.vaultAddr!}`, ...(opts.set ?? [])],
    });
    await startChartWebhook(cp, procs, rbac);
    await startChartController(cp, procs, rbac);
    const get = async (path: string): Promise<Record<string, unknown> | undefined> => {
      const res = await cp.request('GET', path);
      return res.status === 200 ? (res.body as Record<string, unknown>) : undefined;
    };
    const waitReady = async (path: string, status = 'True'): Promise<Record<string, unknown>> => {
      let last: Record<string, unknown> | undefined;
      try {
        return await waitFor(
          async () => {
            last = await get(path);
            return readyOf(last)?.status === status ? last : undefined;
          },
          { what: `${path} Ready=${status}`, timeoutMs: 120_000, intervalMs: 300 },
        );
      } catch (err) {
        throw new Error(
          `${(err as Error).message}\nlast: ${JSON.stringify(last?.status ?? null)}\n${procs.logTail('controller')}`,
        );
      }
    };
    return { cp, procs, rbac, get, waitReady, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
