// Rules "vaultdynamicsecret.*" for a VaultDynamicSecret, plus its defaults. The store it names is checked
// as a store wherever that store is admitted (eso.store.*: server allow-list and syntax, token audience,
// guardrails), and again by the controller's store connector before it sends anything, with this object's
// namespace as the referent namespace; here: the issuing path (the same path rule as every Vault path a
// tenant writes), what this release can keep alive, and timings that cannot work.
import type { AdmissionContext } from '../admission/context.ts';
import type { KindHandler } from '../admission/kinds.ts';
import type { AdmissionRequest } from '../admission/types.ts';
import { VAULTGATE_GROUP, VAULTGATE_VERSION } from '../../schemas/kinds.ts';
import { parseGoDuration } from '../../golang/index.ts';
import {
  deny,
  isRecord,
  objectNamespace,
  stringAt,
  warn,
  withoutShadowedSchemaFindings,
  type Finding,
  type KubeObject,
} from './finding.ts';
import { mutateOwnership } from './common.ts';
import { schemaFindings } from './schema.ts';
import { DEFAULT_ROLLOUT_POLICY } from '../../kube/workloads.ts';
import { vaultPathProblems } from '../../vault/paths.ts';
import { pkiMountOf } from '../../vault/pki.ts';

export const VDS_DEFAULTS = {
  method: 'GET',
  credentialType: 'Lease',
  renewAtPercent: 67,
  jitterPercent: 10,
  minValidity: '2m',
  onDelete: true,
  previous: 'AfterRollout',
  grace: '30s',
} as const;

/** Milliseconds of a duration field, or undefined (absent or not a Go duration: the schema names that). */
function ms(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const r = parseGoDuration(text);
  return r.ok ? r.ms : undefined;
}

/** Rule "vaultdynamicsecret.credential-type": lease-based credentials and PKI certificates are kept alive by this release. */
export function credentialTypeFindings(type: string | undefined): Finding[] {
  if (type === undefined || type === 'Lease' || type === 'Certificate') return [];
  return [
    deny(
      'spec.credentialType',
      'vaultdynamicsecret.credential-type',
      `"${type}" is not supported yet: this release keeps lease-based credentials (Lease: the database and kubernetes secrets engines) and PKI certificates (Certificate)`,
    ),
  ];
}

/**
 * Rule "vaultdynamicsecret.certificate-path": a certificate comes from a PKI issue path (its mount is where
 * it is revoked). Rule "vaultdynamicsecret.certificate-ttl": a certificate whose ttl is not longer than
 * minValidity would be re-issued as soon as it is issued.
 */
export function certificateFindings(
  path: unknown,
  parameters: unknown,
  policy: Record<string, unknown> | undefined,
): Finding[] {
  const out: Finding[] = [];
  if (typeof path === 'string' && pkiMountOf(path) === undefined)
    out.push(
      deny(
        'spec.path',
        'vaultdynamicsecret.certificate-path',
        `a Certificate is issued from a PKI issue path, <mount>/issue/<role> or <mount>/issuer/<ref>/issue/<role>; "${path}" is neither`,
      ),
    );
  const ttlText = isRecord(parameters) && typeof parameters.ttl === 'string' ? parameters.ttl : undefined;
  const ttl = ttlText === undefined ? undefined : /^[0-9]+$/.test(ttlText) ? Number(ttlText) * 1000 : ms(ttlText);
  const minText = stringAt(policy, 'minValidity') ?? VDS_DEFAULTS.minValidity;
  const minValidity = ms(minText);
  if (ttl !== undefined && minValidity !== undefined && ttl <= minValidity)
    out.push(
      deny(
        'spec.parameters.ttl',
        'vaultdynamicsecret.certificate-ttl',
        `ttl "${ttlText}" must be longer than spec.leasePolicy.minValidity "${minText}": every certificate would be re-issued as soon as it is issued`,
      ),
    );
  return out;
}

/** Rule "vaultdynamicsecret.parameters-with-get": a GET sends no body, so parameters would be silently dropped. */
export function parametersFindings(method: string, parameters: unknown): Finding[] {
  if (method !== 'GET' || !isRecord(parameters) || Object.keys(parameters).length === 0) return [];
  return [
    deny(
      'spec.parameters',
      'vaultdynamicsecret.parameters-with-get',
      'parameters are sent only with method PUT or POST; with GET Vault would never see them',
    ),
  ];
}

/** strconv.ParseBool's spellings of true: how Vault reads a boolean parameter sent as a string. */
const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/**
 * Rule "vaultdynamicsecret.kubernetes-namespace": the kubernetes secrets engine creates the ServiceAccount
 * it issues a token for (with its Role and RoleBinding) in `kubernetes_namespace`; an object mints only
 * for its own namespace, whatever the Vault role allows (one role may serve several tenants' stores).
 * Rule "vaultdynamicsecret.kubernetes-cluster-role-binding": `cluster_role_binding` binds the role
 * cluster-wide, so the token would act outside the namespace too.
 */
export function kubernetesEngineFindings(namespace: string, parameters: unknown): Finding[] {
  if (!isRecord(parameters)) return [];
  const out: Finding[] = [];
  const target = parameters.kubernetes_namespace;
  if (target !== undefined && target !== namespace)
    out.push(
      deny(
        'spec.parameters.kubernetes_namespace',
        'vaultdynamicsecret.kubernetes-namespace',
        `${JSON.stringify(target)} must be this object's namespace "${namespace}": a token of the kubernetes secrets engine is minted only for the namespace that asks for it`,
      ),
    );
  const binding = parameters.cluster_role_binding;
  if (typeof binding === 'string' && GO_TRUE.has(binding))
    out.push(
      deny(
        'spec.parameters.cluster_role_binding',
        'vaultdynamicsecret.kubernetes-cluster-role-binding',
        `"${binding}" is refused: a ClusterRoleBinding would let the token act outside namespace "${namespace}"; leave it unset (a RoleBinding in the namespace)`,
      ),
    );
  return out;
}

