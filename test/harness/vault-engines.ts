// OpenBao 2.7.2 secrets engines as a Vault admin (and, for the kubernetes engine, a cluster admin) set them
// up for the credential tests, with the root token; the tenant's identity is tenant-store.ts's. The same
// setup as test/real/dynamic-secret-pki.test.ts and dynamic-secret-kubernetes.test.ts write inline.
import type { E2EStack } from './e2e-stack.ts';

type Admin = Pick<E2EStack, 'vaultRoot' | 'cp'>;

/** The kubernetes engine's own ServiceAccount. */
export const KUBERNETES_ENGINE_SA = { namespace: 'vaultgate-system', name: 'openbao-k8s-engine' } as const;

async function must(admin: Pick<E2EStack, 'vaultRoot'>, method: string, path: string, body?: unknown): Promise<void> {
  const r = await admin.vaultRoot(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
}

/** pki at `pki/`: a root CA (24 h) and role `web` issuing EC P-256 certificates for *.svc.test, at most 10 min. */
export async function setUpPkiEngine(admin: Pick<E2EStack, 'vaultRoot'>): Promise<void> {
  await must(admin, 'POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '24h' } });
  await must(admin, 'POST', 'pki/root/generate/internal', { common_name: 'vaultgate test root', ttl: '24h' });
  await must(admin, 'POST', 'pki/roles/web', {
    allowed_domains: ['svc.test'],
    allow_subdomains: true,
    max_ttl: '10m',
    key_type: 'ec',
    key_bits: 256,
  });
}

/**
 * The kubernetes engine at `kubernetes/` against the harness's apiserver, and its role `app`: tokens of
 * `ttlSeconds` (the apiserver refuses a TokenRequest under 600 s) for a ServiceAccount it creates in
 * `namespace` with a generated Role that may get and list ConfigMaps. The engine's ServiceAccount may
 * create and delete ServiceAccounts, their tokens, Roles and RoleBindings there, and holds what the
 * generated Role grants (RBAC lets no one grant more than they hold). Creates the Namespace.
 */
export async function setUpKubernetesEngine(admin: Admin, o: { namespace: string; ttlSeconds: number }): Promise<void> {
  const configMaps = { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] };
  await admin.cp.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: KUBERNETES_ENGINE_SA },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: KUBERNETES_ENGINE_SA.name, namespace: o.namespace },
      rules: [
        { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['create', 'delete', 'get'] },
        { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles', 'rolebindings'],
          verbs: ['create', 'delete', 'get'],
        },
        configMaps,
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: KUBERNETES_ENGINE_SA.name, namespace: o.namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: KUBERNETES_ENGINE_SA.name },
      subjects: [{ kind: 'ServiceAccount', ...KUBERNETES_ENGINE_SA }],
    },
  ]);
  const jwt = await admin.cp.serviceAccountToken(
    KUBERNETES_ENGINE_SA.namespace,
    KUBERNETES_ENGINE_SA.name,
    undefined,
    3600,
  );
  await must(admin, 'POST', 'sys/mounts/kubernetes', { type: 'kubernetes' });
  await must(admin, 'POST', 'kubernetes/config', {
    kubernetes_host: admin.cp.server,
    kubernetes_ca_cert: admin.cp.caPem,
    service_account_jwt: jwt,
    disable_local_ca_jwt: true,
  });
  await must(admin, 'POST', 'kubernetes/roles/app', {
    allowed_kubernetes_namespaces: [o.namespace],
    token_default_ttl: `${o.ttlSeconds}s`,
    token_max_ttl: `${o.ttlSeconds}s`,
    generated_role_rules: JSON.stringify({ rules: [configMaps] }),
  });
}
