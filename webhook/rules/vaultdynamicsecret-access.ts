// Rules "vaultdynamicsecret.access-*" and "vaultdynamicsecret.token-lifetime": what the credential's
// lifecycle asks of Vault, checked against the Vault identity of the store it names, from vaultgate's
// own model of that identity. When the store logs in with a kubernetes-auth role vaultgate writes (a
// VaultRoleBinding, found by its derived role name and mount), the role's policies are that binding's
// VaultPolicies plus Vault's default policy as shipped (policy/role.ts SHIPPED_DEFAULT_LEASE_RULES), and its tokens are
// not periodic and live at most tokenMaxTTL. Then a request those policies certainly refuse is denied:
// the controller would otherwise fail later, or (a revocation) leave the credential alive (VSO's
// revocation fails silently without a sys/leases/revoke grant, hashicorp/vault-secrets-operator#143).
// A warning instead when the answer is uncertain: a VaultPolicy the binding names is not known (yet),
// a rule path is an identity template, or the role is not one vaultgate writes (its policies unknown).
// Policies attached through identity groups are outside this model. Pure over the AdmissionContext's
// caches; with no such lookups (the controller's re-check) nothing is said.
import type { AdmissionContext, CachedObject } from '../admission/context.ts';
import type { KindHandler } from '../admission/kinds.ts';
import { compileAcl, evaluate, type AclRule, type PolicyRules, type RequestCapability } from '../../policy/acl.ts';
import {
  DEFAULT_AUTH_MOUNT,
  SHIPPED_DEFAULT_LEASE_RULES,
  desiredRole,
  normaliseMount,
  roleBindingSpecOf,
} from '../../policy/role.ts';
import { specRules } from '../../policy/spec-rules.ts';
import { parseVaultName } from '../../schemas/vault-names.ts';
import { parseGoDuration } from '../../golang/index.ts';
import { deny, ratchet, recordAt, stringAt, warn, type Finding, type KubeObject } from './finding.ts';
import { VDS_DEFAULTS, vaultDynamicSecretHandler } from './vaultdynamicsecret.ts';

export const VDS_ACCESS_RULES = {
  issue: 'vaultdynamicsecret.access-issue',
  renew: 'vaultdynamicsecret.access-renew',
  lookup: 'vaultdynamicsecret.access-lookup',
  revoke: 'vaultdynamicsecret.access-revoke',
  pkiRevoke: 'vaultdynamicsecret.access-pki-revoke',
  unchecked: 'vaultdynamicsecret.access-unchecked',
  tokenLifetime: 'vaultdynamicsecret.token-lifetime',
  rolloutNamespace: 'vaultdynamicsecret.rollout-target-namespace',
} as const;

/** One request the lifecycle sends with the store's token, and why. */
export interface LifecycleNeed {
  rule: string;
  field: string;
  path: string;
  capability: RequestCapability;
  /** The issuing request's body (checked against allowed/denied parameters; never shown). */
  parameters?: Record<string, string>;
  why: string;
  /** How the object could stop needing it, when it can. */
  instead?: string;
}

/** The mount of a PKI issue path (`pki/issue/<role>`, `pki/issuer/<ref>/issue/<role>`), or undefined. */
export function pkiMount(path: string): string | undefined {
  return /^(.+?)\/(?:issuer\/[^/]+\/)?issue\/[^/]+$/.exec(path)?.[1];
}

