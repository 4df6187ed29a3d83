// A probe program (pg-probe.ts, tls-probe.ts, token-probe.ts) bundled with what it imports into one ES
// module for Node 20 with esbuild (as cli/build.ts bundles the CLI): a pod of the vaultgate image runs
// it from a ConfigMap, so no image is built for the client.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The module `./<file>` of this folder, whose export `main` is called on start. */
export async function bundleProbe(file: string, main: string): Promise<string> {
  const out = await build({
    stdin: {
      contents: `import { ${main} } from './${file}';\n${main}();\n`,
      resolveDir: dirname(fileURLToPath(import.meta.url)),
      loader: 'ts',
      sourcefile: `${file.replace(/\.ts$/, '')}-entry.ts`,
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  });
  const bundled = out.outputFiles[0];
  if (!bundled) throw new Error(`esbuild wrote no output for ${file}`);
  return bundled.text;
}
