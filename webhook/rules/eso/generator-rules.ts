// Admission rules for ESO's generators (generators.external-secrets.io/v1alpha1): Password,
// VaultDynamicSecret and ClusterGenerator. A VaultDynamicSecret's provider block is a SecretStore's
// spec.provider.vault, so it is judged by the store's own rules (validateStore: auth methods,
// references, server syntax and allow-list, token audiences, guardrails), its findings renamed to the
// generator's fields. Its references resolve in the namespace of the ExternalSecret that uses it (ESO's
// NewGeneratorClient, EmptyStoreKind): the generator's own namespace, or, for a ClusterGenerator, each
// user's, checked again by the controller's store connector at every sync.
import type { Finding } from '../../admission/kinds.ts';
import type { AdmissionContext } from '../../admission/context.ts';
import { type Obj, deny, has, obj, str, warn } from './access.ts';
import { validateStore } from './store-rules.ts';
import { vaultPathFindings } from './vault-path.ts';
import { passwordProblem } from '../../../eso/generators/password.ts';
import { CLUSTER_GENERATOR_SPECS } from '../../../schemas/generator-kinds.ts';
import {
  VDS_ACCESS_RULES,
  accessFindings,
  lifecycleNeeds,
  vaultProviderIdentity,
  type LifecycleNeed,
} from '../vaultdynamicsecret-access.ts';
import { VDS_DEFAULTS } from '../vaultdynamicsecret.ts';
import { parseGoDuration } from '../../../golang/index.ts';

const STORE_VAULT = 'spec.provider.vault';

/** Password: ESO's own failures (go-password's errors), refused up front instead of at every sync. */
export function validatePasswordSpec(spec: Obj | undefined, field = 'spec'): Finding[] {
  if (!spec) return [];
  const problem = passwordProblem({
    length: typeof spec.length === 'number' ? spec.length : undefined,
    digits: typeof spec.digits === 'number' ? spec.digits : undefined,
    symbols: typeof spec.symbols === 'number' ? spec.symbols : undefined,
    symbolCharacters: str(spec.symbolCharacters),
    noUpper: spec.noUpper === true,
    allowRepeat: spec.allowRepeat === true,
  });
  return problem ? [deny(`${field}.${problem.field}`, 'eso.gen.password', `${problem.message}.`)] : [];
}

/**
 * VaultDynamicSecret: the provider as a store's, the path as every Vault path a tenant names, the method
 * (DELETE refused: vaultgate deletes no Vault object it did not create), parameters only where sent.
 * `namespace`: where its references resolve (undefined for a ClusterGenerator: known only at sync).
 */
export function validateVaultGeneratorSpec(
  spec: Obj | undefined,
  namespace: string | undefined,
  ctx: AdmissionContext | undefined,
  field = 'spec',
): Finding[] {
  if (!spec) return [];
  const findings: Finding[] = [];
  const provider = obj(spec.provider);
  if (provider) {
    const asStore = { spec: { provider: { vault: provider } } };
    for (const f of validateStore('SecretStore', asStore, namespace, ctx)) {
      const rename = (s: string): string => s.split(STORE_VAULT).join(`${field}.provider`);
      findings.push({ ...f, field: rename(f.field), message: rename(f.message) });
    }
  }
  findings.push(...vaultPathFindings(spec.path, `${field}.path`, 'eso.gen.vault-path'));
  const method = (str(spec.method) ?? '').toUpperCase();
  if (method === 'DELETE')
    findings.push(
      deny(
        `${field}.method`,
        'eso.gen.method',
        'method DELETE is refused by vaultgate: a generator would delete a Vault object it did not create at every refresh',
      ),
    );
  const reads = method === '' || method === 'GET' || method === 'LIST';
  if (reads && has(spec, 'parameters'))
    findings.push(
      deny(
        `${field}.parameters`,
        'eso.gen.parameters-with-read',
        `parameters are sent only with a write (a method other than GET or LIST); with ${method || 'GET'} Vault would never see them`,
      ),
    );
  findings.push(...generatorAccessFindings(spec, ctx, field));
  if (has(spec, 'retrySettings'))
    findings.push(
      warn(
        `${field}.retrySettings`,
        'eso.gen.ignored-field',
        'retrySettings is ignored by vaultgate: its Vault client retries with its own backoff and rate limits',
      ),
    );
  return findings;
}

/**
 * Rules "vaultdynamicsecret.access-*" and "vaultdynamicsecret.token-lifetime" for the generator's own
 * provider block: an ExternalSecret naming it keeps its lease as a VaultDynamicSecret does
 * (controller/reconcilers/externalsecret-generators.ts): issued, renewed, the replaced one and, on
 * deletion or when the generatorRef is removed, the current one revoked, with the role the provider
 * logs in as. LIST answers carry no lease: nothing is checked for it.
 */
export function generatorAccessFindings(spec: Obj, ctx: AdmissionContext | undefined, field = 'spec'): Finding[] {
  const path = str(spec.path)?.replace(/^\/+/, '');
  const method = (str(spec.method) ?? '').toUpperCase();
  const provider = obj(spec.provider);
  if (!ctx || !path || method === 'LIST') return [];
  const identity = vaultProviderIdentity(provider, "the generator's provider", ctx);
  if (!identity) return [];
  const read = method === '' || method === 'GET';
  // The generator sends no sys/leases/lookup (a lease without state is replaced) and has no revocation fields.
  const needs: LifecycleNeed[] = lifecycleNeeds({
    path,
    method: read ? 'GET' : 'PUT',
    ...(read ? {} : { parameters: obj(spec.parameters) ?? {} }),
  })
    .filter((n) => n.rule !== VDS_ACCESS_RULES.lookup)
    .map(({ instead: _instead, ...n }) => n);
  const role = `${field}.provider.auth.kubernetes.role`;
  const minValidity = parseGoDuration(VDS_DEFAULTS.minValidity);
  return accessFindings(needs, identity, minValidity.ok ? { minValidityMs: minValidity.ms } : {}, {
    whose: "the generator provider's",
    identityField: `${field}.provider.auth`,
    field: (f) => (f === 'spec.path' ? `${field}.path` : role),
  });
}

/** ClusterGenerator: a kind vaultgate generates, and exactly that kind's spec. */
export function validateClusterGenerator(o: Obj, ctx?: AdmissionContext): Finding[] {
  const spec = obj(o.spec);
  if (!spec) return [];
  const kind = str(spec.kind);
  if (kind === undefined) return [];
  const specField = CLUSTER_GENERATOR_SPECS[kind as keyof typeof CLUSTER_GENERATOR_SPECS];
  if (specField === undefined)
    return [
      deny(
        'spec.kind',
        'eso.gen.unsupported-kind',
        `generator kind ${kind} is not supported by vaultgate (supported: ${Object.keys(CLUSTER_GENERATOR_SPECS).join(', ')})`,
      ),
    ];
  const generator = obj(spec.generator) ?? {};
  const field = `spec.generator.${specField}`;
  if (!has(generator, specField))
    return [deny(field, 'eso.gen.kind-spec', `spec.kind is ${kind}, so spec.generator.${specField} is required`)];
  const inner = obj(generator[specField]);
  return kind === 'Password'
    ? validatePasswordSpec(inner, field)
    : validateVaultGeneratorSpec(inner, undefined, ctx, field);
}