/** What the lifecycle of this spec asks of Vault (controller/reconcilers/vaultdynamicsecret.ts, vault/leases.ts). */
export function lifecycleNeeds(spec: Record<string, unknown>): LifecycleNeed[] {
  const path = stringAt(spec, 'path');
  if (path === undefined) return [];
  const method = stringAt(spec, 'method') ?? VDS_DEFAULTS.method;
  const type = stringAt(spec, 'credentialType') ?? VDS_DEFAULTS.credentialType;
  const revocation = recordAt(spec, 'revocation');
  const onDelete = revocation?.onDelete !== false;
  const previous = (stringAt(revocation, 'previous') ?? VDS_DEFAULTS.previous) !== 'Never';
  const parameters = recordAt(spec, 'parameters');
  const needs: LifecycleNeed[] = [
    method === 'GET'
      ? { rule: VDS_ACCESS_RULES.issue, field: 'spec.path', path, capability: 'read', why: 'to issue the credential' }
      : {
          rule: VDS_ACCESS_RULES.issue,
          field: 'spec.path',
          path,
          capability: 'update',
          parameters: Object.fromEntries(Object.entries(parameters ?? {}).map(([k, v]) => [k, String(v)])),
          why: `to issue the credential (method ${method} with its parameters)`,
        },
  ];
  const revocationField =
    onDelete && previous ? 'spec.revocation' : onDelete ? 'spec.revocation.onDelete' : 'spec.revocation.previous';
  const asked = [onDelete ? 'on delete' : '', previous ? 'of replaced credentials' : ''].filter(Boolean).join(' and ');
  const instead = 'or set revocation.onDelete: false and revocation.previous: Never';
  if (type === 'Lease') {
    needs.push(
      {
        rule: VDS_ACCESS_RULES.renew,
        field: 'spec.leasePolicy',
        path: 'sys/leases/renew',
        capability: 'update',
        why: 'to renew the lease',
      },
      {
        rule: VDS_ACCESS_RULES.lookup,
        field: 'spec.leasePolicy',
        path: 'sys/leases/lookup',
        capability: 'update',
        why: 'to resume a lease found in the Secret but not in status (after a lost status write)',
      },
    );
    // Not asked: auth/token/lookup-accessor. After the controller logged in again, it looks up the token that
    // minted the lease by its accessor when the store's role may (controller/reconcilers/vaultdynamicsecret.ts
    // lookMintingToken); without it the token's end as last recorded stands, which can only bring a rotation
    // earlier. The built-in guardrails keep auth/ from tenants, so asking for it warned on every correct setup.
    if (onDelete || previous)
      needs.push({
        rule: VDS_ACCESS_RULES.revoke,
        field: revocationField,
        path: 'sys/leases/revoke',
        capability: 'update',
        why: `to revoke leases ${asked}`,
        instead,
      });
  }
  const mount = type === 'Certificate' ? pkiMount(path) : undefined;
  if (mount !== undefined && (onDelete || previous))
    needs.push({
      rule: VDS_ACCESS_RULES.pkiRevoke,
      field: revocationField,
      path: `${mount}/revoke`,
      capability: 'update',
      why: `to revoke certificates ${asked}`,
      instead,
    });
  return needs;
}

/** What admission knows of the Vault identity a store logs in as. */
export type StoreIdentity =
  /** A role vaultgate writes: the binding's policies as known, its tokens' lifetime. */
  | {
      kind: 'binding';
      /** `namespace/name` of the VaultRoleBinding. */
      binding: string;
      policies: PolicyRules[];
      /** VaultPolicies the binding names that are not known (not created yet, or not cached). */
      unknownPolicies: string[];
      /** token_max_ttl in seconds; undefined when 0 (the mount's or system's default) or unreadable. */
      tokenMaxTTLSeconds?: number;
    }
  /** The store's identity is not one vaultgate writes: `why` says what it is. */
  | { kind: 'unmanaged'; why: string };

const isTemplated = (p: PolicyRules): boolean => p.rules.some((r) => r.path.includes('{{'));

/**
 * Only the rules whose pattern can match a needed path: its text up to the first wildcard is a prefix
 * of that path (a superset of Vault's matches, so the evaluation is the same). A binding may name 256
 * VaultPolicies of up to 64 KiB each; compiling all of their rules took 1.5 s per review.
 */
function relevantRules(policies: readonly PolicyRules[], needs: readonly LifecycleNeed[]): PolicyRules[] {
  const paths = needs.map((n) => n.path);
  const relevant = (pattern: string): boolean => {
    const bare = pattern.replace(/^\/+/, '');
    const wildcard = bare.search(/[+*]/);
    const literal = wildcard < 0 ? bare : bare.slice(0, wildcard);
    return paths.some((p) => p.startsWith(literal));
  };
  return policies.map((p) => ({ name: p.name, rules: p.rules.filter((r) => relevant(r.path)) }));
}

function needText(n: LifecycleNeed): string {
  return `${n.capability} on ${n.path}`;
}

/** Whose Vault identity is checked, in findings: a VaultDynamicSecret's store, or an ESO generator's provider. */
export interface AccessSubject {
  /** "the store's". */
  whose: string;
  /** The field a finding about the identity as a whole names. */
  identityField: string;
  /** A need's or a timing's field as this object spells it. */
  field(f: string): string;
}

