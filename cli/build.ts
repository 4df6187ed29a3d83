// Production build (`npm run build`): the CLI bundled by esbuild into one ESM file, dist/vaultgate.mjs,
// that runs on plain `node` with no node_modules and no tsx. Beside it go the JSON Schemas, which
// schemas/validator.ts reads at run time from next to its own module (`new URL(file, import.meta.url)`).
//
// Why a bundle rather than tsx in production: tsx transforms with esbuild's keepNames, which wraps every
// named function and closure in an Object.defineProperty call — measurable on the admission hot path
// (test/bench/webhook.ts). A bundle without keepNames runs the code as written and starts faster.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { KINDS } from '../schemas/kinds.ts';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLI_ENTRY = join(REPO_ROOT, 'cli/main.ts');
export const DEFAULT_OUTFILE = join(REPO_ROOT, 'dist/vaultgate.mjs');

/**
 * esbuild bundles ESM output but keeps the CommonJS dependencies (express, node-vault, pino …) as
 * CJS wrappers that call `require` for Node built-ins; ESM has no `require`, so one is made here.
 * The hashbang lets the file run directly (`/usr/local/bin/vaultgate` in the image is a link to it).
 */
const BANNER = [
  '#!/usr/bin/env node',
  "import { createRequire as __vaultgateCreateRequire } from 'node:module';",
  'const require = __vaultgateCreateRequire(import.meta.url);',
].join('\n');

/** What `vaultgate dev` becomes in the bundle: it starts an apiserver and Vault built from test/, which is not shipped. */
const DEV_STUB = `export const summary = 'start a local apiserver + Vault (source checkout only)';
export async function run() {
  process.stderr.write('vaultgate dev: not part of this build; it runs from a source checkout, where it builds a local apiserver and Vault from test/: run "npm run dev" there\\n');
  return 2;
}
`;

const devCommandStub: Plugin = {
  name: 'vaultgate-dev-stub',
  setup(b) {
    b.onResolve({ filter: /\/commands\/dev\.ts$/ }, (args) =>
      args.importer === CLI_ENTRY ? { path: 'dev-stub', namespace: 'vaultgate-dev-stub' } : undefined);
    b.onLoad({ filter: /.*/, namespace: 'vaultgate-dev-stub' }, () => ({ contents: DEV_STUB, loader: 'js' }));
  },
};

/** The options every production-shaped bundle uses; the benchmark builds its target with the same ones. */
export function productionOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // No keepNames (the default): names are only cosmetic in stack traces, and keeping them costs a
    // defineProperty per closure creation. No minification: stack traces stay readable.
    keepNames: false,
    // Nothing external: the image ships no node_modules.
    banner: { js: BANNER },
    plugins: [devCommandStub],
    logLevel: 'warning',
    absWorkingDir: REPO_ROOT,
  };
}

/** The JSON Schemas schemas/validator.ts loads from next to the module that contains it. */
export function schemaFiles(): string[] {
  return [...new Set(KINDS.map((k) => k.schemaFile))].sort();
}

/** Bundles `entry` into `outfile` and copies the JSON Schemas next to it; returns the files written. */
export async function bundle(entry: string = CLI_ENTRY, outfile: string = DEFAULT_OUTFILE): Promise<string[]> {
  const outDir = dirname(outfile);
  mkdirSync(outDir, { recursive: true });
  await build(productionOptions(entry, outfile));
  const written = [outfile];
  for (const file of schemaFiles()) {
    copyFileSync(join(REPO_ROOT, 'schemas', file), join(outDir, file));
    written.push(join(outDir, file));
  }
  return written;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const outfile = process.argv[2] ?? DEFAULT_OUTFILE;
  const files = await bundle(CLI_ENTRY, outfile);
  process.stdout.write(`built ${files.map((f) => f.replace(REPO_ROOT, '')).join(', ')}\n`);
}
