// `vaultgate dev` as a user runs it (`npm run dev` = node --import tsx cli/main.ts dev): waits for the
// ready line, runs the commands it prints (denial, mutation, synced Secret, the policy in OpenBao) by
// name, with the PATH, kubeconfig and Vault address of the export line it prints, sends SIGINT (Ctrl-C),
// and checks that nothing it started is left running. Vault is a real OpenBao 2.7.2, as it says.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT, vaultgateArgv } from '../harness/e2e-processes.ts';
import { startE2E } from '../harness/e2e-stack.ts';
import { realTier } from '../harness/real-tier.ts';
import { CommandError, runTool } from '../harness/tools.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();

/** Processes (other than us) whose command line mentions one of dirs. */
function processesMentioning(dirs: string[]): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (dirs.some((d) => cmd.includes(d))) found.push(`${entry}: ${cmd.replaceAll('\0', ' ').slice(0, 160)}`);
    } catch {
      // exited while we looked
    }
  }
  return found;
}

void describe(
  'vaultgate dev (npm run dev): local cluster + Vault + vaultgate, examples applied, Ctrl-C cleans up',
  { skip: tier.skip },
  () => {
    const scratch = mkdtempSync(join(tmpdir(), 'vaultgate-dev-test-'));
    const kubeconfigOut = join(scratch, 'kubeconfig');
    let child: ChildProcess | undefined;
    let stdout = '';
    let stderr = '';
    let exited: Promise<number | null> = Promise.resolve(null);

    after(async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        await exited;
      }
      rmSync(scratch, { recursive: true, force: true });
    });

    void test("prints OpenBao's version, the kubeconfig, Vault address and token, a PATH with kubectl and bao, commands that work by name, and leaves nothing behind on SIGINT", async () => {
      const started = performance.now();
      child = spawn(process.execPath, vaultgateArgv(['dev', '--write-kubeconfig', kubeconfigOut]), {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const proc = child;
      exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
      proc.stdout?.on('data', (c: Buffer) => {
        stdout += c.toString('utf8');
      });
      proc.stderr?.on('data', (c: Buffer) => {
        stderr += c.toString('utf8');
      });
      await waitFor(() => Promise.resolve(/vaultgate dev: ready in/.test(stdout) ? true : undefined), {
        what: 'the "ready" line of vaultgate dev',
        timeoutMs: 240_000,
        intervalMs: 200,
        abort: exited.then((code) => `vaultgate dev exited (${code}):\n${stderr.slice(-3000)}`),
      });
      process.stderr.write(`[dev.test] vaultgate dev ready in ${((performance.now() - started) / 1000).toFixed(1)}s\n`);

      const field = (name: string): string => {
        const m = new RegExp(`^\\s+${name}:\\s+(\\S+)`, 'm').exec(stdout);
        assert.ok(m?.[1], `vaultgate dev prints ${name}:\n${stdout}`);
        return m[1].replace(/\/$/, '');
      };
      assert.equal(field('kubeconfig'), kubeconfigOut);
      assert.ok(existsSync(kubeconfigOut), 'the kubeconfig is written');
      assert.match(field('VAULT_ADDR'), /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(field('VAULT_TOKEN').length > 8);
      assert.match(
        stdout,
        /VAULT_ADDR:\s+\S+\s+\(OpenBao v2\.7\.2, dev server\)/,
        'says which Vault it is, with its version',
      );
      assert.doesNotMatch(stdout + stderr, /SIMULATED/, 'no simulator unless asked for');
      const binDir = field('tools');
      for (const tool of ['kubectl', 'bao']) assert.ok(existsSync(join(binDir, tool)), `${tool} in ${binDir}`);
      const dirs = [field('logs').replace(/\/logs$/, ''), field('cluster')];

      // The export line, as a shell would apply it, then the commands by name, exactly as printed.
      const exported = /^ {2}export (.+)$/m.exec(stdout)?.[1];
      assert.ok(exported, `an export line:\n${stdout}`);
      const vars = Object.fromEntries(
        exported.split(/\s+/).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      assert.equal(vars.PATH, `${binDir}:$PATH`);
      assert.equal(vars.KUBECONFIG, kubeconfigOut);
      assert.equal(vars.VAULT_ADDR, field('VAULT_ADDR'));
      const env = {
        ...process.env,
        HOME: scratch,
        KUBECONFIG: vars.KUBECONFIG,
        VAULT_ADDR: vars.VAULT_ADDR,
        VAULT_TOKEN: vars.VAULT_TOKEN,
        PATH: `${binDir}:/usr/bin:/bin`,
      };
      const commands = [...stdout.matchAll(/^ {2}(kubectl|bao) (.+?)\s+#/gm)].map((m) => [
        m[1] ?? '',
        ...(m[2]?.trim().split(/\s+/) ?? []),
      ]);
      assert.deepEqual(
        commands.map((c) => c[0]),
        ['kubectl', 'kubectl', 'kubectl', 'bao'],
        `commands to try:\n${stdout}`,
      );
      type Command = { tool: string; args: string[] };
      const [deny, mutated, synced, policy] = commands.map(([tool = '', ...args]) => ({ tool, args })) as [
        Command,
        Command,
        Command,
        Command,
      ];

      const refused = await runTool(deny.tool, deny.args, { env }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(refused instanceof CommandError, 'the bad policy is refused');
      assert.match(
        refused.stderr,
        /denied the request: .*"sudo" is forbidden.*\(rule guardrail\.forbidden-capability\)/s,
      );

      const vps = parse(await runTool(mutated.tool, mutated.args, { env })) as {
        items: Array<{ metadata: { name: string; labels?: Record<string, string> }; spec: { vaultName?: string } }>;
      };
      const appRead = vps.items.find((i) => i.metadata.name === 'app-read');
      assert.equal(appRead?.spec.vaultName, 'vaultgate.team-a.app-read');
      assert.equal(appRead?.metadata.labels?.['app.kubernetes.io/managed-by'], 'vaultgate');

      const secret = parse(await runTool(synced.tool, synced.args, { env })) as { data: Record<string, string> };
      const value = (k: string): string => Buffer.from(secret.data[k] ?? '', 'base64').toString('utf8');
      assert.equal(value('username'), 'app');
      assert.match(value('dsn'), /^postgres:\/\/app:.+@db\.team-a\.svc:5432\/app$/, 'the template example rendered');
      assert.ok(value('LOG_LEVEL'), 'dataFrom extract of the app-config document');

      const policyText = await runTool(policy.tool, policy.args, { env });
      assert.match(
        policyText,
        /path "secret\/data\/team-a\/app\/\*"/,
        `bao policy read shows what the controller wrote:\n${policyText}`,
      );

      const stopping = performance.now();
      proc.kill('SIGINT');
      assert.equal(await exited, 0, `exit code after SIGINT\n${stderr.slice(-2000)}`);
      process.stderr.write(`[dev.test] torn down in ${((performance.now() - stopping) / 1000).toFixed(1)}s\n`);
      assert.equal(existsSync(kubeconfigOut), false, 'the kubeconfig of the gone cluster is removed');
      for (const d of dirs) assert.equal(existsSync(d), false, `${d} removed`);
      // Clean-up watchers notice the removed dirs within a second and exit too.
      await waitFor(() => Promise.resolve(processesMentioning(dirs).length === 0 ? true : undefined), {
        what: `no process left from vaultgate dev: ${processesMentioning(dirs).join('\n')}`,
        timeoutMs: 10_000,
        intervalMs: 200,
      });
    });

    void test('--vault-sim runs the simulator only when asked, and says so where the Vault is named', async () => {
      const simKubeconfig = join(scratch, 'sim', 'kubeconfig');
      const sim = spawn(process.execPath, vaultgateArgv(['dev', '--vault-sim', '--write-kubeconfig', simKubeconfig]), {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const simExited = new Promise<number | null>((resolve) => sim.once('exit', (code) => resolve(code)));
      let out = '';
      let errOut = '';
      sim.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
      });
      sim.stderr.on('data', (c: Buffer) => {
        errOut += c.toString('utf8');
      });
      try {
        await waitFor(() => Promise.resolve(/vaultgate dev: ready in/.test(out) ? true : undefined), {
          what: 'the "ready" line of vaultgate dev --vault-sim',
          timeoutMs: 240_000,
          intervalMs: 200,
          abort: simExited.then((code) => `vaultgate dev --vault-sim exited (${code}):\n${errOut.slice(-3000)}`),
        });
        assert.match(errOut, /Vault is SIMULATED \(test\/sim\/vault\.ts, asked for explicitly/);
        assert.match(
          out,
          /VAULT_ADDR:\s+\S+\s+\(SIMULATED Vault: vaultgate's Vault API simulator, asked for with --vault-sim\)/,
        );
        assert.doesNotMatch(out, /OpenBao v/);
      } finally {
        sim.kill('SIGINT');
        assert.equal(await simExited, 0, errOut.slice(-2000));
      }
      const usage = await runTool(
        process.execPath,
        vaultgateArgv(['dev', '--vault-sim', '--kubeconfig', kubeconfigOut, '--vault-addr', 'http://127.0.0.1:1']),
        {},
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(usage instanceof CommandError && usage.code === 2, 'a usage error with --kubeconfig');
      assert.match(
        usage.stderr,
        /--vault-sim starts a local Vault simulator; it does not go with --kubeconfig\/--vault-addr/,
      );
    });

    void test('without the binaries and without Go it names each missing binary and how to get it, and exits 1', async () => {
      const emptyCache = mkdtempSync(join(scratch, 'cache-'));
      const res = await runTool(process.execPath, vaultgateArgv(['dev']), {
        env: {
          ...process.env,
          XDG_CACHE_HOME: emptyCache,
          VAULTGATE_UPSTREAM_DIR: '',
          PATH: '/nonexistent',
          VAULTGATE_BAO_BIN: '',
        },
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(res instanceof CommandError, 'vaultgate dev fails');
      assert.equal(res.code, 1);
      for (const bin of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kubectl', 'helm']) {
        assert.match(
          res.stderr,
          new RegExp(`^\\s+${bin}\\s+expected at ${emptyCache}/vaultgate/upstream/\\S+/bin/${bin}$`, 'm'),
        );
      }
      assert.match(res.stderr, /Go is not installed/);
      assert.match(res.stderr, /Install Go >= 1\.24/);
    });

    void test('with --kubeconfig and --vault-addr it runs the webhook and the controller against that cluster and Vault, and stops them on SIGINT', async () => {
      // "Your cluster": a control plane with the CRDs and an OpenBao, nothing of vaultgate running.
      const stack = await startE2E({ webhook: false, controller: false });
      let proc: ChildProcess | undefined;
      let procExited: Promise<number | null> = Promise.resolve(null);
      let out = '';
      let errOut = '';
      try {
        proc = spawn(
          process.execPath,
          vaultgateArgv(['dev', '--kubeconfig', stack.cp.kubeconfigPath, '--vault-addr', stack.vault.addr]),
          {
            cwd: REPO_ROOT,
            stdio: ['ignore', 'pipe', 'pipe'],
            env: { ...process.env, VAULT_TOKEN: stack.vault.rootToken },
          },
        );
        const p = proc;
        procExited = new Promise((resolve) => p.once('exit', (code) => resolve(code)));
        p.stdout?.on('data', (c: Buffer) => {
          out += c.toString('utf8');
        });
        p.stderr?.on('data', (c: Buffer) => {
          errOut += c.toString('utf8');
        });
        await waitFor(() => Promise.resolve(/vaultgate dev: ready in/.test(out) ? true : undefined), {
          what: 'the "ready" line',
          timeoutMs: 120_000,
          intervalMs: 200,
          abort: procExited.then((code) => `vaultgate dev exited (${code}):\n${errOut.slice(-3000)}`),
        });
        assert.match(out, new RegExp(`VAULT_ADDR:\\s+${stack.vault.addr.replace(/[.]/g, '\\.')}\\s+\\(your Vault\\)`));
        assert.doesNotMatch(out, /VAULT_TOKEN:/, 'your token is not printed');
        assert.doesNotMatch(out + errOut, new RegExp(stack.vault.rootToken), 'nor logged');
        const logs = /^\s+logs:\s+(\S+?)\/?\s/m.exec(out)?.[1];
        assert.ok(logs);
        const dir = logs.replace(/\/logs$/, '');
        // The controller really works against that cluster: a VaultPolicy gets written to that Vault.
        await stack.cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
        await stack.cp.kubectl(['apply', '-f', join(REPO_ROOT, 'examples/vaultpolicy.yaml')]);
        await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', 'team-a', 'vp/app-read']);
        assert.equal((await stack.vaultRoot('GET', 'sys/policies/acl/vaultgate.team-a.app-read')).status, 200);

        p.kill('SIGINT');
        assert.equal(await procExited, 0);
        await waitFor(
          () => Promise.resolve(processesMentioning([dir]).length === 0 && !existsSync(dir) ? true : undefined),
          {
            what: `no process left from vaultgate dev: ${processesMentioning([dir]).join('\n')}`,
            timeoutMs: 10_000,
            intervalMs: 200,
          },
        );
      } finally {
        if (proc && proc.exitCode === null && proc.signalCode === null) {
          proc.kill('SIGINT');
          await procExited;
        }
        await stack.stop();
      }
    });
  },
);
