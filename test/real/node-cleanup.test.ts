// The one-node cluster leaves nothing on the machine (issue #15): after stop(), and after the test
// process is SIGKILLed (the reaper's job): no process of the stack, no mount under its directory (pod
// volumes, container roots, network namespaces, the kubelet's bind mount), no cgroup, no kube-proxy
// nftables table, no KUBE-/CNI- iptables chain (the kubelet's KUBE-FIREWALL would drop non-loopback-
// sourced traffic to 127.0.0.0/8 for everyone), no bridge or route, kernel settings as they were.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readSysctl } from '../harness/node/host.ts';
import { HOST_SYSCTLS } from '../harness/node/layout.ts';
import { leftovers } from '../harness/node/teardown.ts';
import { nodeTier } from '../harness/node/tier.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await nodeTier();
const DEMO = fileURLToPath(new URL('../harness/node/demo-stack.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

const sysctls = (): Record<string, string | undefined> =>
  Object.fromEntries(HOST_SYSCTLS.map((k) => [k, readSysctl(k)]));

void describe('the one-node cluster leaves nothing behind', { skip: tier.skip }, () => {
  void test(
    'a SIGKILLed test process: its reaper removes processes, mounts, cgroups, rules, bridge; kernel settings restored',
    { timeout: 900_000 },
    async () => {
      const before = sysctls();
      const child = spawn(process.execPath, ['--import', 'tsx', DEMO], {
        cwd: REPO,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      let out = '';
      child.stderr.on('data', (d: Buffer) => {
        err = (err + d.toString()).slice(-4000);
      });
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      const exited = new Promise<string>((resolve) =>
        child.once('exit', (c, s) => resolve(`demo stack exited (${s ?? c}):\n${err}`)),
      );
      await waitFor(() => Promise.resolve(out.includes('READY') ? true : undefined), {
        what: "the demo stack's pod Running",
        timeoutMs: 840_000,
        intervalMs: 500,
        abort: exited,
      });
      const present = leftovers();
      // The stack did create what the teardown must remove (otherwise this test could not fail).
      for (const what of ['processes', 'mounts', 'cgroups', 'nftables tables', 'bridge', 'route', 'directory']) {
        assert.ok(
          present.some((l) => l.startsWith(what)),
          `a running stack has ${what}: ${present.join(' / ')}`,
        );
      }
      const t = performance.now();
      child.kill('SIGKILL');
      await exited;
      await waitFor(() => Promise.resolve(leftovers().length === 0 ? true : undefined), {
        what: 'the reaper to remove the stack',
        timeoutMs: 60_000,
        intervalMs: 500,
      }).catch((e: unknown) => {
        throw new Error(`${(e as Error).message}: ${leftovers().join(' / ')}`);
      });
      process.stderr.write(
        `[node-cleanup] reaper removed the SIGKILLed stack in ${((performance.now() - t) / 1000).toFixed(1)}s\n`,
      );
      assert.deepEqual(sysctls(), before, 'kernel settings as before the stack');
    },
  );
});
