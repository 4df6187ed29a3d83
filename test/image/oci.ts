// Writes an OCI image archive (image-layout 1.0 in a tar) without Docker: one gzip layer made by GNU tar
// from a staging directory, the image config, the manifest and an index whose annotation
// `io.containerd.image.name` names the image, so `ctr images import` tags it as that reference.
// Reproducible: entries sorted, owner 0:0, mtime 0, so the same staging tree gives the same digest.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** The runtime part of an OCI image config (image-spec config.md `config`). */
export interface OciRuntimeConfig {
  User?: string;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  Labels?: Record<string, string>;
}

export interface OciImage {
  /** Reference the archive carries, e.g. vaultgate.local/vaultgate:0.1.0-3f2a… */
  ref: string;
  archivePath: string;
  manifestDigest: string;
  configDigest: string;
  /** sha256 of the uncompressed layer (rootfs.diff_ids[0]). */
  diffId: string;
}

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

function run(cmd: string, args: string[], cwd?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(Buffer.concat(out))
        : reject(new Error(`${cmd} ${args.join(' ')} failed (exit ${code}): ${err.trim()}`)),
    );
  });
}

/** A tar of `dir`'s contents as an image layer: sorted, root-owned, mtime 0; modes as staged. */
export function layerTar(dir: string): Promise<Buffer> {
  return run('tar', [
    '--create',
    '--file=-',
    '--format=posix',
    '--pax-option=delete=atime,delete=ctime',
    '--sort=name',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--mtime=@0',
    '--directory',
    dir,
    '.',
  ]);
}

/** Writes `outPath`, an image of one layer made from `rootfs` (a staged directory); `ref` may depend on the layer's digest. */
export async function writeOciArchive(opts: {
  ref: string | ((diffId: string) => string);
  rootfs: string;
  config: OciRuntimeConfig;
  outPath: string;
}): Promise<OciImage> {
  const layer = await layerTar(opts.rootfs);
  // Level 1: the layer is mostly the node binary; a faster build matters more here than 10% of size.
  const layerGz = gzipSync(layer, { level: 1 });
  const diffId = sha256(layer);
  const ref = typeof opts.ref === 'string' ? opts.ref : opts.ref(diffId);
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: opts.config,
      rootfs: { type: 'layers', diff_ids: [diffId] },
      history: [{ created_by: 'vaultgate test/image (OCI archive writer)' }],
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256(config), size: config.length },
      layers: [
        { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: sha256(layerGz), size: layerGz.length },
      ],
    }),
  );
  const index = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      {
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        digest: sha256(manifest),
        size: manifest.length,
        annotations: {
          'io.containerd.image.name': ref,
          'org.opencontainers.image.ref.name': ref.split(':').pop() ?? 'latest',
        },
      },
    ],
  };
  const layout = mkdtempSync(join(tmpdir(), 'vaultgate-oci-'));
  try {
    const blob = (b: Buffer): void =>
      writeFileSync(join(layout, 'blobs', 'sha256', sha256(b).slice('sha256:'.length)), b);
    mkdirSync(join(layout, 'blobs', 'sha256'), { recursive: true });
    for (const b of [layerGz, config, manifest]) blob(b);
    writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    writeFileSync(join(layout, 'index.json'), JSON.stringify(index));
    mkdirSync(dirname(opts.outPath), { recursive: true });
    const tmp = `${opts.outPath}.tmp-${process.pid}`;
    await run('tar', [
      '--create',
      `--file=${tmp}`,
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--mtime=@0',
      '--directory',
      layout,
      'oci-layout',
      'index.json',
      'blobs',
    ]);
    await run('mv', ['-f', tmp, opts.outPath]);
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
  return { ref, archivePath: opts.outPath, manifestDigest: sha256(manifest), configDigest: sha256(config), diffId };
}

/** Reads back an archive written by writeOciArchive: its config and its layer (uncompressed tar). */
export async function readOciArchive(
  archivePath: string,
): Promise<{ ref: string; config: { config: OciRuntimeConfig; rootfs: { diff_ids: string[] } }; layer: Buffer }> {
  const dir = mkdtempSync(join(tmpdir(), 'vaultgate-oci-read-'));
  try {
    await run('tar', ['--extract', `--file=${archivePath}`, '--directory', dir]);
    const blob = (digest: string): Buffer => readFileSync(join(dir, 'blobs', 'sha256', digest.replace(/^sha256:/, '')));
    const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as {
      manifests: Array<{ digest: string; annotations?: Record<string, string> }>;
    };
    const entry = index.manifests[0];
    if (!entry) throw new Error(`${archivePath}: index.json lists no manifest`);
    const manifest = JSON.parse(blob(entry.digest).toString()) as {
      config: { digest: string };
      layers: Array<{ digest: string }>;
    };
    const { gunzipSync } = await import('node:zlib');
    const layerRef = manifest.layers[0];
    if (!layerRef) throw new Error(`${archivePath}: manifest has no layer`);
    return {
      ref: entry.annotations?.['io.containerd.image.name'] ?? '',
      config: JSON.parse(blob(manifest.config.digest).toString()) as {
        config: OciRuntimeConfig;
        rootfs: { diff_ids: string[] };
      },
      layer: gunzipSync(blob(layerRef.digest)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
