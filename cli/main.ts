// The single `vaultgate` entry point. Each subcommand lives in cli/commands/<name>.ts and exports
// `run(argv: string[]): Promise<number>` (the exit code).
import { isMainThread, workerData } from 'node:worker_threads';

/** The subcommands, in the order `vaultgate --help` lists them, with the line it shows for each. */
const SUMMARIES = {
  webhook: 'serve the validating + mutating admission webhook (HTTPS)',
  controller: 'run the reconcilers (leader-elected) against Kubernetes and Vault',
  run: 'run the webhook and the controller in one process',
  validate: "make the webhook's decisions offline for manifests (GitOps CI): exit 1 on any denial",
  audit: 'verify the signed decision trail; report who can read which Vault path',
  template: "render an ExternalSecret's or PushSecret's template locally, as the controller would (esoctl template)",
  plan: 'show what the controller would write, change or delete in Vault for manifests',
  certs: 'create a CA and webhook serving certificate for local use or bring-your-own',
  dev: 'start a local apiserver + Vault, run vaultgate against them, apply the examples',
};
type CommandName = keyof typeof SUMMARIES;

/** Each subcommand's module, loaded only to run it (in the bundle, a chunk of its own: cli/build.ts). */
const MODULES: Record<CommandName, () => Promise<{ run(argv: string[]): Promise<number> }>> = {
  webhook: () => import('./commands/webhook.ts'),
  controller: () => import('./commands/controller.ts'),
  run: () => import('./commands/run.ts'),
  validate: () => import('./commands/validate.ts'),
  audit: () => import('./commands/audit.ts'),
  template: () => import('./commands/template.ts'),
  plan: () => import('./commands/plan.ts'),
  certs: () => import('./commands/certs.ts'),
  dev: () => import('./commands/dev.ts'),
};

const isCommand = (name: string): name is CommandName => Object.hasOwn(SUMMARIES, name);

function usage(): string {
  const width = Math.max(...Object.keys(SUMMARIES).map((c) => c.length));
  return [
    'vaultgate: admission webhook + reconciler for Vault-backed secrets on Kubernetes',
    '',
    'Usage: vaultgate <command> [options]      (vaultgate <command> --help for details)',
    '',
    'Commands:',
    ...Object.entries(SUMMARIES).map(([name, summary]) => `  ${name.padEnd(width)}  ${summary}`),
    '',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  if (!isCommand(name)) {
    process.stderr.write(`vaultgate: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const mod = await MODULES[name]();
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
