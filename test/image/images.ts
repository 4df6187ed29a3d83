// The two images the test node runs, built without Docker as OCI archives (oci.ts):
//  - vaultgate: what the repository's Dockerfile builds (its runtime stage read by dockerfile.ts), made
//    from what this machine has: the running Node binary and the libraries it links (ldd), /usr/bin/env
//    for the bundle's `#!/usr/bin/env node`, and the production bundle (cli/build.ts) built into a
//    staging dir (never the checkout's dist/, which bin/vaultgate.mjs would then prefer);
//  - pause: a static Go binary (pause/main.go) as the pod sandbox image.
// Archives go to the upstream cache's images/ (paths.ts: ${XDG_CACHE_HOME:-~/.cache}/vaultgate/upstream/images/), named
// by content, so a re-run is free; an empty upstream directory (.ci/run) builds them again.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from '../../cli/build.ts';
import { upstreamCacheRoot } from '../upstream/paths.ts';
import { readRuntimeStage, type RuntimeStage } from './dockerfile.ts';
import { type OciImage, type OciRuntimeConfig, writeOciArchive } from './oci.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DOCKERFILE = join(REPO_ROOT, 'Dockerfile');
const PAUSE_SRC = fileURLToPath(new URL('./pause', import.meta.url));
/** Docker's default PATH, which the node base image keeps. */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Registry part of the local references: nothing is ever pulled from it (imagePullPolicy Never). */
export const LOCAL_REGISTRY = 'vaultgate.local';

export function imagesDir(): string {
  return join(upstreamCacheRoot(), 'images');
}

/** Shared libraries an ELF binary loads (ldd), as absolute paths, the loader included. */
export function linkedLibraries(binary: string): string[] {
  const out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  const libs = new Set<string>();
  for (const line of out.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.add(m[1]);
  }
  return [...libs].sort();
}

/** Copies a host file into the staging rootfs at the same path, content resolved (no host symlinks). */
function stageHostFile(rootfs: string, path: string, mode: number): void {
  const dst = join(rootfs, path);
  mkdirSync(dirname(dst), { recursive: true });
  copyFileSync(path, dst);
  chmodSync(dst, mode);
}

/** Docker's COPY --chmod applies to every file and directory it copies. */
function chmodTree(path: string, mode: number): void {
  chmodSync(path, mode);
  if (statSync(path).isDirectory()) for (const e of readdirSync(path)) chmodTree(join(path, e), mode);
}

function dirsMode(rootfs: string): void {
  // Directories the builder creates (not the COPY targets) as a base image has them: 0755, /tmp 1777.
  for (const d of ['usr', 'usr/local', 'usr/local/bin', 'usr/bin', 'lib', 'lib64', 'lib/x86_64-linux-gnu', 'app'])
    if (existsSync(join(rootfs, d))) chmodSync(join(rootfs, d), 0o755);
  chmodSync(rootfs, 0o755);
}

export interface VaultgateImage extends OciImage {
  stage: RuntimeStage;
}

