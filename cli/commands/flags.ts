// The flag handling the long-running commands share: parse strictly, print --help, turn a bad flag
// into exit code 2 with a pointer to the help.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

/**
 * `--allowed-vault-server` values (repeatable, or comma-separated) → the option, or undefined when none
 * was given. Each must be an http(s) origin: it is compared with secret stores' spec.provider.vault.server.
 */
export function allowedVaultServers(value: FlagValues[string]): { vaultServers: string[] } | undefined {
  const given = (Array.isArray(value) ? value : typeof value === 'string' ? [value] : []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  if (given.length === 0) return undefined;
  for (const v of given) {
    let ok = false;
    try {
      const u = new URL(v);
      ok = (u.protocol === 'https:' || u.protocol === 'http:') && (u.pathname === '/' || u.pathname === '') && !u.search && !u.hash;
    } catch { /* reported below */ }
    if (!ok) throw new Error(`--allowed-vault-server must be an http(s) origin such as https://vault.example:8200, got ${JSON.stringify(v)}`);
  }
  return { vaultServers: given };
}

/**
 * `--namespace` values (repeatable, or comma-separated) → the namespaces to watch, or undefined for all.
 * Each must be a namespace name (a DNS-1123 label).
 */
export function watchedNamespaces(value: FlagValues[string]): string[] | undefined {
  const given = (Array.isArray(value) ? value : typeof value === 'string' ? [value] : []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  for (const ns of given) {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(ns)) throw new Error(`--namespace must be a namespace name (lower-case letters, digits and '-', at most 63), got ${JSON.stringify(ns)}`);
  }
  return given.length ? [...new Set(given)] : undefined;
}

/**
 * `argv` → the command's options built by `build` (which throws with a message naming the flag), or the
 * exit code when there is nothing to run: 0 after printing `help`, 2 after a usage error.
 */
export function commandOptions<T>(command: string, argv: string[], options: NonNullable<ParseArgsConfig['options']>, help: string, build: (values: FlagValues) => T): T | number {
  const usage = (err: unknown): number => {
    process.stderr.write(`vaultgate ${command}: ${(err as Error).message}\n(see vaultgate ${command} --help)\n`);
    return 2;
  };
  let values: FlagValues;
  try {
    // Options declared `multiple` (e.g. --allowed-vault-server) come back as arrays.
    values = parseArgs({ args: argv, options, strict: true }).values as FlagValues;
  } catch (err) {
    return usage(err);
  }
  if (values.help) {
    process.stdout.write(help);
    return 0;
  }
  try {
    return build(values);
  } catch (err) {
    return usage(err);
  }
}
