#!/usr/bin/env node
// Launcher. If the production bundle exists (`npm run build` → dist/vaultgate.mjs) it runs that;
// otherwise the TypeScript sources through tsx, so a checkout works without a build step.
// The rule is deliberately "dist if present", not "dist if newer than the sources": after editing
// sources in a checkout that has a dist/, rebuild (`npm run build`) or delete dist/.
// VAULTGATE_FROM_SOURCE=1 forces the sources.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/vaultgate.mjs', import.meta.url);
if (process.env.VAULTGATE_FROM_SOURCE !== '1' && existsSync(bundle)) {
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
