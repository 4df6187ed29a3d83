// Regenerates the replace block of test/upstream/kube/go.mod for K8S_VERSION (catalog.ts):
// k8s.io/kubernetes requires each staging module at v0.0.0 and replaces it with ./staging/src/...;
// a wrapper must replace each with the published v0.<minor>.<patch>. The staging list is read from the
// proxy's .mod of k8s.io/kubernetes (it changes between minors), not from GitHub.
// Usage: node --import tsx test/upstream/sync-kube-mod.ts   (then `go mod tidy` in test/upstream/kube)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { K8S_VERSION, UPSTREAM_DIR } from './catalog.ts';

function stagingModules(kubernetesGoMod: string): string[] {
  return [...kubernetesGoMod.matchAll(/^\s*(k8s\.io\/[\w.-]+)\s+v0\.0\.0\s*$/gm)]
    .map((m) => m[1] ?? '')
    .filter(Boolean);
}

const dir = join(UPSTREAM_DIR, 'kube');
const go = (...args: string[]): string =>
  execFileSync('go', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' } });
const info = JSON.parse(go('mod', 'download', '-json', `k8s.io/kubernetes@${K8S_VERSION}`)) as {
  GoMod?: string;
  Error?: string;
};
if (!info.GoMod) throw new Error(`proxy did not serve k8s.io/kubernetes@${K8S_VERSION}: ${info.Error ?? 'no GoMod'}`);
const staging = stagingModules(readFileSync(info.GoMod, 'utf8'));
const staged = K8S_VERSION.replace(/^v1\./, 'v0.');
const current = JSON.parse(go('mod', 'edit', '-json')) as { Replace?: Array<{ Old: { Path: string } }> };
const drop = (current.Replace ?? []).map((r) => `-dropreplace=${r.Old.Path}`);
go(
  'mod',
  'edit',
  ...drop,
  `-require=k8s.io/kubernetes@${K8S_VERSION}`,
  ...staging.map((m) => `-replace=${m}=${m}@${staged}`),
);
console.log(
  `k8s.io/kubernetes ${K8S_VERSION}: ${staging.length} staging modules replaced by ${staged}; now run \`go mod tidy\` in ${dir}`,
);
