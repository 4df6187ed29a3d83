// Where the objects and Vault's state come from: manifest files (multi-document YAML, read as the
// apiserver reads YAML 1.1-ish input), a live cluster (client-node 1.4 listing the CRs), and a live Vault
// (the controller's Vault adapter, policies and roles under our prefix only).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { SysApi } from '../../vault/types.ts';
import type { KubeObj } from './model.ts';

/** What Vault holds now under our prefix. */
export interface VaultCurrent {
  /** Policy name → stored text. */
  policies: Map<string, string>;
  /** `${mount}/${name}` → role as read (any extra fields Vault returns are ignored in comparisons). */
  roles: Map<string, { mount: string; name: string; role: Record<string, unknown> }>;
}

/** Every object in the files (directories are walked for .yaml/.yml/.json). `kind: List` is flattened. */
export function loadManifests(paths: readonly string[]): KubeObj[] {
  const out: KubeObj[] = [];
  const files: string[] = [];
  const walk = (p: string) => {
    if (statSync(p).isDirectory()) for (const n of readdirSync(p).sort()) walk(join(p, n));
    else if (/\.(ya?ml|json)$/i.test(p) || paths.includes(p)) files.push(p);
  };
  for (const p of paths) walk(p);
  for (const f of files) {
    let n = 0;
    for (const doc of parseAllDocuments(readFileSync(f, 'utf8'), { version: '1.1' })) {
      n++;
      if (doc.errors.length) throw new Error(`${f}: ${doc.errors[0]?.message ?? 'invalid YAML'}`);
      let v: unknown;
      try {
        v = doc.toJS() as unknown;
      } catch (err) {
        throw new Error(`${f}: document ${n}: ${err instanceof Error ? err.message : String(err)}`);
      }
      push(v, out, `${f}: document ${n}`);
    }
  }
  return out;
}

/**
 * A manifest is read whole or refused: an object without a string metadata.name (or one that is not a
 * mapping at all) used to be dropped silently, so `plan` and `audit access` answered for fewer objects
 * than they were given. It is an input error now (the commands exit 2 naming file and document).
 */
function push(v: unknown, out: KubeObj[], where: string): void {
  if (v === null || v === undefined) return; // an empty document
  if (typeof v !== 'object' || Array.isArray(v))
    throw new Error(`${where}: not a Kubernetes object (a mapping with apiVersion, kind and metadata)`);
  const o = v as KubeObj & { items?: unknown[] };
  if (typeof o.kind === 'string' && o.kind.endsWith('List') && Array.isArray(o.items)) {
    o.items.forEach((item, i) => {
      push(item, out, `${where}, items[${i}]`);
    });
    return;
  }
  const meta = o.metadata as unknown;
  if (
    typeof meta !== 'object' ||
    meta === null ||
    Array.isArray(meta) ||
    typeof (meta as { name?: unknown }).name !== 'string' ||
    (meta as { name: string }).name === ''
  ) {
    throw new Error(
      `${where}: ${typeof o.kind === 'string' ? o.kind : 'object'} without metadata.name (a non-empty string): refusing to answer for fewer objects than given`,
    );
  }
  const ns = (meta as { namespace?: unknown }).namespace;
  if (ns !== undefined && typeof ns !== 'string')
    throw new Error(
      `${where}: ${String(o.kind)} ${(meta as { name: string }).name}: metadata.namespace must be a string`,
    );
  out.push(o);
}

/** VaultPolicies, VaultRoleBindings, VaultGuardrails and Namespaces from the cluster in the kubeconfig. */
export async function loadFromCluster(opts: { kubeconfig?: string; context?: string }): Promise<KubeObj[]> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  if (opts.context) kc.setCurrentContext(opts.context);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const out: KubeObj[] = [];
  for (const [plural, kind] of [
    ['vaultpolicies', 'VaultPolicy'],
    ['vaultrolebindings', 'VaultRoleBinding'],
    ['vaultguardrails', 'VaultGuardrail'],
  ] as const) {
    const list = (await custom.listClusterCustomObject({ group: 'vaultgate.io', version: 'v1alpha1', plural })) as {
      items?: KubeObj[];
    };
    for (const item of list.items ?? []) out.push({ ...item, apiVersion: 'vaultgate.io/v1alpha1', kind });
  }
  const namespaces = await core.listNamespace();
  for (const n of namespaces.items) {
    if (n.metadata?.name)
      out.push({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: n.metadata.name, labels: n.metadata.labels ?? {} },
      });
  }
  return out;
}

/** Policies and roles under `<prefix>.` in Vault, on the given auth mounts. */
export async function readVaultState(sys: SysApi, prefix: string, mounts: readonly string[]): Promise<VaultCurrent> {
  const policies = new Map<string, string>();
  for (const name of await sys.listPolicies()) {
    if (!name.startsWith(`${prefix}.`)) continue;
    const text = await sys.readPolicy(name);
    if (text !== undefined) policies.set(name, text);
  }
  const roles: VaultCurrent['roles'] = new Map();
  for (const mount of [...new Set(mounts)]) {
    for (const name of await sys.listKubernetesRoles(mount)) {
      if (!name.startsWith(`${prefix}.`)) continue;
      const role = await sys.readKubernetesRole(mount, name);
      if (role) roles.set(`${mount}/${name}`, { mount, name, role: { ...role } });
    }
  }
  return { policies, roles };
}

/** A SysApi over the controller's Vault adapter with a token from the environment (never printed). */
export async function vaultSysFromEnv(opts: {
  address?: string;
  tokenEnv?: string;
  timeoutMs?: number;
}): Promise<{ sys: SysApi; close(): void }> {
  const address = opts.address ?? process.env.VAULT_ADDR;
  const token = process.env[opts.tokenEnv ?? 'VAULT_TOKEN'];
  if (!address) throw new Error('--vault needs a Vault address: --vault-addr or VAULT_ADDR');
  if (!token) throw new Error(`--vault needs a token in $${opts.tokenEnv ?? 'VAULT_TOKEN'}`);
  const { createVaultClient, createSysApi } = await import('../../vault/index.ts');
  const client = createVaultClient({
    address,
    timeoutMs: opts.timeoutMs ?? 10_000,
    ...(process.env.VAULT_NAMESPACE ? { namespace: process.env.VAULT_NAMESPACE } : {}),
  });
  const sys = createSysApi({ request: (req) => client.request({ ...req, token }) });
  return { sys, close: () => client.close() };
}
