// The flags of the long-running commands, declared once each: name, type, default, environment variable
// and help. From the declarations come the parser's option table (node:util parseArgs), the help text and
// the values the commands read (FlagReader: given, else the environment variable, else the default).
// Parsing is strict; --help prints the help; a bad flag is exit code 2 with a pointer to the help.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** What parseArgs returns: strings, switches, and arrays for the repeatable flags. */
export type FlagValues = Record<string, string | boolean | Array<string | boolean> | undefined>;

export interface Flag {
  /** Without the dashes: `vault-addr`. */
  name: string;
  /** integer: given as a string, read with FlagReader.int (whole number within min..max). */
  type: 'string' | 'boolean' | 'integer';
  /** Repeatable (values may also be comma-separated, as the command reads them). */
  multiple?: true;
  short?: string;
  /** The value's placeholder in the help: `--vault-addr <url>`. */
  arg?: string;
  /** The value when neither the flag nor `env` is given; shown in the help. */
  default?: string | number | boolean;
  /** The default as the help says it, when it is no single value (`in-cluster, then ~/.kube/config`). */
  defaultHelp?: string;
  /** Environment variable read when the flag is not given. */
  env?: string;
  min?: number;
  max?: number;
  /** true, or the flag it is required with (`--webhook-cert-secret`). */
  required?: true | string;
  /** The switch that turns a boolean off: `no-leader-elect`. */
  negation?: string;
  help: string;
}

export interface FlagSection {
  title: string;
  flags: readonly Flag[];
}

export const HELP_FLAG: Flag = { name: 'help', type: 'boolean', short: 'h', help: 'this help' };

export function flagsOf(sections: readonly FlagSection[]): Flag[] {
  const byName = new Map<string, Flag>();
  for (const flag of sections.flatMap((s) => s.flags)) {
    const seen = byName.get(flag.name);
    if (seen && seen !== flag) throw new Error(`flag --${flag.name} is declared twice`);
    byName.set(flag.name, flag);
  }
  return [...byName.values()];
}

/** The option table parseArgs reads. */
function parserOptions(sections: readonly FlagSection[]): NonNullable<ParseArgsConfig['options']> {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const f of flagsOf(sections)) {
    options[f.name] = {
      type: f.type === 'boolean' ? 'boolean' : 'string',
      ...(f.multiple ? { multiple: true } : {}),
      ...(f.short ? { short: f.short } : {}),
    };
    if (f.negation) options[f.negation] = { type: 'boolean' };
  }
  return options;
}

/** How a declared default reads in the help: `default 16`, `default on`. */
export function defaultText(f: Flag): string | undefined {
  if (f.defaultHelp !== undefined) return f.defaultHelp;
  if (f.default === undefined || f.default === '') return undefined;
  if (typeof f.default === 'boolean') return f.default ? 'on' : 'off';
  return String(f.default);
}

const HELP_WIDTH = 110;
const HELP_COLUMN = 33;

