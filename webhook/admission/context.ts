// What the pure admission core may know about the world. The webhook server fills it from its
// informer caches; `vaultgate validate` fills it from the manifests it was given. No I/O here.
import { DEFAULT_TARGET, type VaultTarget } from '../../policy/capabilities.ts';

/** A cluster-scoped VaultGuardrail as stored (see schemas/). Typed loosely here to keep this file dependency-free. */
export type GuardrailObject = { metadata: { name: string; [k: string]: unknown }; spec?: Record<string, unknown> };

/**
 * An object from the webhook's caches, as stored: the object, null when the cache has listed and it is
 * not there, undefined when unknown (cache not synced, or outside the namespaces read).
 */
export type CachedObject = Record<string, unknown> | null | undefined;

export interface AdmissionContext {
  /** Every VaultGuardrail currently known. Empty → built-in safe defaults apply. */
  guardrails: GuardrailObject[];
  /** Labels of a namespace (for guardrail namespaceSelector); undefined when the namespace is unknown. */
  namespaceLabels(namespace: string): Record<string, string> | undefined;
  /** Whether a VaultPolicy exists; undefined when unknown (then no warning is given). */
  policyExists?(namespace: string, name: string): boolean | undefined;
  /** A VaultPolicy (whole object, for its rules); see CachedObject. */
  vaultPolicy?(namespace: string, name: string): CachedObject;
  /** A VaultRoleBinding (whole object: its policies, token TTLs, auth mount); see CachedObject. */
  vaultRoleBinding?(namespace: string, name: string): CachedObject;
  /** A SecretStore (namespace given) or ClusterSecretStore (namespace undefined); see CachedObject. */
  secretStore?(kind: 'SecretStore' | 'ClusterSecretStore', name: string, namespace?: string): CachedObject;
  /** Prefix of every Vault-side name vaultgate derives (marks them as ours). Default 'vaultgate'. */
  namePrefix: string;
  /** ESO `spec.controller` class this vaultgate owns; objects of another class are not ours. '' = the default class. */
  controllerClass: string;
  /**
   * The Vault server policies are written to: its flavour and version (`--vault-flavor`, `--vault-version`;
   * chart `vault.flavor`, `vault.version`). Admission refuses what that server refuses. Absent = OpenBao 2.7.
   */
  vaultTarget?: VaultTarget;
  /**
   * Vault servers (scheme://host[:port]) every secret store may name, as the cluster admin configured
   * them (--allowed-vault-server; the chart passes vault.address). Guardrails add per namespace.
   * Empty or absent with no guardrail adding any: unrestricted.
   */
  vaultServers?: readonly string[];
  /**
   * The Kubernetes apiserver's own token audiences (its --api-audiences), as discovered from the cluster
   * (kube/api-audiences.ts). A store's ServiceAccount token may not carry one unless a guardrail allows
   * it. Absent: unknown, and rule eso.store.token-audience is not checked here.
   */
  apiServerAudiences?: readonly string[];
}

export function defaultContext(overrides: Partial<AdmissionContext> = {}): AdmissionContext {
  return {
    guardrails: [],
    namespaceLabels: () => undefined,
    namePrefix: 'vaultgate',
    controllerClass: '',
    vaultTarget: { ...DEFAULT_TARGET },
    ...overrides,
  };
}
