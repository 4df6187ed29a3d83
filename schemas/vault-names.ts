// Vault-side names of the objects vaultgate writes: `<prefix>.<namespace>.<name>`. The prefix has no
// dots and Kubernetes namespaces cannot contain dots, so the mapping is injective (names may contain
// dots; they always come last). The controller's bootstrap Vault policy covers only `<prefix>.*`.

/** Same shape as a DNS-1123 label (lower-case alphanumerics and '-'), which also rules out dots. */
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const DEFAULT_PREFIX = 'vaultgate';

/** Why a prefix is unusable, or undefined when it is fine. */
export function prefixProblem(prefix: string): string | undefined {
  if (prefix.length === 0) return 'the name prefix must not be empty';
  if (prefix.length > 63) return `the name prefix "${prefix}" is longer than 63 characters`;
  if (prefix.includes('.'))
    return `the name prefix "${prefix}" must not contain "." (it separates prefix, namespace and name)`;
  if (!PREFIX.test(prefix))
    return `the name prefix "${prefix}" must consist of lower-case letters, digits and "-", starting and ending with a letter or digit`;
  return undefined;
}

export function assertValidPrefix(prefix: string): void {
  const problem = prefixProblem(prefix);
  if (problem) throw new Error(problem);
}

/** The Vault policy or kubernetes-auth role name of the object `namespace/name`. */
export function vaultName(prefix: string, namespace: string, name: string): string {
  assertValidPrefix(prefix);
  if (!namespace || namespace.includes('.')) throw new Error(`namespace "${namespace}" cannot be part of a Vault name`);
  if (!name) throw new Error('a Vault name needs the object name');
  return `${prefix}.${namespace}.${name}`;
}

/** Inverse of vaultName for names we derived; undefined for names that are not ours. */
export function parseVaultName(prefix: string, vault: string): { namespace: string; name: string } | undefined {
  if (!vault.startsWith(`${prefix}.`)) return undefined;
  const rest = vault.slice(prefix.length + 1);
  const dot = rest.indexOf('.');
  if (dot <= 0 || dot === rest.length - 1) return undefined;
  return { namespace: rest.slice(0, dot), name: rest.slice(dot + 1) };
}
