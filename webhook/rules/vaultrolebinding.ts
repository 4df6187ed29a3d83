// Rules "vaultrolebinding.*" and the guardrail checks of a VaultRoleBinding, plus its defaults.
// A binding may only name service accounts and VaultPolicies of its own namespace: that is what
// keeps one namespace from minting tokens for another (external-secrets/external-secrets#3827,
// hashicorp/vault-secrets-operator#652).
import type { AdmissionContext } from '../admission/context.ts';
import type { KindHandler } from '../admission/kinds.ts';
import type { AdmissionRequest } from '../admission/types.ts';
import { VAULTGATE_GROUP, VAULTGATE_VERSION } from '../../schemas/kinds.ts';
import { parseDuration } from '../../schemas/ttl.ts';
import { deny, isRecord, stringAt, warn, type Finding, type KubeObject } from './finding.ts';
import { defaultVaultName, mutateOwnership, namespaceOf, vaultNameFindings } from './common.ts';
import { bindingGuardrailFindings, guardrailsFor } from './guardrails.ts';
import { schemaThenSpecFindings } from './schema.ts';

import { DEFAULT_AUTH_MOUNT, DEFAULT_TOKEN_MAX_TTL, DEFAULT_TOKEN_TTL } from '../../policy/role.ts';

/** Rules "vaultrolebinding.foreign-service-account" and "vaultrolebinding.wildcard-service-account". */
export function serviceAccountFindings(accounts: unknown[], namespace: string): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  accounts.forEach((sa, i) => {
    if (typeof sa !== 'string') return;
    const field = `spec.serviceAccounts[${i}]`;
    if (sa.includes('*')) {
      out.push(
        deny(
          field,
          'vaultrolebinding.wildcard-service-account',
          `"${sa}" is a wildcard; name each service account of namespace "${namespace}" explicitly`,
        ),
      );
    } else if (sa.includes(':')) {
      // `system:serviceaccount:<ns>:<sa>` (the username form) or `<ns>:<sa>` (Vault's namespace:name form).
      const parts = sa.split(':');
      const other =
        parts.length >= 4 && parts[0] === 'system' && parts[1] === 'serviceaccount'
          ? parts[2]
          : parts.length === 2
            ? parts[0]
            : undefined;
      const account = parts[parts.length - 1];
      out.push(
        deny(
          field,
          'vaultrolebinding.foreign-service-account',
          other !== undefined && other !== namespace
            ? `"${sa}" names a service account of namespace "${other}"; a VaultRoleBinding may bind only service accounts of its own namespace "${namespace}"`
            : `"${sa}" must be a plain service account name of namespace "${namespace}"${account ? ` (write "${account}")` : ''}`,
        ),
      );
    }
    if (seen.has(sa)) out.push(warn(field, 'vaultrolebinding.duplicate', `"${sa}" is listed twice`));
    seen.add(sa);
  });
  return out;
}

/** Rule "vaultrolebinding.policy-missing" (a warning: manifests are often applied in any order). */
export function policyReferenceFindings(policies: unknown[], namespace: string, ctx: AdmissionContext): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  policies.forEach((p, i) => {
    if (typeof p !== 'string') return;
    const field = `spec.policies[${i}]`;
    if (p.includes('/') || p.includes(':')) {
      out.push(
        deny(
          field,
          'vaultrolebinding.foreign-policy',
          `"${p}" must be the name of a VaultPolicy in namespace "${namespace}"`,
        ),
      );
      return;
    }
    if (seen.has(p)) out.push(warn(field, 'vaultrolebinding.duplicate', `"${p}" is listed twice`));
    seen.add(p);
    if (ctx.policyExists?.(namespace, p) === false) {
      out.push(
        warn(
          field,
          'vaultrolebinding.policy-missing',
          `VaultPolicy "${p}" does not exist in namespace "${namespace}" yet; tokens get its Vault policy once it is created`,
        ),
      );
    }
  });
  return out;
}

