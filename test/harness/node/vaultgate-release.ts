// vaultgate installed by `helm install` into the one-node cluster, as a user installs it: the chart
// unchanged except the image reference (the archive built by test/image/, imported into containerd) and
// pullPolicy Never (nothing can be pulled here), and vault.address pointing at the OpenBao the pods reach
// on the node IP. The controller's Vault identity is set up as NOTES.txt step 4 says (bootstrap policy +
// kubernetes-auth role for its ServiceAccount). Shared by test/real/pods.test.ts and `vaultgate dev --pods`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { OciImage } from '../../image/oci.ts';
import { REPO_ROOT } from '../../image/images.ts';
import type { ControlPlane } from '../control-plane.ts';
import { vaultRequest } from '../vault.ts';

export const CHART = join(REPO_ROOT, 'charts/vaultgate');
export const RELEASE = 'vaultgate';
export const RELEASE_NS = 'vaultgate';

/** `--set` flags for the image built here: repository, tag, pullPolicy Never. */
export function imageValues(image: OciImage): string[] {
  const at = image.ref.lastIndexOf(':');
  return [
    '--set',
    `image.repository=${image.ref.slice(0, at)}`,
    '--set',
    `image.tag=${image.ref.slice(at + 1)}`,
    '--set',
    'image.pullPolicy=Never',
  ];
}

interface Doc {
  kind?: string;
  metadata?: { labels?: Record<string, string> };
  spec?: { template?: { spec?: { serviceAccountName?: string } } };
}

/** The controller Deployment's ServiceAccount as the chart renders it. */
export async function controllerServiceAccount(cp: ControlPlane): Promise<string> {
  const docs = parseAllDocuments(await cp.helm(['template', RELEASE, CHART, '-n', RELEASE_NS])).map(
    (d) => d.toJS() as Doc | null,
  );
  const d = docs.find(
    (x) => x?.kind === 'Deployment' && x.metadata?.labels?.['app.kubernetes.io/component'] === 'controller',
  );
  const sa = d?.spec?.template?.spec?.serviceAccountName;
  if (!sa) throw new Error('the chart renders no controller Deployment with a serviceAccountName');
  return sa;
}

/** NOTES.txt step 4 with the Vault API: bootstrap policy and the controller's kubernetes-auth role. */
export async function grantControllerVaultIdentity(cp: ControlPlane): Promise<void> {
  if (!cp.vaultAddr || !cp.vaultToken) throw new Error('start Vault first (cp.startVault)');
  const v = { addr: cp.vaultAddr, token: cp.vaultToken };
  const sa = await controllerServiceAccount(cp);
  const must = async (path: string, body: unknown): Promise<void> => {
    const res = await vaultRequest(v, 'POST', path, body);
    if (res.status >= 300) throw new Error(`POST ${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  };
  await must('sys/policies/acl/vaultgate-controller', {
    policy: readFileSync(join(CHART, 'files/bootstrap-policy.hcl'), 'utf8'),
  });
  await must('auth/kubernetes/role/vaultgate-controller', {
    bound_service_account_names: [sa],
    bound_service_account_namespaces: [RELEASE_NS],
    token_policies: ['vaultgate-controller'],
    token_ttl: '1h',
  });
}

/** `helm install --wait` of the chart with the image built here; returns helm's output. */
export function helmInstall(cp: ControlPlane, image: OciImage, extra: string[] = [], timeout = '5m'): Promise<string> {
  if (!cp.vaultAddr) throw new Error('start Vault first (cp.startVault)');
  return cp.helm(
    [
      'install',
      RELEASE,
      CHART,
      '-n',
      RELEASE_NS,
      '--create-namespace',
      ...imageValues(image),
      '--set',
      `vault.address=${cp.vaultAddr}`,
      '--wait',
      `--timeout=${timeout}`,
      ...extra,
    ],
    { timeoutMs: 15 * 60_000 },
  );
}
