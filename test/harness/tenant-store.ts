// A tenant's Vault identity and its SecretStore, as a Vault admin and the tenant set them up for the
// credential tests: an ACL policy with the tenant's rules, a kubernetes-auth role bound to one
// ServiceAccount of the namespace (audience `vault`, 1 h tokens, not periodic), the Namespace and the
// ServiceAccount, and an ESO-shaped SecretStore logging in as that role; returns once the store is Ready.
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

/** The lease rules a credential lifecycle needs besides the path itself. */
export const LEASE_RULES = [
  'path "sys/leases/renew" { capabilities = ["update"] }',
  'path "sys/leases/revoke" { capabilities = ["update"] }',
  'path "sys/leases/lookup" { capabilities = ["update"] }',
] as const;

export async function createTenantStore(stack: E2EStack, t: TenantStore): Promise<void> {
  const sa = t.serviceAccount ?? 'app';
  const store = t.storeName ?? 'vault';
  const must = async (method: string, path: string, body: unknown): Promise<void> => {
    const r = await stack.vaultRoot(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await must('PUT', `sys/policies/acl/${t.role}`, { policy: t.rules.join('\n') });
  await must('POST', `auth/kubernetes/role/${t.role}`, {
    bound_service_account_names: [sa],
    bound_service_account_namespaces: [t.namespace],
    audience: 'vault',
    token_policies: [t.role],
    token_ttl: '1h',
    token_max_ttl: '24h',
  });
  await stack.cp.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: t.namespace } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: t.namespace } },
  ]);
  await stack.kubectlApply({
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: { name: store, namespace: t.namespace },
    spec: {
      provider: {
        vault: {
          server: stack.vault.addr,
          path: 'secret',
          version: 'v2',
          auth: {
            kubernetes: {
              mountPath: 'kubernetes',
              role: t.role,
              serviceAccountRef: { name: sa, audiences: ['vault'] },
            },
          },
        },
      },
    },
  });
  await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=90s', '-n', t.namespace, `secretstore/${store}`]);
}
