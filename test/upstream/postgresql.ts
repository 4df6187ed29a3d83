// PostgreSQL 15 from Debian, for the database secrets engine's real tier (test/harness/postgres.ts starts a
// throwaway cluster from these binaries). Debian's package puts the server programs under
// /usr/lib/postgresql/15/bin, off PATH; installing it may also create and try to start a default cluster
// ("main"), which the harness never uses.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from './builder.ts';
import { aptGet } from './node-binaries.ts';
import { stderrLog, withLock } from './paths.ts';

export const POSTGRES_MAJOR = 15;
export const POSTGRES_BIN_DIR = `/usr/lib/postgresql/${POSTGRES_MAJOR}/bin`;
/** The Debian packages and the programs the harness runs from each. */
export const POSTGRES_PACKAGES: ReadonlyArray<{ pkg: string; programs: readonly string[] }> = [
  { pkg: `postgresql-${POSTGRES_MAJOR}`, programs: ['initdb', 'postgres', 'pg_isready'] },
  { pkg: `postgresql-client-${POSTGRES_MAJOR}`, programs: ['psql'] },
];

export function postgresProgram(name: string): string {
  return join(POSTGRES_BIN_DIR, name);
}

export function missingPostgresPackages(): string[] {
  return POSTGRES_PACKAGES.filter((p) => p.programs.some((prog) => !existsSync(postgresProgram(prog)))).map(
    (p) => p.pkg,
  );
}

/** apt-get installs what is missing (an `apt-get update` first only when the install fails). */
export async function ensurePostgres(opts: { log?: Log } = {}): Promise<string[]> {
  const log = opts.log ?? stderrLog;
  if (missingPostgresPackages().length === 0) return [];
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error(`installing ${missingPostgresPackages().join(', ')} needs root (apt-get)`);
  }
  return withLock('postgresql-packages', log, async () => {
    const missing = missingPostgresPackages();
    if (missing.length === 0) return [];
    const install = ['install', '-y', '--no-install-recommends', ...missing];
    await aptGet(install, log).catch(async () => {
      await aptGet(['update'], log);
      await aptGet(install, log);
    });
    const still = missingPostgresPackages();
    if (still.length > 0)
      throw new Error(
        `apt-get installed ${missing.join(', ')} but programs of ${still.join(', ')} are still missing under ${POSTGRES_BIN_DIR}`,
      );
    return missing;
  });
}