export const STORE_SUBJECT: AccessSubject = { whose: "the store's", identityField: 'spec.storeRef', field: (f) => f };

/**
 * The findings for a spec whose store logs in as `identity`. `minValidity`/`maxTTL` in ms (the
 * credential's timings as the spec states them; maxTTL undefined when not stated).
 */
export function accessFindings(
  needs: readonly LifecycleNeed[],
  identity: StoreIdentity,
  timing: { minValidityMs?: number; maxTTLMs?: number } = {},
  subject: AccessSubject = STORE_SUBJECT,
): Finding[] {
  if (identity.kind === 'unmanaged') {
    if (needs.length === 0) return [];
    return [
      warn(
        subject.identityField,
        VDS_ACCESS_RULES.unchecked,
        `${identity.why}, so its policies are not known here and were not checked; the credential's lifecycle needs ${needs
          .map((n) => `${needText(n)} (${n.why})`)
          .join(', ')}`,
      ),
    ];
  }
  const out: Finding[] = [];
  const acl = compileAcl(relevantRules([...identity.policies, SHIPPED_DEFAULT_LEASE_RULES], needs));
  const uncertain: string[] = [];
  if (identity.unknownPolicies.length > 0)
    uncertain.push(`VaultPolicy ${identity.unknownPolicies.map((p) => `"${p}"`).join(', ')} not known here`);
  if (identity.policies.some(isTemplated)) uncertain.push('a rule path is an identity template');
  const names = identity.policies.map((p) => p.name);
  const who = `${subject.whose} Vault role (VaultRoleBinding ${identity.binding}, policies ${names.length ? names.join(', ') : 'none known'} and Vault's default)`;
  for (const n of needs) {
    const d = evaluate(acl, { path: n.path, capability: n.capability, parameters: n.parameters ?? {} });
    if (d.allowed) continue;
    const floor = /^(sys|auth)\//.exec(n.path)?.[1];
    const fix = floor
      ? `grant it in a VaultPolicy the binding names (a path under ${floor}/ needs an enforce VaultGuardrail relaxing ${floor}-paths)${n.instead ? `, ${n.instead}` : ''}`
      : `grant it in a VaultPolicy the binding names${n.instead ? `, ${n.instead}` : ''}`;
    const text = `${who} lacks ${needText(n)}, needed ${n.why}: ${d.reason}; ${fix}`;
    const field = subject.field(n.field);
    out.push(
      uncertain.length === 0
        ? deny(field, n.rule, text)
        : warn(field, n.rule, uncertain.length === 0 ? text : `${text} (${uncertain.join('; ')})`),
    );
  }
  out.push(...tokenLifetimeFindings(identity, timing, subject));
  return out;
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s % 3600 === 0) return `${s / 3600}h`;
  if (s % 60 === 0) return `${s / 60}m`;
  return `${s}s`;
}

/**
 * A credential lives no longer than the token that minted it (Vault revokes a token's leases with it),
 * and a binding's tokens are not periodic: they end at tokenMaxTTL after login however often renewed.
 * The controller replaces a credential while it still has minValidity left before either end. A
 * tokenMaxTTL not longer than minValidity replaces every credential as soon as it is minted (denied);
 * one shorter than the credential's max TTL replaces credentials before their max TTL, each
 * replacement a rollout of the targets (a warning).
 */
export function tokenLifetimeFindings(
  identity: Extract<StoreIdentity, { kind: 'binding' }>,
  timing: { minValidityMs?: number; maxTTLMs?: number },
  subject: AccessSubject = STORE_SUBJECT,
): Finding[] {
  const tokenMs = identity.tokenMaxTTLSeconds === undefined ? undefined : identity.tokenMaxTTLSeconds * 1000;
  if (tokenMs === undefined) return [];
  const who = `${subject.whose} tokens (VaultRoleBinding ${identity.binding}, tokenMaxTTL ${duration(tokenMs)}, not periodic)`;
  if (timing.minValidityMs !== undefined && tokenMs <= timing.minValidityMs)
    return [
      deny(
        subject.field('spec.leasePolicy.minValidity'),
        VDS_ACCESS_RULES.tokenLifetime,
        `${who} live no longer than minValidity ${duration(timing.minValidityMs)}: every credential would be replaced as soon as it is minted; raise the binding's tokenMaxTTL above minValidity (to at least maxTTL plus minValidity to replace credentials only at their max TTL)`,
      ),
    ];
  if (timing.maxTTLMs !== undefined && tokenMs < timing.maxTTLMs)
    return [
      warn(
        subject.field('spec.leasePolicy.maxTTL'),
        VDS_ACCESS_RULES.tokenLifetime,
        `${who} end before the credential's maxTTL ${duration(timing.maxTTLMs)}: Vault revokes a credential with the token that minted it, so each credential is replaced up to ${duration(timing.maxTTLMs - tokenMs)} before its max TTL, each replacement a rollout of the targets; raise the binding's tokenMaxTTL to at least maxTTL plus minValidity`,
      ),
    ];
  return [];
}

