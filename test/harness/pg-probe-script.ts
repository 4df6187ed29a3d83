// pg-probe.ts and pg-wire.ts bundled into one ES module for Node 20 with esbuild (as cli/build.ts bundles
// the CLI): a pod of the vaultgate image runs it from a ConfigMap, so no image is built for the client.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const PG_PROBE_FILE = 'pg-probe.mjs';

export async function pgProbeScript(): Promise<string> {
  const out = await build({
    stdin: {
      contents: "import { pgProbeMain } from './pg-probe.ts';\npgProbeMain();\n",
      resolveDir: dirname(fileURLToPath(import.meta.url)),
      loader: 'ts',
      sourcefile: 'pg-probe-entry.ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  });
  const file = out.outputFiles[0];
  if (!file) throw new Error('esbuild wrote no output for the PostgreSQL probe');
  return file.text;
}
