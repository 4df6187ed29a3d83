// The Go oracle (test/upstream/go-oracle/): a small Go program that answers what ESO v0.16.2's template
// engine v2 renders (text/template, missingkey=error, ESO's function map: Sprig's TxtFuncMap from ESO's
// fork minus env/expandenv plus ESO's own functions, copied from its pkg/template/v2) and what Go's
// regexp gives. Built on demand into the upstream cache,
// ${XDG_CACHE_HOME:-~/.cache}/vaultgate/upstream/go-oracle-<hash>/go-oracle, keyed by a hash of its
// sources and the Go version (go-program.ts).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { goProgram } from './go-program.ts';

export const GO_ORACLE_SRC = join(dirname(fileURLToPath(import.meta.url)), 'go-oracle');

export type OracleRequest =
  /** `dataB64`: values as base64 (binary data); `name`: the template's name (ESO: the data key). */
  | {
      kind: 'template';
      template: string;
      data?: Record<string, string>;
      dataB64?: Record<string, string>;
      name?: string;
    }
  | {
      kind: 'regexp' | 'regexpLiteral' | 'regexpMatch' | 'regexpFind';
      regexp: string;
      input: string;
      replacement?: string;
    }
  /** A PKCS#12 file made by go-pkcs12's encoder (the library ESO decodes with); output is base64. */
  | {
      kind: 'pkcs12';
      encoder: 'Legacy' | 'LegacyRC2' | 'LegacyDES' | 'Modern' | 'Modern2023' | 'Passwordless';
      certPem: string;
      keyPem: string;
      password: string;
    };

export interface OracleAnswer {
  output?: string;
  /** The output's bytes, base64 (output itself is not byte-exact for invalid UTF-8). */
  outputB64?: string;
  /** 'parse' | 'exec' | 'panic' (templates), 'compile' (regexps); absent on success. */
  errorClass?: string;
  error?: string;
}

export const goOracle = goProgram<OracleRequest, OracleAnswer>({
  name: 'go-oracle',
  srcDir: GO_ORACLE_SRC,
  sources: [
    'go.mod',
    'go.sum',
    'main.go',
    'eso_jwk.go',
    'eso_pem.go',
    'eso_pem_chain.go',
    'eso_pkcs12.go',
    'eso_yaml.go',
  ],
  buildNote: 'downloads github.com/external-secrets/sprig/v3 through the Go module proxy the first time',
});

/** Builds the oracle if it is not in the cache yet; returns the binary's path. */
export const ensureGoOracle = (log?: (line: string) => void): Promise<string> => goOracle.ensure(log);

/** Asks the oracle every request in one process run; answers in order. */
export const askGo = (requests: readonly OracleRequest[]): Promise<OracleAnswer[]> => goOracle.ask(requests);

/** ESO's release the oracle copies, as the Go module proxy serves it. */
export const ESO_MODULE = 'github.com/external-secrets/external-secrets@v0.16.2';

/** The directory of ESO's module source (downloaded into Go's module cache the first time). */
export function esoModuleDir(): string {
  const res = spawnSync('go', ['mod', 'download', '-json', ESO_MODULE], {
    cwd: GO_ORACLE_SRC,
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod' },
    timeout: 600_000,
  });
  if (res.status !== 0) throw new Error(`go mod download ${ESO_MODULE} failed: ${res.error?.message ?? res.stderr}`);
  return (JSON.parse(res.stdout) as { Dir: string }).Dir;
}