/** Rule "vaultdynamicsecret.rollout-target-namespace": a target is a workload of this object's namespace. */
export function rolloutNamespaceFindings(targets: unknown, namespace: string | undefined): Finding[] {
  if (!Array.isArray(targets)) return [];
  const out: Finding[] = [];
  targets.forEach((t, i) => {
    const ns = stringAt(t, 'namespace');
    if (ns !== undefined && ns !== namespace)
      out.push(
        deny(
          `spec.rolloutRestartTargets[${i}].namespace`,
          VDS_ACCESS_RULES.rolloutNamespace,
          `"${ns}" is another namespace: a VaultDynamicSecret restarts workloads of its own namespace only (targets have no namespace field; the apiserver would drop it and restart "${stringAt(t, 'name') ?? ''}" of this namespace)`,
        ),
      );
  });
  return out;
}

const ms = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const r = parseGoDuration(text);
  return r.ok ? r.ms : undefined;
};

/** Rules of a VaultPolicy as cached; the informer replaces the object on a change, so its entry goes with it. */
const parsedRules = new WeakMap<object, AclRule[]>();

/**
 * Raw `spec.policy` text one review parses at most (about 0.3 s at 2.5 µs a character); policies past it
 * are read by later reviews, unknown meanwhile (a warning, never a denial). Tenant-sized: a binding may
 * name 256 VaultPolicies of 64 KiB each, 42 s of parsing.
 */
export const PARSE_BUDGET_PER_REVIEW = 128 * 1024;

/** The binding's VaultPolicies as ACL input, each as the controller writes it ({{namespace}} expanded). */
function bindingPolicies(
  ctx: AdmissionContext,
  namespace: string,
  names: readonly string[],
): { policies: PolicyRules[]; unknown: string[] } {
  const policies: PolicyRules[] = [];
  const unknown: string[] = [];
  let budget = PARSE_BUDGET_PER_REVIEW;
  for (const name of new Set(names)) {
    const p = ctx.vaultPolicy?.(namespace, name);
    let rules = p ? parsedRules.get(p) : undefined;
    if (p && !rules) {
      const text = stringAt(recordAt(p, 'spec'), 'policy')?.length ?? 0;
      if (text <= budget) {
        budget -= text;
        // A spec that does not parse is refused by admission and never written: it grants nothing.
        rules = specRules(recordAt(p, 'spec'), namespace).rules;
        parsedRules.set(p, rules);
      }
    }
    if (rules) policies.push({ name: `${namespace}/${name}`, rules });
    else unknown.push(name);
  }
  return { policies, unknown };
}

/**
 * The Vault identity of the store a VaultDynamicSecret names, from the webhook's caches; undefined when
 * nothing can be said (no such lookups, or the store is not known: the controller reports a missing store).
 */
export function storeIdentity(obj: KubeObject, ctx: AdmissionContext): StoreIdentity | undefined {
  if (!ctx.secretStore || !ctx.vaultRoleBinding || !ctx.vaultPolicy) return undefined;
  const spec = recordAt(obj, 'spec');
  const ref = recordAt(spec, 'storeRef');
  const name = stringAt(ref, 'name');
  if (!name) return undefined;
  const cluster = stringAt(ref, 'kind') === 'ClusterSecretStore';
  const ns = stringAt(obj.metadata, 'namespace');
  const store: CachedObject = cluster
    ? ctx.secretStore('ClusterSecretStore', name)
    : ctx.secretStore('SecretStore', name, ns);
  if (!store) return undefined;
  const storeName = `${cluster ? 'ClusterSecretStore' : 'SecretStore'} "${name}"`;
  return vaultProviderIdentity(recordAt(recordAt(store.spec, 'provider'), 'vault'), storeName, ctx);
}

