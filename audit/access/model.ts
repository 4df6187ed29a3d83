// The desired state vaultgate's objects describe, as Vault will see it: each VaultPolicy as a Vault
// policy (rules with {{namespace}} expanded, raw `spec.policy` text parsed by policy/parse.ts), each
// VaultRoleBinding as a kubernetes-auth role bound to ServiceAccounts of its namespace. Pure. The role
// body comes from the controller's own function (policy/role.ts), so `vaultgate
// plan` shows exactly what the controller writes.
import { specRules } from '../../policy/spec-rules.ts';
import type { AclRule, PolicyRules } from '../../policy/acl.ts';
import {
  DEFAULT_AUTH_MOUNT,
  desiredRole as controllerRole,
  normaliseMount,
  roleBindingSpecOf,
  type DesiredRole as ControllerRole,
} from '../../policy/role.ts';
import { DEFAULT_PREFIX, vaultName } from '../../schemas/vault-names.ts';

export interface KubeMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
}
export interface KubeObj {
  apiVersion?: string;
  kind?: string;
  metadata: KubeMeta;
  spec?: Record<string, unknown>;
}

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
  body: ControllerRole['body'];
}

/** A VaultRoleBinding the controller refuses to write (e.g. an unparsable TTL): Vault is left as it is. */
export interface InvalidRole {
  namespace: string;
  name: string;
  vaultName: string;
  mount: string;
  error: string;
}

export interface DesiredState {
  prefix: string;
  policies: DesiredPolicy[];
  roles: DesiredRole[];
  invalidRoles: InvalidRole[];
  guardrails: KubeObj[];
  /** Namespace labels known from Namespace objects (for guardrail selectors). */
  namespaceLabels: Map<string, Record<string, string>>;
}

/** The rules of a VaultPolicy (rules[] or parsed `policy` text), `{{namespace}}` expanded. */
export function policyRules(obj: KubeObj): { rules: AclRule[]; errors?: string[] } {
  return specRules(obj.spec, obj.metadata.namespace ?? 'default');
}

const optionalString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The role a VaultRoleBinding becomes, bound to every policy it names (the controller binds each once its
 * VaultPolicy is Ready). Throws, as the controller refuses, on a spec it cannot write (bad TTL).
 */
export function desiredRole(obj: KubeObj, prefix: string): DesiredRole {
  const ns = obj.metadata.namespace ?? 'default';
  const spec = roleBindingSpecOf(obj.spec ?? {});
  const role = controllerRole(
    ns,
    spec,
    spec.policies.map((p) => vaultName(prefix, ns, p)),
  );
  return {
    namespace: ns,
    name: obj.metadata.name,
    ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
    vaultName: vaultName(prefix, ns, obj.metadata.name),
    mount: role.mount,
    serviceAccounts: spec.serviceAccounts,
    policyNames: spec.policies,
    body: role.body,
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
  const invalidRoles: InvalidRole[] = [];
  const guardrails: KubeObj[] = [];
  const namespaceLabels = new Map<string, Record<string, string>>();
  for (const o of objects) {
    if (!o?.metadata?.name) continue;
    if (isKind(o, 'VaultPolicy')) {
      const ns = o.metadata.namespace ?? 'default';
      const { rules, errors } = policyRules(o);
      policies.push({
        namespace: ns,
        name: o.metadata.name,
        ...(o.metadata.uid ? { uid: o.metadata.uid } : {}),
        vaultName: vaultName(prefix, ns, o.metadata.name),
        rules,
        ...(errors ? { parseErrors: errors } : {}),
      });
    } else if (isKind(o, 'VaultRoleBinding')) {
      try {
        roles.push(desiredRole(o, prefix));
      } catch (err) {
        const ns = o.metadata.namespace ?? 'default';
        const mount = normaliseMount(optionalString(o.spec?.authMount) ?? DEFAULT_AUTH_MOUNT);
        invalidRoles.push({
          namespace: ns,
          name: o.metadata.name,
          vaultName: vaultName(prefix, ns, o.metadata.name),
          mount,
          error: (err as Error).message,
        });
      }
    } else if (isKind(o, 'VaultGuardrail')) {
      guardrails.push(o);
    } else if (o.kind === 'Namespace' && (o.apiVersion ?? 'v1') === 'v1') {
      namespaceLabels.set(o.metadata.name, { ...(o.metadata.labels ?? {}) });
    }
  }
  const byKey = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) =>
    a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
  return {
    prefix,
    policies: policies.sort(byKey),
    roles: roles.sort(byKey),
    invalidRoles: invalidRoles.sort(byKey),
    guardrails,
    namespaceLabels,
  };
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
