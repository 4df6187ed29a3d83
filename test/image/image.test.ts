// The Docker-free image (test/image/images.ts) against the Dockerfile, the published build: the same
// files where the Dockerfile puts them (the bundle under /app/dist, root-owned, mode 0555; the
// `vaultgate` link), the same user, entrypoint, command, working dir and environment, Node of the
// Dockerfile's base major, every library the image's node loads inside the image, nothing writable by
// uid 65532. That the image starts, as uid 65532 on a read-only root, is shown by the pods that run it on
// a real kubelet (test/real/pods.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { bundle } from '../../cli/build.ts';
import { parseRuntimeStage } from './dockerfile.ts';
import { buildVaultgateImage, linkedLibraries, type VaultgateImage } from './images.ts';
import { readOciArchive } from './oci.ts';

function walk(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return lstatSync(p).isDirectory() ? [relative(base, p) + '/', ...walk(p, base)] : [relative(base, p)];
  });
}

void describe("the vaultgate image built without Docker is the Dockerfile's image", () => {
  let image: VaultgateImage;
  let rootfs: string;
  let expectedDist: string[];
  let config: Awaited<ReturnType<typeof readOciArchive>>['config'];
  const work = mkdtempSync(join(tmpdir(), 'vaultgate-image-test-'));

  before(
    async () => {
      image = await buildVaultgateImage({ log: () => {} });
      const read = await readOciArchive(image.archivePath);
      config = read.config;
      assert.equal(read.ref, image.ref);
      rootfs = join(work, 'rootfs');
      writeFileSync(join(work, 'layer.tar'), read.layer);
      spawnSync('mkdir', ['-p', rootfs]);
      // As root, tar keeps the recorded owners and modes: what we stat is what the image holds.
      const x = spawnSync(
        'tar',
        [
          '--extract',
          '--file',
          join(work, 'layer.tar'),
          '--directory',
          rootfs,
          '--same-permissions',
          '--same-owner',
          '--numeric-owner',
        ],
        { encoding: 'utf8' },
      );
      assert.equal(x.status, 0, x.stderr);
      // What `npm run build` produces (the Dockerfile's build stage), built separately for comparison.
      const written = await bundle(undefined, join(work, 'expected', 'dist', 'vaultgate.mjs'));
      expectedDist = written.map((f) => relative(join(work, 'expected', 'dist'), f)).sort();
    },
    { timeout: 300_000 },
  );
  after(() => rmSync(work, { recursive: true, force: true }));

  void test("user, entrypoint, command, working dir and environment are the Dockerfile's", () => {
    const s = image.stage;
    assert.equal(s.user, '65532:65532');
    assert.equal(config.config.User, s.user);
    assert.deepEqual(config.config.Entrypoint, s.entrypoint);
    assert.deepEqual(config.config.Entrypoint, ['node', '/app/dist/vaultgate.mjs']);
    assert.deepEqual(config.config.Cmd, s.cmd);
    assert.equal(config.config.WorkingDir, s.workdir);
    for (const [k, v] of Object.entries(s.env)) assert.ok(config.config.Env?.includes(`${k}=${v}`), `ENV ${k}=${v}`);
    assert.ok(
      config.config.Env?.some((e) => e.startsWith('PATH=') && e.split(':').includes('/usr/local/bin')),
      'node and vaultgate on PATH',
    );
  });

  void test('every file of the production bundle is where the Dockerfile COPYs it, root-owned with its --chmod; nothing else there', () => {
    for (const c of image.stage.copies) {
      const dst = join(rootfs, c.dst);
      const found = walk(dst)
        .filter((f) => !f.endsWith('/'))
        .sort();
      assert.deepEqual(found, expectedDist, `${c.dst} holds exactly the bundle`);
      for (const f of [dst, ...found.map((x) => join(dst, x))]) {
        const st = statSync(f);
        assert.equal(`${st.uid}:${st.gid}`, c.chown ?? '0:0', f);
        if (c.chmod) assert.equal((st.mode & 0o7777).toString(8), c.chmod.replace(/^0/, ''), f);
      }
    }
    for (const l of image.stage.symlinks) {
      assert.ok(lstatSync(join(rootfs, l.path)).isSymbolicLink(), `${l.path} is a link`);
      assert.equal(readlinkSync(join(rootfs, l.path)), l.target);
    }
  });

  void test("node of the base image's major, and every library it and the bundle's #!/usr/bin/env need, inside the image", () => {
    const node = join(rootfs, 'usr/local/bin/node');
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    assert.match(version, new RegExp(`^v${image.stage.nodeMajor}\\.`), `FROM ${image.stage.base}`);
    for (const bin of [node, join(rootfs, 'usr/bin/env')]) {
      for (const lib of linkedLibraries(bin))
        assert.ok(existsSync(join(rootfs, lib)), `${relative(rootfs, bin)} loads ${lib}: in the image`);
    }
  });

  void test('nothing in the image is writable by uid 65532 (only /tmp, sticky, as in the base image)', () => {
    const writable = walk(rootfs)
      .map((f) => join(rootfs, f))
      .filter((f) => {
        const st = lstatSync(f);
        if (st.isSymbolicLink()) return false;
        return st.uid === 65532 || (st.mode & 0o002) !== 0;
      })
      .map((f) => `/${relative(rootfs, f)}`);
    assert.deepEqual(writable, ['/tmp']);
    assert.equal(statSync(join(rootfs, 'tmp')).mode & 0o1000, 0o1000, '/tmp is sticky');
  });

  void test('a Dockerfile instruction the builder cannot reproduce is refused, naming its line', () => {
    const base = 'FROM node:20-bookworm AS build\nWORKDIR /src\nFROM node:20-bookworm-slim\nUSER 65532:65532\n';
    assert.throws(() => parseRuntimeStage(`${base}RUN apt-get install -y curl\n`), /line 5: .*RUN ln -s/);
    assert.throws(() => parseRuntimeStage(`${base}VOLUME /data\n`), /line 5: .*does not reproduce `VOLUME`/);
    assert.throws(
      () => parseRuntimeStage(`${base}COPY --from=build --chown=1000:1000 --link /src/dist/ /app/\n`),
      /line 5: .*COPY --from=build/,
    );
    assert.throws(() => parseRuntimeStage('FROM debian:12\nUSER 1\n'), /must be FROM node:<major>/);
  });
});