/**
 * The Vault identity a Vault provider block logs in as (a store's spec.provider.vault, an ESO
 * VaultDynamicSecret generator's spec.provider), `storeName` naming it in messages; undefined when the
 * webhook has no role binding or policy lookups.
 */
export function vaultProviderIdentity(
  provider: Record<string, unknown> | undefined,
  storeName: string,
  ctx: AdmissionContext,
): StoreIdentity | undefined {
  if (!ctx.vaultRoleBinding || !ctx.vaultPolicy) return undefined;
  const auth = recordAt(provider, 'auth');
  const k8s = recordAt(auth, 'kubernetes');
  const role = stringAt(k8s, 'role');
  if (!k8s || !role) {
    const method = auth ? (Object.keys(auth)[0] ?? 'no method') : 'no method';
    return {
      kind: 'unmanaged',
      why: `${storeName} authenticates with ${method}, not a kubernetes-auth role vaultgate writes`,
    };
  }
  const parsed = parseVaultName(ctx.namePrefix, role);
  const notOurs = `${storeName} logs in as kubernetes-auth role "${role}"`;
  if (!parsed) return { kind: 'unmanaged', why: `${notOurs}, which is not a VaultRoleBinding's role` };
  const binding = ctx.vaultRoleBinding(parsed.namespace, parsed.name);
  if (!binding)
    return {
      kind: 'unmanaged',
      why: `${notOurs}, and VaultRoleBinding ${parsed.namespace}/${parsed.name} is ${binding === null ? 'not found' : 'not known here'}`,
    };
  const bspec = roleBindingSpecOf(recordAt(binding, 'spec') ?? {});
  const storeMount = normaliseMount(stringAt(k8s, 'mountPath') ?? DEFAULT_AUTH_MOUNT);
  const bindingMount = normaliseMount(bspec.authMount ?? DEFAULT_AUTH_MOUNT);
  if (storeMount !== bindingMount)
    return {
      kind: 'unmanaged',
      why: `${notOurs} on mount "${storeMount}", where VaultRoleBinding ${parsed.namespace}/${parsed.name} writes no role (its mount is "${bindingMount}")`,
    };
  const { policies, unknown } = bindingPolicies(ctx, parsed.namespace, bspec.policies);
  let tokenMaxTTLSeconds: number | undefined;
  try {
    const max = desiredRole(parsed.namespace, bspec, []).body.token_max_ttl;
    tokenMaxTTLSeconds = max > 0 ? max : undefined;
  } catch {
    tokenMaxTTLSeconds = undefined; // an unwritable TTL: VaultRoleBinding's own rules refuse it
  }
  return {
    kind: 'binding',
    binding: `${parsed.namespace}/${parsed.name}`,
    policies,
    unknownPolicies: unknown,
    ...(tokenMaxTTLSeconds !== undefined ? { tokenMaxTTLSeconds } : {}),
  };
}

/** Every rule of this file for one object. */
export function validateVaultDynamicSecretAccess(obj: KubeObject, ctx: AdmissionContext): Finding[] {
  const spec = recordAt(obj, 'spec');
  if (!spec) return [];
  const out = rolloutNamespaceFindings(spec.rolloutRestartTargets, stringAt(obj.metadata, 'namespace'));
  const identity = storeIdentity(obj, ctx);
  if (!identity) return out;
  const policy = recordAt(spec, 'leasePolicy');
  const minValidityMs = ms(stringAt(policy, 'minValidity') ?? VDS_DEFAULTS.minValidity);
  const maxTTLMs = ms(stringAt(policy, 'maxTTL'));
  return [
    ...out,
    ...accessFindings(lifecycleNeeds(spec), identity, {
      ...(minValidityMs !== undefined ? { minValidityMs } : {}),
      ...(maxTTLMs !== undefined ? { maxTTLMs } : {}),
    }),
  ];
}

/**
 * The VaultDynamicSecret handler with these rules added. On an UPDATE that leaves spec unchanged (a
 * finalizer removed, labels) or of an object being deleted, denials only warn: the access may have
 * changed under the object, and it must still be deletable.
 */
export const vaultDynamicSecretAccessHandler: KindHandler = {
  ...vaultDynamicSecretHandler,
  validate: (obj, oldObj, ctx, req) => [
    ...vaultDynamicSecretHandler.validate(obj, oldObj, ctx, req),
    ...ratchet(validateVaultDynamicSecretAccess(obj, ctx), obj, oldObj),
  ],
};
