// A tenant's Vault identity and its SecretStore, as a Vault admin and the tenant set them up for the
// credential tests: an ACL policy with the tenant's rules, a kubernetes-auth role bound to one
// ServiceAccount of the namespace (audience `vault`, 1 h tokens, not periodic), the Namespace and the
// ServiceAccount, and an ESO-shaped SecretStore logging in as that role; `createTenantStore` returns once
// the store is Ready. The parts are exported for setups that apply the store later or not at all (the
// lifecycle bench: a store exists only for the system that uses one, created inside the measured window).
import type { ControlPlane } from './control-plane.ts';
import type { E2EStack } from './e2e-stack.ts';

export interface TenantStore {
  namespace: string;
  /** The auth role, also the policy's name. */
  role: string;
  /** HCL path rules of the role's policy. */
  rules: string[];
  /** Default `app`. */
  serviceAccount?: string;
  /** Default `vault`. */
  storeName?: string;
}

/** What the tenant's identity is made with: a root-token Vault call and the control plane. */
export interface TenantAdmin {
  vaultRoot(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  cp: Pick<ControlPlane, 'apply'>;
}

/** The lease rules a credential lifecycle needs besides the path itself. */
export const LEASE_RULES = [
  'path "sys/leases/renew" { capabilities = ["update"] }',
  'path "sys/leases/revoke" { capabilities = ["update"] }',
  'path "sys/leases/lookup" { capabilities = ["update"] }',
] as const;

/** The policy, the kubernetes-auth role, the Namespace and the ServiceAccount; no SecretStore. */
export async function createTenantIdentity(admin: TenantAdmin, t: TenantStore): Promise<void> {
  const must = async (method: string, path: string, body: unknown): Promise<void> => {
    const r = await admin.vaultRoot(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await must('PUT', `sys/policies/acl/${t.role}`, { policy: t.rules.join('\n') });
  await must('POST', `auth/kubernetes/role/${t.role}`, {
    bound_service_account_names: [serviceAccountOf(t)],
    bound_service_account_namespaces: [t.namespace],
    audience: 'vault',
    token_policies: [t.role],
    token_ttl: '1h',
    token_max_ttl: '24h',
  });
  await admin.cp.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: t.namespace } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccountOf(t), namespace: t.namespace } },
  ]);
}

/** ESO's Vault `auth` block logging in as the tenant's role (a SecretStore's, or an ESO generator's). */
export function tenantVaultAuth(t: TenantStore): object {
  return {
    kubernetes: {
      mountPath: 'kubernetes',
      role: t.role,
      serviceAccountRef: { name: serviceAccountOf(t), audiences: ['vault'] },
    },
  };
}

/** The tenant's SecretStore (KV v2 at `secret`) on the Vault at `server`. */
export function tenantSecretStore(server: string, t: TenantStore): object {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: { name: t.storeName ?? 'vault', namespace: t.namespace },
    spec: { provider: { vault: { server, path: 'secret', version: 'v2', auth: tenantVaultAuth(t) } } },
  };
}

export async function createTenantStore(stack: E2EStack, t: TenantStore): Promise<void> {
  await createTenantIdentity(stack, t);
  await stack.kubectlApply(tenantSecretStore(stack.vault.addr, t));
  const store = `secretstore/${t.storeName ?? 'vault'}`;
  await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=90s', '-n', t.namespace, store]);
}

const serviceAccountOf = (t: TenantStore): string => t.serviceAccount ?? 'app';
