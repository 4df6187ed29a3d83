// The single `vaultgate` entry point. Each subcommand lives in cli/commands/<name>.ts and exports
// `run(argv: string[]): Promise<number>` (the exit code) and a one-line `summary`.
import { isMainThread, workerData } from 'node:worker_threads';

const commands: Record<string, { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> }> = {
  webhook: {
    summary: 'serve the validating + mutating admission webhook (HTTPS)',
    load: () => import('./commands/webhook.ts'),
  },
  controller: {
    summary: 'run the reconcilers (leader-elected) against Kubernetes and Vault',
    load: () => import('./commands/controller.ts'),
  },
  run: { summary: 'run the webhook and the controller in one process', load: () => import('./commands/run.ts') },
  validate: {
    summary: "make the webhook's decisions offline for manifests (GitOps CI): exit 1 on any denial",
    load: () => import('./commands/validate.ts'),
  },
  audit: {
    summary: 'verify the signed decision trail; report who can read which Vault path',
    load: () => import('./commands/audit.ts'),
  },
  template: {
    summary: "render an ExternalSecret's or PushSecret's template locally, as the controller would (esoctl template)",
    load: () => import('./commands/template.ts'),
  },
  plan: {
    summary: 'show what the controller would write, change or delete in Vault for manifests',
    load: () => import('./commands/plan.ts'),
  },
  certs: {
    summary: 'create a CA and webhook serving certificate for local use or bring-your-own',
    load: () => import('./commands/certs.ts'),
  },
  dev: {
    summary: 'start a local apiserver + Vault, run vaultgate against them, apply the examples',
    load: () => import('./commands/dev.ts'),
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return [
    'vaultgate: admission webhook + reconciler for Vault-backed secrets on Kubernetes',
    '',
    'Usage: vaultgate <command> [options]      (vaultgate <command> --help for details)',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`vaultgate: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const mod = await command.load();
  return mod.run(rest);
}

// The production bundle starts the controller's render workers from this same entry
// (controller/reconcilers/render-pool.ts): as one, it serves renders (the role is RENDER_WORKER_ROLE of
// eso/render-worker.ts, spelt out here so the commands' chunks do not load the template engine).
if (!isMainThread && (workerData as { role?: unknown } | null)?.role === 'vaultgate-render-worker') {
  await import('../eso/render-worker.ts');
} else {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`vaultgate: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
