// ACL policies (`sys/policies/acl/<name>`) and kubernetes-auth roles (`auth/<mount>/role/<name>`): the
// objects vaultgate's reconcilers own. The mount is a parameter of every role call, never a default.
import { trimMount } from './auth.ts';
import { isKind } from './errors.ts';
import type { KubernetesAuthRole, SysApi, VaultRequester } from './types.ts';

export function createSysApi(vault: VaultRequester): SysApi {
  return {
    async readPolicy(name) {
      const res = await readOrAbsent(
        vault.request<{ data?: { policy?: unknown }; policy?: unknown }>({
          operation: 'sys.policy.read',
          method: 'GET',
          path: `sys/policies/acl/${name}`,
        }),
      );
      if (!res) return undefined;
      const text = res.data?.policy ?? res.policy;
      return typeof text === 'string' ? text : undefined;
    },
    async writePolicy(name, text) {
      await vault.request({
        operation: 'sys.policy.write',
        method: 'PUT',
        path: `sys/policies/acl/${name}`,
        body: { policy: text },
      });
    },
    async deletePolicy(name) {
      await deleteIdempotent(
        vault.request({ operation: 'sys.policy.delete', method: 'DELETE', path: `sys/policies/acl/${name}` }),
      );
    },
    async listPolicies() {
      return listKeys(vault.request({ operation: 'sys.policy.list', method: 'LIST', path: 'sys/policies/acl' }));
    },
    async readKubernetesRole(mount, name) {
      const res = await readOrAbsent(
        vault.request<{ data?: Record<string, unknown> }>({
          operation: 'auth.kubernetes.role.read',
          method: 'GET',
          path: `auth/${trimMount(mount)}/role/${name}`,
        }),
      );
      return res?.data ? normaliseRole(res.data) : undefined;
    },
    async writeKubernetesRole(mount, name, role) {
      await vault.request({
        operation: 'auth.kubernetes.role.write',
        method: 'POST',
        path: `auth/${trimMount(mount)}/role/${name}`,
        body: { ...role },
      });
    },
    async deleteKubernetesRole(mount, name) {
      await deleteIdempotent(
        vault.request({
          operation: 'auth.kubernetes.role.delete',
          method: 'DELETE',
          path: `auth/${trimMount(mount)}/role/${name}`,
        }),
      );
    },
    async listKubernetesRoles(mount) {
      return listKeys(
        vault.request({
          operation: 'auth.kubernetes.role.list',
          method: 'LIST',
          path: `auth/${trimMount(mount)}/role`,
        }),
      );
    },
  };
}

/**
 * A 404 with an empty `errors` list means "no such object" (Vault's answer for a missing policy, role
 * or KV key) → `undefined`. A 404 with a message ("no handler for route", an auth mount that is not
 * enabled) is a real error and is rethrown.
 */
export async function readOrAbsent<T>(p: Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isKind(err, 'not_found') && !/no handler|unsupported path|route/i.test((err as Error).message))
      return undefined;
    throw err;
  }
}

/** Deletes of absent objects: Vault answers 204 already; tolerate a 404 from older servers/plugins. */
async function deleteIdempotent(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!isKind(err, 'not_found') || /no handler|route/i.test((err as Error).message)) throw err;
  }
}

/** LIST answers `{data:{keys:[…]}}`, or 404 when there is nothing under the prefix → []. */
export async function listKeys(p: Promise<unknown>): Promise<string[]> {
  const res = (await readOrAbsent(p)) as { data?: { keys?: unknown } } | undefined;
  const keys = res?.data?.keys;
  return Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : [];
}

/** Vault returns TTLs in seconds and may still report the deprecated `policies` alias of `token_policies`. */
function normaliseRole(data: Record<string, unknown>): KubernetesAuthRole {
  const arr = (v: unknown): string[] =>
    Array.isArray(v)
      ? v.filter((x): x is string => typeof x === 'string')
      : typeof v === 'string' && v
        ? v.split(',')
        : [];
  const tokenPolicies = arr(data.token_policies).length > 0 ? arr(data.token_policies) : arr(data.policies);
  const role: KubernetesAuthRole = {
    ...data,
    bound_service_account_names: arr(data.bound_service_account_names),
    bound_service_account_namespaces: arr(data.bound_service_account_namespaces),
    token_policies: tokenPolicies,
  };
  if (typeof role.audience !== 'string' || role.audience === '') delete role.audience;
  return role;
}
