// Flags that mean the same in `vaultgate webhook` and `vaultgate controller`, declared once for both and
// for `vaultgate run`, which gives them once to both halves.
import { DEFAULT_TARGET, parseVaultTarget, type VaultTarget } from '../../policy/capabilities.ts';
import { DEFAULT_PREFIX, prefixProblem } from '../../schemas/vault-names.ts';
import { allowedVaultServers, type Flag, type FlagReader, watchedNamespaces } from './flags.ts';

/** Where the Secret, ConfigMap and Lease a process keeps live when no flag names it: its pod's namespace. */
export const POD_NAMESPACE_ENV = 'POD_NAMESPACE';
export const DEFAULT_POD_NAMESPACE = 'vaultgate-system';

export const KUBECONFIG_FLAG: Flag = {
  name: 'kubeconfig',
  type: 'string',
  arg: 'path',
  env: 'KUBECONFIG',
  defaultHelp: 'in-cluster, then ~/.kube/config',
  help: 'kubeconfig file',
};
export const NAMESPACE_FLAG: Flag = {
  name: 'namespace',
  type: 'string',
  arg: 'ns',
  multiple: true,
  defaultHelp: 'all',
  help:
    "read and watch only this namespace (repeatable or comma-separated): the chart's watchNamespaces, whose Roles allow no " +
    'cluster-wide list. Then nothing is read cluster-wide but VaultGuardrails and these Namespace objects, and the controller ' +
    'serves no ClusterSecretStore',
};
export const NAME_PREFIX_FLAG: Flag = {
  name: 'name-prefix',
  type: 'string',
  arg: 'prefix',
  default: DEFAULT_PREFIX,
  help: 'prefix of Vault-side names <prefix>.<namespace>.<name>',
};
export const CONTROLLER_CLASS_FLAG: Flag = {
  name: 'controller-class',
  type: 'string',
  arg: 'class',
  defaultHelp: 'objects without a class',
  help: 'ESO spec.controller class vaultgate serves',
};
export const ALLOWED_VAULT_SERVER_FLAG: Flag = {
  name: 'allowed-vault-server',
  type: 'string',
  arg: 'url',
  multiple: true,
  defaultHelp: 'none: any server',
  help: 'a Vault server secret stores may name (repeatable; the chart passes vault.address); enforce guardrails add more per namespace',
};
export const VAULT_FLAVOR_FLAG: Flag = {
  name: 'vault-flavor',
  type: 'string',
  arg: 'flavor',
  default: DEFAULT_TARGET.flavor,
  help: 'the Vault server policies are written to: openbao or vault (HashiCorp Vault). A capability it lacks is denied: OpenBao has scan, not subscribe/recover',
};
export const VAULT_VERSION_FLAG: Flag = {
  name: 'vault-version',
  type: 'string',
  arg: 'x.y',
  defaultHelp: `${DEFAULT_TARGET.version} for ${DEFAULT_TARGET.flavor}`,
  required: '--vault-flavor=vault',
  help: 'its version; the controller compares it at start with sys/seal-status and logs a mismatch as a warning',
};
export const AUDIT_NAMESPACE_FLAG: Flag = {
  name: 'audit-namespace',
  type: 'string',
  arg: 'ns',
  env: POD_NAMESPACE_ENV,
  default: DEFAULT_POD_NAMESPACE,
  help: 'where the signing key (Secret vaultgate-audit-key) and the public keys (ConfigMap vaultgate-audit-jwks) live',
};
export const AUDIT_KEY_FILE_FLAG: Flag = {
  name: 'audit-key-file',
  type: 'string',
  arg: 'path',
  help: 'sign with this Ed25519 PEM key instead (vaultgate audit keygen makes one)',
};
export const AUDIT_FILE_FLAG: Flag = {
  name: 'audit-file',
  type: 'string',
  arg: 'path',
  help: 'also append records to this file (rotated by size)',
};
export const LOG_LEVEL_FLAG: Flag = {
  name: 'log-level',
  type: 'string',
  arg: 'level',
  env: 'LOG_LEVEL',
  default: 'info',
  help: 'trace|debug|info|warn|error',
};

/** The Behaviour flags both processes read alike (sharedOptionsFrom). */
export const BEHAVIOUR_FLAGS: readonly Flag[] = [NAME_PREFIX_FLAG, CONTROLLER_CLASS_FLAG, ALLOWED_VAULT_SERVER_FLAG];
/** The Vault server policies are written for (sharedOptionsFrom). */
export const VAULT_TARGET_FLAGS: readonly Flag[] = [VAULT_FLAVOR_FLAG, VAULT_VERSION_FLAG];
/** Where the audit trail's key lives and where records also go; each process adds its own switch. */
export const AUDIT_STORE_FLAGS: readonly Flag[] = [AUDIT_NAMESPACE_FLAG, AUDIT_KEY_FILE_FLAG, AUDIT_FILE_FLAG];

/** What the webhook and the controller both read from the shared flags; the keys are their options' keys. */
export interface SharedOptions {
  namePrefix: string;
  controllerClass: string;
  vaultTarget: VaultTarget;
  vaultServers?: string[];
  namespaces?: string[];
}

/**
 * --name-prefix, --controller-class, --vault-flavor/--vault-version, --allowed-vault-server and --namespace,
 * read alike by both processes; throws with a message naming the flag.
 */
export function sharedOptionsFrom(flags: FlagReader): SharedOptions {
  const namePrefix = flags.string('name-prefix')!;
  const problem = prefixProblem(namePrefix);
  if (problem) throw new Error(`--name-prefix: ${problem}`);
  const vaultTarget = parseVaultTarget(flags.string('vault-flavor'), flags.string('vault-version'));
  const namespaces = watchedNamespaces(flags.list('namespace'));
  return {
    namePrefix,
    controllerClass: flags.string('controller-class') ?? '',
    vaultTarget,
    ...(allowedVaultServers(flags.list('allowed-vault-server')) ?? {}),
    ...(namespaces ? { namespaces } : {}),
  };
}