function wrap(words: string[], indent: number, first: string): string[] {
  const lines: string[] = [];
  let line = first.padEnd(indent);
  let empty = true;
  for (const word of words) {
    if (!empty && line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(line);
      line = ' '.repeat(indent);
      empty = true;
    }
    line += (empty ? '' : ' ') + word;
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** One flag's help entry: the flag (and its placeholder) in the left column, its text wrapped beside it. */
export function flagHelp(f: Flag): string {
  const left = `  ${f.short ? `-${f.short}, ` : ''}--${f.name}${f.arg ? ` <${f.arg}>` : ''}${f.negation ? ` / --${f.negation}` : ''}`;
  const notes = [
    f.env ? `env ${f.env}` : undefined,
    defaultText(f) !== undefined ? `default ${defaultText(f)}` : undefined,
  ]
    .filter(Boolean)
    .join('; ');
  // The notes are one unbreakable word: "(default 16)" never splits across lines.
  const words = [
    ...f.help.split(/\s+/).filter(Boolean),
    ...(notes ? [`(${notes})`] : []),
    ...(f.required === true ? ['[required]'] : f.required ? [`[required with ${f.required}]`] : []),
  ];
  if (left.length + 1 > HELP_COLUMN) return [left, ...wrap(words, HELP_COLUMN, '')].join('\n');
  return wrap(words, HELP_COLUMN, left).join('\n');
}

/** The help's flag sections: a title line, then one entry per flag. */
export function sectionsHelp(sections: readonly FlagSection[]): string {
  return sections.map((s) => [`${s.title}:`, ...s.flags.map(flagHelp)].join('\n')).join('\n\n') + '\n';
}

/**
 * Reads parsed values as the declarations say: a flag given wins, then its environment variable, then its
 * default. Errors name the flag.
 */
export class FlagReader {
  readonly #flags: Map<string, Flag>;
  constructor(
    sections: readonly FlagSection[],
    private readonly values: FlagValues,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.#flags = new Map(flagsOf(sections).map((f) => [f.name, f]));
  }

  #flag(name: string): Flag {
    const f = this.#flags.get(name);
    if (!f) throw new Error(`flag --${name} is not declared`);
    return f;
  }

  /** Whether the flag was given on the command line (its environment variable and default left aside). */
  given(name: string): boolean {
    this.#flag(name);
    return this.values[name] !== undefined;
  }

  /** The given value, else the environment variable's, else the default (undefined: none of them). */
  string(name: string): string | undefined {
    const f = this.#flag(name);
    const v = this.values[name];
    if (typeof v === 'string') return v;
    const fromEnv = f.env ? this.env[f.env] : undefined;
    if (fromEnv !== undefined) return fromEnv;
    return typeof f.default === 'string' ? f.default : undefined;
  }

  /** A whole number within the declared min..max; the default when not given. */
  int(name: string): number {
    const f = this.#flag(name);
    const v = this.values[name];
    if (typeof v !== 'string') {
      if (typeof f.default !== 'number') throw new Error(`flag --${name} has no numeric default`);
      return f.default;
    }
    const n = Number(v);
    const min = f.min ?? 0;
    if (!Number.isInteger(n) || n < min || (f.max !== undefined && n > f.max)) {
      throw new Error(
        `--${name} must be a whole number ${f.max !== undefined ? `between ${min} and ${f.max}` : `of at least ${min}`}, got "${v}"`,
      );
    }
    return n;
  }

  /** A switch: off when its negation is given, else as given, else the default (off without one). */
  bool(name: string): boolean {
    const f = this.#flag(name);
    if (f.negation && this.values[f.negation] === true) return false;
    const v = this.values[name];
    return typeof v === 'boolean' ? v : f.default === true;
  }

  /** A repeatable flag's values as given (undefined: not given). */
  list(name: string): FlagValues[string] {
    this.#flag(name);
    return this.values[name];
  }
}

/**
 * `--allowed-vault-server` values (repeatable, or comma-separated) → the option, or undefined when none
 * was given. Each must be an http(s) origin: it is compared with secret stores' spec.provider.vault.server.
 */
export function allowedVaultServers(value: FlagValues[string]): { vaultServers: string[] } | undefined {
  const given = (Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  if (given.length === 0) return undefined;
  for (const v of given) {
    let ok = false;
    try {
      const u = new URL(v);
      ok =
        (u.protocol === 'https:' || u.protocol === 'http:') &&
        (u.pathname === '/' || u.pathname === '') &&
        !u.search &&
        !u.hash;
    } catch {
      /* reported below */
    }
    if (!ok)
      throw new Error(
        `--allowed-vault-server must be an http(s) origin such as https://vault.example:8200, got ${JSON.stringify(v)}`,
      );
  }
  return { vaultServers: given };
}

/**
 * `--namespace` values (repeatable, or comma-separated) → the namespaces to watch, or undefined for all.
 * Each must be a namespace name (a DNS-1123 label).
 */
export function watchedNamespaces(value: FlagValues[string]): string[] | undefined {
  const given = (Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  for (const ns of given) {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(ns))
      throw new Error(
        `--namespace must be a namespace name (lower-case letters, digits and '-', at most 63), got ${JSON.stringify(ns)}`,
      );
  }
  return given.length ? [...new Set(given)] : undefined;
}

/**
 * `argv` → the command's options built by `build` (which throws with a message naming the flag), or the
 * exit code when there is nothing to run: 0 after printing `help`, 2 after a usage error.
 */
function commandOptions<T>(
  command: string,
  argv: string[],
  options: NonNullable<ParseArgsConfig['options']>,
  help: string,
  build: (values: FlagValues) => T,
): T | number {
  const usage = (err: unknown): number => {
    process.stderr.write(`vaultgate ${command}: ${(err as Error).message}\n(see vaultgate ${command} --help)\n`);
    return 2;
  };
  let values: FlagValues;
  try {
    // Options declared `multiple` (e.g. --allowed-vault-server) come back as arrays.
    values = parseArgs({ args: argv, options, strict: true }).values;
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

/** A command's flags as it uses them, all from one declaration (defineCommand). */
export interface CommandFlags {
  /** The option table parseArgs reads. */
  readonly options: NonNullable<ParseArgsConfig['options']>;
  /** What --help prints. */
  readonly help: string;
  /** argv → `build(values)`, or the exit code when there is nothing to run (commandOptions). */
  parse<T>(argv: string[], build: (values: FlagValues) => T): T | number;
}

/**
 * `vaultgate <command>`'s flags from their sections: the parser's option table, the help (`helpText` places
 * the sections' entries in the command's own text) and the parse of argv that prints the help or a usage error.
 */
export function defineCommand(
  command: string,
  sections: readonly FlagSection[],
  helpText: (flagsHelp: string) => string,
): CommandFlags {
  const options = parserOptions(sections);
  const help = helpText(sectionsHelp(sections));
  return { options, help, parse: (argv, build) => commandOptions(command, argv, options, help, build) };
}
