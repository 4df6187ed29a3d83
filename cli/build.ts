// Production build (`npm run build`): the CLI bundled by esbuild into one ESM file, dist/vaultgate.mjs,
// that runs on plain `node` with no node_modules and no tsx. Beside it go the JSON Schemas, which
// schemas/validator.ts reads at run time from next to its own module (`new URL(file, import.meta.url)`).
//
// Why a bundle rather than tsx in production: tsx transforms with esbuild's keepNames, which wraps every
// named function and closure in an Object.defineProperty call — measurable on the admission hot path
// (test/bench/webhook.ts). A bundle without keepNames runs the code as written and starts faster.
//
// Memory: each subcommand is its own chunk (esbuild splitting, dist/vaultgate-*.mjs), so `vaultgate controller`
// loads the controller's code only, not `audit access`'s whole Kubernetes API client; and client-node's
// KubeConfig is bundled without the generated API it imports for two helpers (clientNodeConfigOnly):
// one 19.6 MB file parsed at start became a 0.3 MB entry and the chunks one command needs.
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
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
const DEV_STUB = `export async function run() {
  process.stderr.write('vaultgate dev: not part of this build; it runs from a source checkout, where it builds a local apiserver and Vault from test/: run "npm run dev" there\\n');
  return 2;
}
`;

/**
 * client-node's config.js (KubeConfig) imports two helpers from './gen/index.js', which re-exports the
 * whole generated API (every model and client: 13 MB of the bundle). Point that one import at the two
 * modules that define them. Fails the build if config.js ever imports anything else from there.
 */
const CLIENT_NODE_DIST = join(REPO_ROOT, 'node_modules/@kubernetes/client-node/dist');
const CONFIG_GEN_IMPORTS: Record<string, string> = {
  createConfiguration: 'gen/configuration.js',
  ServerConfiguration: 'gen/servers.js',
};
const clientNodeConfigOnly: Plugin = {
  name: 'vaultgate-client-node-config-only',
  setup(b) {
    b.onResolve({ filter: /^\.\/gen\/index\.js$/ }, (args) => {
      if (args.importer !== join(CLIENT_NODE_DIST, 'config.js')) return undefined;
      const m = /import\s*\{([^}]*)\}\s*from\s*'\.\/gen\/index\.js'/.exec(readFileSync(args.importer, 'utf8'));
      const names = (m?.[1] ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      const unknown = names.filter((n) => !(n in CONFIG_GEN_IMPORTS));
      if (names.length === 0 || unknown.length > 0) {
        return {
          errors: [
            {
              text: `client-node's config.js imports ${unknown.join(', ') || 'nothing recognisable'} from ./gen/index.js: update clientNodeConfigOnly in cli/build.ts`,
            },
          ],
        };
      }
      return { path: 'config-gen', namespace: 'vaultgate-client-node' };
    });
    b.onLoad({ filter: /.*/, namespace: 'vaultgate-client-node' }, () => ({
      contents: Object.entries(CONFIG_GEN_IMPORTS)
        .map(([name, file]) => `export { ${name} } from ${JSON.stringify(join(CLIENT_NODE_DIST, file))};`)
        .join('\n'),
      loader: 'js',
      resolveDir: CLIENT_NODE_DIST,
    }));
  },
};

const devCommandStub: Plugin = {
  name: 'vaultgate-dev-stub',
  setup(b) {
    b.onResolve({ filter: /\/commands\/dev\.ts$/ }, (args) =>
      args.importer === CLI_ENTRY ? { path: 'dev-stub', namespace: 'vaultgate-dev-stub' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'vaultgate-dev-stub' }, () => ({ contents: DEV_STUB, loader: 'js' }));
  },
};

/** The options every production-shaped bundle uses; the benchmark builds its target with the same ones. */
export function productionOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    // `outfile` is the entry; the lazily imported parts go to chunk files beside it.
    outdir: dirname(outfile),
    entryNames: basename(outfile).replace(/\.mjs$/, ''),
    outExtension: { '.js': '.mjs' },
    splitting: true,
    // Beside the entry, not in a subfolder: modules find their JSON Schemas next to themselves.
    chunkNames: 'vaultgate-[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // No keepNames (the default): names are only cosmetic in stack traces, and keeping them costs a
    // defineProperty per closure creation. No minification: stack traces stay readable.
    keepNames: false,
    // Nothing external: the image ships no node_modules.
    banner: { js: BANNER },
    plugins: [devCommandStub, clientNodeConfigOnly],
    logLevel: 'warning',
    absWorkingDir: REPO_ROOT,
  };
}

/** The JSON Schemas schemas/validator.ts loads from next to the module that contains it. */
export function schemaFiles(): string[] {
  // Every schema in schemas/, not only the kinds' own: a kind's schema may refer to another one's.
  const all = readdirSync(join(REPO_ROOT, 'schemas')).filter((f) => f.endsWith('.schema.json'));
  return [...new Set([...KINDS.map((k) => k.schemaFile), ...all])].sort();
}

/** Bundles `entry` into `outfile` (+ chunk files) and copies the JSON Schemas next to it; returns the files written. */
export async function bundle(entry: string = CLI_ENTRY, outfile: string = DEFAULT_OUTFILE): Promise<string[]> {
  const outDir = dirname(outfile);
  mkdirSync(outDir, { recursive: true });
  const result = await build({ ...productionOptions(entry, outfile), metafile: true });
  const written = Object.keys(result.metafile.outputs)
    .map((f) => join(REPO_ROOT, f))
    .sort((a, b) => (a === outfile ? -1 : b === outfile ? 1 : a.localeCompare(b)));
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
