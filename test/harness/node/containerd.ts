// containerd (Debian 1.6) with its own config, socket, root and state directories under NODE_ROOT, CRI
// as the head start on these machines found it works: runc without systemd cgroups (cgroupfs), overlayfs,
// no AppArmor, oom_score_adj clamped (it cannot be lowered here), network namespaces under its state dir
// (not the host's /var/run/netns), and the locally built pause image as the sandbox image.
import { mkdirSync, writeFileSync } from 'node:fs';
import { CNI_BIN_DIR } from '../../upstream/node-binaries.ts';
import type { ManagedProcess, ProcessGroup } from '../processes.ts';
import { waitFor } from '../wait.ts';
import { paths } from './layout.ts';
import { sh } from './host.ts';

export const CTR_NAMESPACE = 'k8s.io';

export function containerdConfig(sandboxImage: string): string {
  const c = paths.containerd;
  return `version = 2
root = ${JSON.stringify(c.root)}
state = ${JSON.stringify(c.state)}
# Nothing here uses them; they would only log errors or create host directories.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing"]

[grpc]
  address = ${JSON.stringify(c.socket)}
[ttrpc]
  address = ""
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = ${JSON.stringify(c.opt)}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${JSON.stringify(sandboxImage)}
  disable_apparmor = true
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = ${JSON.stringify(c.runcRoot)}
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${JSON.stringify(CNI_BIN_DIR)}
    conf_dir = ${JSON.stringify(paths.cni.confDir)}
    max_conf_num = 1
`;
}

export function ctr(args: string[], timeoutMs = 120_000): string {
  const r = sh('ctr', ['--address', paths.containerd.socket, '--namespace', CTR_NAMESPACE, ...args], { timeoutMs });
  if (r.code !== 0) throw new Error(`ctr ${args.join(' ')} failed (exit ${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}

export async function startContainerd(group: ProcessGroup, sandboxImage: string): Promise<ManagedProcess> {
  for (const d of [
    paths.containerd.root,
    paths.containerd.state,
    paths.containerd.runcRoot,
    paths.containerd.opt,
    paths.cni.confDir,
  ])
    mkdirSync(d, { recursive: true });
  writeFileSync(paths.containerd.config, containerdConfig(sandboxImage));
  const proc = group.spawn('containerd', '/usr/bin/containerd', ['--config', paths.containerd.config]);
  await waitFor(
    () =>
      Promise.resolve(
        sh('ctr', ['--address', paths.containerd.socket, 'version'], { timeoutMs: 5000 }).code === 0 ? true : undefined,
      ),
    {
      what: 'containerd socket',
      timeoutMs: 30_000,
      intervalMs: 100,
      abort: proc.exited.then((why) => `containerd exited (${why}):\n${group.logTail('containerd')}`),
    },
  );
  return proc;
}

/** `ctr images import` of an OCI archive into the CRI namespace (unpacked for overlayfs). */
export function importImage(archivePath: string, ref: string): void {
  ctr(['images', 'import', '--snapshotter', 'overlayfs', archivePath], 300_000);
  if (!ctr(['images', 'ls', '-q']).split('\n').includes(ref))
    throw new Error(`ctr images import ${archivePath}: ${ref} is not listed afterwards`);
}
