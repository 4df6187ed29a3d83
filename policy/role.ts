// VaultRoleBinding → kubernetes-auth role body, and "does Vault's role already say that?".
// Vault answers a role read with TTLs normalised to seconds and with fields we never set
// (alias_name_source, token_bound_cidrs, legacy `policies`, ...): only the fields we write are compared,
// as VCO's IsEquivalentToDesiredState does (DeepEqual on desired keys only).
import { durationSeconds } from '../schemas/ttl.ts';
import type { VaultRoleBindingSpec } from '../schemas/types.ts';
import type { KubernetesAuthRole } from '../vault/types.ts';
import type { PolicyRules } from './acl.ts';

export const DEFAULT_AUTH_MOUNT = 'kubernetes';
export const DEFAULT_TOKEN_TTL = '1h';
export const DEFAULT_TOKEN_MAX_TTL = '24h';

/**
 * The lease rules of the `default` policy Vault and OpenBao create at initialisation (openbao/openbao
 * vault/policy_store.go defaultPolicy, the same in hashicorp/vault; read back from OpenBao 2.7.2's
 * sys/policy/default): renew and look up a lease by the id in the body. Every token of a role written
 * here carries `default` (the body never sets token_no_default_policy). An administrator may edit that
 * policy; these are its rules as shipped, so a check relying on them may miss an edited default policy
 * but never refuses what the shipped one grants.
 */
export const SHIPPED_DEFAULT_LEASE_RULES: PolicyRules = Object.freeze({
  name: 'default',
  rules: Object.freeze([
    Object.freeze({ path: 'sys/leases/renew', capabilities: Object.freeze(['update']) }),
    Object.freeze({ path: 'sys/leases/lookup', capabilities: Object.freeze(['update']) }),
  ]),
});

/** VaultRoleBinding.spec, as the CRD schema generates it. */
export type RoleBindingSpec = VaultRoleBindingSpec;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const optionalString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * A VaultRoleBinding's spec as read from an untyped object (a manifest, a cache entry, an admission
 * request): fields of the wrong type are dropped rather than trusted. `vaultgate audit access` and
 * admission's VaultDynamicSecret access rules read bindings through it.
 */
export function roleBindingSpecOf(spec: Record<string, unknown>): RoleBindingSpec {
  return {
    serviceAccounts: strings(spec.serviceAccounts),
    policies: strings(spec.policies),
    authMount: optionalString(spec.authMount),
    tokenTTL: optionalString(spec.tokenTTL),
    tokenMaxTTL: optionalString(spec.tokenMaxTTL),
    audience: optionalString(spec.audience),
  };
}

export interface DesiredRole {
  mount: string;
  body: {
    bound_service_account_names: string[];
    bound_service_account_namespaces: string[];
    token_policies: string[];
    token_ttl: number;
    token_max_ttl: number;
    /** Always sent ('' = no audience check) so removing `spec.audience` clears it in Vault. */
    audience: string;
  };
}

/**
 * The role vaultgate writes for a binding in `namespace`, bound to the Vault names of `boundPolicies`
 * (the caller decides which referenced VaultPolicies are bindable). Throws on an unparsable duration:
 * admission refuses those, so reaching it means the webhook was bypassed.
 */
export function desiredRole(
  namespace: string,
  spec: RoleBindingSpec,
  boundPolicyVaultNames: readonly string[],
): DesiredRole {
  const ttl = durationSeconds(spec.tokenTTL ?? DEFAULT_TOKEN_TTL);
  const maxTtl = durationSeconds(spec.tokenMaxTTL ?? DEFAULT_TOKEN_MAX_TTL);
  if (ttl === undefined) throw new Error(`spec.tokenTTL "${spec.tokenTTL}" is not a duration such as "1h" or "90s"`);
  if (maxTtl === undefined) throw new Error(`spec.tokenMaxTTL "${spec.tokenMaxTTL}" is not a duration such as "24h"`);
  return {
    mount: normaliseMount(spec.authMount ?? DEFAULT_AUTH_MOUNT),
    body: {
      bound_service_account_names: sortedUnique(spec.serviceAccounts),
      bound_service_account_namespaces: [namespace],
      token_policies: sortedUnique(boundPolicyVaultNames),
      token_ttl: ttl,
      token_max_ttl: maxTtl,
      audience: spec.audience ?? '',
    },
  };
}

/** Whether Vault's role has every field we set with the same meaning (lists as sets, TTLs in seconds). */
export function roleMatches(desired: DesiredRole['body'], actual: KubernetesAuthRole | undefined): boolean {
  if (!actual) return false;
  return (
    sameSet(desired.bound_service_account_names, asStrings(actual.bound_service_account_names)) &&
    sameSet(desired.bound_service_account_namespaces, asStrings(actual.bound_service_account_namespaces)) &&
    sameSet(desired.token_policies, asStrings(actual.token_policies)) &&
    seconds(actual.token_ttl) === desired.token_ttl &&
    seconds(actual.token_max_ttl) === desired.token_max_ttl &&
    (typeof actual.audience === 'string' ? actual.audience : '') === desired.audience
  );
}

/** Field names that differ, for a drift Event (values are not secret, but names are enough). */
export function roleDifferences(desired: DesiredRole['body'], actual: KubernetesAuthRole): string[] {
  const diffs: string[] = [];
  if (!sameSet(desired.bound_service_account_names, asStrings(actual.bound_service_account_names)))
    diffs.push('bound_service_account_names');
  if (!sameSet(desired.bound_service_account_namespaces, asStrings(actual.bound_service_account_namespaces)))
    diffs.push('bound_service_account_namespaces');
  if (!sameSet(desired.token_policies, asStrings(actual.token_policies))) diffs.push('token_policies');
  if (seconds(actual.token_ttl) !== desired.token_ttl) diffs.push('token_ttl');
  if (seconds(actual.token_max_ttl) !== desired.token_max_ttl) diffs.push('token_max_ttl');
  if ((typeof actual.audience === 'string' ? actual.audience : '') !== desired.audience) diffs.push('audience');
  return diffs;
}

export function normaliseMount(mount: string): string {
  return mount.replace(/^\/+|\/+$/g, '').replace(/^auth\//, '');
}

function seconds(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return /^\d+$/.test(v) ? Number(v) : durationSeconds(v);
  return undefined;
}

function asStrings(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string') return v === '' ? [] : v.split(',');
  return [];
}

function sortedUnique(xs: readonly string[]): string[] {
  return [...new Set(xs)].sort();
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}