/**
 * Rule "vaultdynamicsecret.min-validity": a replacement is minted when less than minValidity is left
 * before the max TTL; a max TTL not longer than that would replace every credential as soon as it is
 * minted. Rule "vaultdynamicsecret.grace" (a warning): a grace longer than minValidity may outlive the
 * replaced credential, which then expires on its own before it is revoked. Rule
 * "vaultdynamicsecret.min-validity-rollout" (a warning): with rollout targets, a replacement's restart may
 * wait the coordinator's coalescing window plus its cool-down before the rollout starts; a minValidity not
 * longer than that lets the replaced credential expire under the pods (seen with a 30 s minValidity: a
 * certificate expired 18-21 s before its pods were restarted).
 */
export function timingFindings(
  policy: Record<string, unknown> | undefined,
  revocation: Record<string, unknown> | undefined,
  rolloutTargets: unknown = undefined,
): Finding[] {
  const out: Finding[] = [];
  const minValidity = ms(stringAt(policy, 'minValidity') ?? VDS_DEFAULTS.minValidity);
  const maxTTL = ms(stringAt(policy, 'maxTTL'));
  if (minValidity !== undefined && maxTTL !== undefined && maxTTL <= minValidity) {
    out.push(
      deny(
        'spec.leasePolicy.minValidity',
        'vaultdynamicsecret.min-validity',
        `minValidity "${stringAt(policy, 'minValidity') ?? VDS_DEFAULTS.minValidity}" must be shorter than maxTTL "${stringAt(policy, 'maxTTL')}": every credential would be replaced as soon as it is minted`,
      ),
    );
  }
  const pacing = DEFAULT_ROLLOUT_POLICY.coalesceMs + DEFAULT_ROLLOUT_POLICY.cooldownMs;
  if (
    Array.isArray(rolloutTargets) &&
    rolloutTargets.length > 0 &&
    minValidity !== undefined &&
    minValidity <= pacing
  ) {
    out.push(
      warn(
        'spec.leasePolicy.minValidity',
        'vaultdynamicsecret.min-validity-rollout',
        `minValidity "${stringAt(policy, 'minValidity') ?? VDS_DEFAULTS.minValidity}" is not longer than the ${pacing / 1000}s a restart of the rollout targets may wait (coalescing ${DEFAULT_ROLLOUT_POLICY.coalesceMs / 1000}s, cool-down ${DEFAULT_ROLLOUT_POLICY.cooldownMs / 1000}s): the replaced credential may expire before its pods are replaced; give minValidity that plus the time a rollout takes`,
      ),
    );
  }
  const grace = ms(stringAt(revocation, 'grace'));
  if (grace !== undefined && minValidity !== undefined && grace > minValidity) {
    out.push(
      warn(
        'spec.revocation.grace',
        'vaultdynamicsecret.grace',
        `grace "${stringAt(revocation, 'grace')}" is longer than minValidity: a replaced credential may expire before it is revoked`,
      ),
    );
  }
  return out;
}

/** Rule "vaultdynamicsecret.duplicate-target" (a warning). */
export function rolloutTargetFindings(targets: unknown): Finding[] {
  if (!Array.isArray(targets)) return [];
  const seen = new Set<string>();
  const out: Finding[] = [];
  targets.forEach((t, i) => {
    if (!isRecord(t)) return;
    const key = `${String(t.kind)}/${String(t.name)}`;
    if (seen.has(key))
      out.push(
        warn(`spec.rolloutRestartTargets[${i}]`, 'vaultdynamicsecret.duplicate-target', `${key} is listed twice`),
      );
    seen.add(key);
  });
  return out;
}

export function validateVaultDynamicSecret(obj: KubeObject, requestNamespace?: string): Finding[] {
  const schema = schemaFindings(obj);
  const spec = isRecord(obj.spec) ? obj.spec : undefined;
  if (!spec) return schema;
  const policy = isRecord(spec.leasePolicy) ? spec.leasePolicy : undefined;
  const revocation = isRecord(spec.revocation) ? spec.revocation : undefined;
  const out: Finding[] = [
    ...(typeof spec.path === 'string'
      ? vaultPathProblems(spec.path).map((p) => deny('spec.path', 'vaultdynamicsecret.path', p.message))
      : []),
    ...credentialTypeFindings(stringAt(spec, 'credentialType')),
    ...(stringAt(spec, 'credentialType') === 'Certificate'
      ? certificateFindings(spec.path, spec.parameters, policy) // always a write: GET is sent as PUT
      : parametersFindings(stringAt(spec, 'method') ?? VDS_DEFAULTS.method, spec.parameters)),
    ...kubernetesEngineFindings(objectNamespace(obj, requestNamespace), spec.parameters),
    ...timingFindings(policy, revocation, spec.rolloutRestartTargets),
    ...rolloutTargetFindings(spec.rolloutRestartTargets),
  ];
  return withoutShadowedSchemaFindings(schema, out);
}

export function mutateVaultDynamicSecret(obj: KubeObject, _ctx: AdmissionContext, req: AdmissionRequest): void {
  mutateOwnership(obj, req);
}

export const vaultDynamicSecretHandler: KindHandler = {
  group: VAULTGATE_GROUP,
  version: VAULTGATE_VERSION,
  kind: 'VaultDynamicSecret',
  validate: (obj, _old, _ctx, req) => validateVaultDynamicSecret(obj, req.namespace),
  mutate: mutateVaultDynamicSecret,
};