/** Builds the vaultgate image archive as the Dockerfile's runtime stage describes it. */
export async function buildVaultgateImage(opts: { log?: (line: string) => void } = {}): Promise<VaultgateImage> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const started = performance.now();
  const stage = readRuntimeStage(DOCKERFILE);
  if (Number(process.versions.node.split('.')[0]) !== stage.nodeMajor) {
    throw new Error(
      `the Dockerfile's runtime stage is ${stage.base} but this machine runs Node ${process.version}: the image would not be the same`,
    );
  }
  const work = mkdtempSync(join(tmpdir(), 'vaultgate-image-'));
  try {
    const rootfs = join(work, 'rootfs');
    const buildTree = join(work, 'build'); // stands for the build stage's WORKDIR after `npm run build`
    await bundle(undefined, join(buildTree, 'dist', 'vaultgate.mjs'));
    // The node base image: node in /usr/local/bin, glibc and libstdc++ from Debian, /usr/bin/env, /tmp.
    mkdirSync(join(rootfs, 'usr/local/bin'), { recursive: true });
    copyFileSync(process.execPath, join(rootfs, 'usr/local/bin/node'));
    chmodSync(join(rootfs, 'usr/local/bin/node'), 0o755);
    for (const lib of new Set([...linkedLibraries(process.execPath), ...linkedLibraries('/usr/bin/env')]))
      stageHostFile(rootfs, lib, 0o755);
    stageHostFile(rootfs, '/usr/bin/env', 0o755);
    mkdirSync(join(rootfs, 'tmp'), { recursive: true });
    chmodSync(join(rootfs, 'tmp'), 0o1777);
    for (const c of stage.copies) {
      if (c.chown && c.chown !== '0:0')
        throw new Error(`Dockerfile COPY --chown=${c.chown}: the image builder writes root-owned layers only`);
      const rel = relative(stage.buildWorkdir, c.src);
      if (rel.startsWith('..') || !/^dist\/?$/.test(rel))
        throw new Error(
          `Dockerfile COPY ${c.src}: the image builder copies only the build stage's dist/ (npm run build)`,
        );
      const dst = join(rootfs, c.dst);
      mkdirSync(dirname(dst), { recursive: true });
      cpSync(join(buildTree, 'dist'), dst, { recursive: true });
      if (c.chmod) chmodTree(dst, parseInt(c.chmod, 8));
    }
    for (const l of stage.symlinks) {
      mkdirSync(dirname(join(rootfs, l.path)), { recursive: true });
      symlinkSync(l.target, join(rootfs, l.path));
    }
    dirsMode(rootfs);
    const config: OciRuntimeConfig = {
      User: stage.user,
      Env: [`PATH=${DEFAULT_PATH}`, ...Object.entries(stage.env).map(([k, v]) => `${k}=${v}`)],
      Entrypoint: stage.entrypoint,
      Cmd: stage.cmd,
      WorkingDir: stage.workdir,
      Labels: { 'org.opencontainers.image.source': 'vaultgate Dockerfile (built by test/image without Docker)' },
    };
    const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const image = await writeOciArchive({
      ref: (diffId) => `${LOCAL_REGISTRY}/vaultgate:${version}-${diffId.slice(7, 19)}`,
      rootfs,
      config,
      outPath: join(imagesDir(), 'vaultgate.oci.tar'),
    });
    const named = join(imagesDir(), `vaultgate-${image.diffId.slice(7, 19)}.oci.tar`);
    renameSync(image.archivePath, named);
    log(
      `[image] ${image.ref} built in ${((performance.now() - started) / 1000).toFixed(1)}s (${(statSync(named).size / 2 ** 20).toFixed(1)} MiB)`,
    );
    return { ...image, archivePath: named, stage };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function goBuild(out: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-buildvcs=false' };
    const child = spawn('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', out, '.'], {
      cwd: PAUSE_SRC,
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`go build of ${PAUSE_SRC} failed (exit ${code})`)),
    );
  });
}

/** The sandbox image: the static pause binary as /pause. */
export async function buildPauseImage(): Promise<OciImage> {
  const hash = createHash('sha256')
    .update(readFileSync(join(PAUSE_SRC, 'main.go')))
    .update(readFileSync(join(PAUSE_SRC, 'go.mod')))
    .digest('hex')
    .slice(0, 12);
  const ref = `${LOCAL_REGISTRY}/pause:${hash}`;
  const archivePath = join(imagesDir(), `pause-${hash}.oci.tar`);
  const work = mkdtempSync(join(tmpdir(), 'vaultgate-pause-'));
  try {
    const rootfs = join(work, 'rootfs');
    mkdirSync(rootfs, { recursive: true });
    chmodSync(rootfs, 0o755);
    await goBuild(join(rootfs, 'pause'));
    chmodSync(join(rootfs, 'pause'), 0o755);
    return await writeOciArchive({
      ref,
      rootfs,
      config: { Entrypoint: ['/pause'], User: '65535:65535' },
      outPath: archivePath,
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
