// The desired state vaultgate's objects describe, as Vault will see it: each VaultPolicy as a Vault
// policy (rules with {{namespace}} expanded, raw `spec.policy` text parsed by policy/parse.ts), each
// VaultRoleBinding as a kubernetes-auth role bound to ServiceAccounts of its namespace. Pure.
import { specRules } from '../policy/spec-rules.ts';
import type { AclRule, PolicyRules } from '../policy/acl.ts';
import { DEFAULT_PREFIX, vaultName } from '../schemas/vault-names.ts';
import { durationSeconds } from '../schemas/duration.ts';

export interface KubeMeta { name: string; namespace?: string; uid?: string; labels?: Record<string, string> }
export interface KubeObj { apiVersion?: string; kind?: string; metadata: KubeMeta; spec?: Record<string, unknown> }

export interface DesiredPolicy {
  namespace: string;
  name: string;
  uid?: string;
  vaultName: string;
  /** Rules as Vault will hold them ({{namespace}} expanded). */
  rules: AclRule[];
  /** Set when `spec.policy` could not be parsed: the policy then grants nothing here. */
  parseErrors?: string[];
}

export interface DesiredRole {
  namespace: string;
  name: string;
  uid?: string;
  vaultName: string;
  mount: string;
  serviceAccounts: string[];
  /** VaultPolicy names as written (same namespace). */
  policyNames: string[];
  /** The role body written to `auth/<mount>/role/<vaultName>`. */
  body: {
    bound_service_account_names: string[];
    bound_service_account_namespaces: string[];
    token_policies: string[];
    token_ttl: number;
    token_max_ttl: number;
    audience?: string;
  };
}

export interface DesiredState {
  prefix: string;
  policies: DesiredPolicy[];
  roles: DesiredRole[];
  guardrails: KubeObj[];
  /** Namespace labels known from Namespace objects (for guardrail selectors). */
  namespaceLabels: Map<string, Record<string, string>>;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The rules of a VaultPolicy (rules[] or parsed `policy` text), `{{namespace}}` expanded. */
export function policyRules(obj: KubeObj): { rules: AclRule[]; errors?: string[] } {
  return specRules(obj.spec, obj.metadata.namespace ?? 'default');
}

/** The role a VaultRoleBinding becomes (defaults from the project API: mount kubernetes, TTL 1h, max 24h). */
export function desiredRole(obj: KubeObj, prefix: string): DesiredRole {
  const ns = obj.metadata.namespace ?? 'default';
  const spec = obj.spec ?? {};
  const policyNames = strings(spec.policies);
  const sas = strings(spec.serviceAccounts);
  const ttl = durationSeconds(typeof spec.tokenTTL === 'string' ? spec.tokenTTL : '1h') ?? 3600;
  const maxTtl = durationSeconds(typeof spec.tokenMaxTTL === 'string' ? spec.tokenMaxTTL : '24h') ?? 86400;
  return {
    namespace: ns, name: obj.metadata.name, ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
    vaultName: vaultName(prefix, ns, obj.metadata.name),
    mount: typeof spec.authMount === 'string' && spec.authMount ? spec.authMount.replace(/^\/+|\/+$/g, '') : 'kubernetes',
    serviceAccounts: sas, policyNames,
    body: {
      bound_service_account_names: [...sas].sort(),
      bound_service_account_namespaces: [ns],
      token_policies: policyNames.map((p) => vaultName(prefix, ns, p)).sort(),
      token_ttl: ttl, token_max_ttl: maxTtl,
      ...(typeof spec.audience === 'string' && spec.audience ? { audience: spec.audience } : {}),
    },
  };
}

export const KIND_GROUP = 'vaultgate.io';

function isKind(o: KubeObj, kind: string): boolean {
  return o.kind === kind && (o.apiVersion ?? '').startsWith(`${KIND_GROUP}/`);
}

/** Build the desired state from objects (manifests or a cluster listing). Unknown kinds are ignored. */
export function desiredState(objects: readonly KubeObj[], prefix = DEFAULT_PREFIX): DesiredState {
  const policies: DesiredPolicy[] = [];
  const roles: DesiredRole[] = [];
  const guardrails: KubeObj[] = [];
  const namespaceLabels = new Map<string, Record<string, string>>();
  for (const o of objects) {
    if (!o?.metadata?.name) continue;
    if (isKind(o, 'VaultPolicy')) {
      const ns = o.metadata.namespace ?? 'default';
      const { rules, errors } = policyRules(o);
      policies.push({ namespace: ns, name: o.metadata.name, ...(o.metadata.uid ? { uid: o.metadata.uid } : {}), vaultName: vaultName(prefix, ns, o.metadata.name), rules, ...(errors ? { parseErrors: errors } : {}) });
    } else if (isKind(o, 'VaultRoleBinding')) {
      roles.push(desiredRole(o, prefix));
    } else if (isKind(o, 'VaultGuardrail')) {
      guardrails.push(o);
    } else if (o.kind === 'Namespace' && (o.apiVersion ?? 'v1') === 'v1') {
      namespaceLabels.set(o.metadata.name, { ...(o.metadata.labels ?? {}) });
    }
  }
  const byKey = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
  return { prefix, policies: policies.sort(byKey), roles: roles.sort(byKey), guardrails, namespaceLabels };
}

/** The policies a role's tokens carry, as ACL input (name = `namespace/name` of the VaultPolicy). */
export function rolePolicies(state: DesiredState, role: DesiredRole): { found: PolicyRules[]; missing: string[] } {
  const found: PolicyRules[] = [];
  const missing: string[] = [];
  for (const name of role.policyNames) {
    const p = state.policies.find((x) => x.namespace === role.namespace && x.name === name);
    if (p) found.push({ name: `${p.namespace}/${p.name}`, rules: p.rules });
    else missing.push(name);
  }
  return { found, missing };
}