/** Rule "vaultrolebinding.auth-mount": the mount path as Vault names it under auth/. */
export function authMountFindings(mount: string | undefined): Finding[] {
  if (mount === undefined) return [];
  const field = 'spec.authMount';
  const rule = 'vaultrolebinding.auth-mount';
  if (/^\/?auth\//.test(mount))
    return [
      deny(
        field,
        rule,
        `"${mount}": write the mount path without the "auth/" prefix (e.g. "${mount.replace(/^\/?auth\//, '')}")`,
      ),
    ];
  if (mount.startsWith('/') || mount.endsWith('/'))
    return [deny(field, rule, `"${mount}" must not start or end with "/"`)];
  if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(mount))
    return [
      deny(field, rule, `"${mount}" is not a mount path (letters, digits, "_", ".", "-", segments separated by "/")`),
    ];
  return [];
}

/** Rule "vaultrolebinding.ttl-order": tokenTTL ≤ tokenMaxTTL, as Vault refuses the role otherwise. */
export function ttlOrderFindings(ttl: string, maxTtl: string): Finding[] {
  const a = parseDuration(ttl);
  const b = parseDuration(maxTtl);
  if (a === undefined || b === undefined || b === 0 || a <= b) return [];
  return [
    deny('spec.tokenTTL', 'vaultrolebinding.ttl-order', `tokenTTL "${ttl}" is longer than tokenMaxTTL "${maxTtl}"`),
  ];
}

/**
 * Rule "vaultrolebinding.no-audience" (a warning): a role without an audience makes Vault ask the
 * apiserver to review each login token for the apiserver's own audiences. vaultgate's SecretStores send
 * tokens for audience "vault" (a token the apiserver would accept is never handed to Vault), so those
 * logins are refused, and pods must hand Vault tokens that also work against the apiserver.
 */
export function audienceFindings(audience: string | undefined): Finding[] {
  if (audience) return [];
  return [
    warn(
      'spec.audience',
      'vaultrolebinding.no-audience',
      'no audience: Vault will accept only tokens the apiserver itself accepts, and refuse the audience "vault" tokens vaultgate\'s SecretStores send; set audience: vault (and give pods a projected token for that audience)',
    ),
  ];
}

export function validateVaultRoleBinding(
  obj: KubeObject,
  _old: KubeObject | undefined,
  ctx: AdmissionContext,
  req: AdmissionRequest,
): Finding[] {
  return schemaThenSpecFindings(obj, (spec) => {
    const namespace = namespaceOf(obj, req);
    const tokenTTL = stringAt(spec, 'tokenTTL') ?? DEFAULT_TOKEN_TTL;
    const tokenMaxTTL = stringAt(spec, 'tokenMaxTTL') ?? DEFAULT_TOKEN_MAX_TTL;
    const audience = stringAt(spec, 'audience');
    return [
      ...serviceAccountFindings(Array.isArray(spec.serviceAccounts) ? spec.serviceAccounts : [], namespace),
      ...policyReferenceFindings(Array.isArray(spec.policies) ? spec.policies : [], namespace, ctx),
      ...authMountFindings(stringAt(spec, 'authMount')),
      ...ttlOrderFindings(tokenTTL, tokenMaxTTL),
      ...audienceFindings(audience),
      ...bindingGuardrailFindings(
        { tokenTTL, tokenMaxTTL, ...(audience ? { audience } : {}) },
        guardrailsFor(namespace, ctx),
      ),
      ...vaultNameFindings(obj, req, ctx, 'vaultrolebinding.vault-name'),
    ];
  });
}

export function mutateVaultRoleBinding(obj: KubeObject, ctx: AdmissionContext, req: AdmissionRequest): void {
  mutateOwnership(obj, req);
  defaultVaultName(obj, req, ctx);
  const spec = obj.spec;
  if (!isRecord(spec)) return;
  spec.authMount ??= DEFAULT_AUTH_MOUNT;
  spec.tokenTTL ??= DEFAULT_TOKEN_TTL;
  spec.tokenMaxTTL ??= DEFAULT_TOKEN_MAX_TTL;
}

export const vaultRoleBindingHandler: KindHandler = {
  group: VAULTGATE_GROUP,
  version: VAULTGATE_VERSION,
  kind: 'VaultRoleBinding',
  validate: validateVaultRoleBinding,
  mutate: mutateVaultRoleBinding,
};
