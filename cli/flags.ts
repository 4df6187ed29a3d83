// The flag handling the long-running commands share: parse strictly, print --help, turn a bad flag
// into exit code 2 with a pointer to the help.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export type FlagValues = Record<string, string | boolean | undefined>;

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
    // No command declares a `multiple` option, so no value is an array.
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
