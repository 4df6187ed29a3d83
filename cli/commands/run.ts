// `vaultgate run`: the admission webhook and the controller in one process (small clusters, local
// trials). Each half takes its own command's flags; the ones that mean the same thing are given once
// (--kubeconfig, --name-prefix, --controller-class, --log-level) and both halves share one Kubernetes client.
import { buildControllerApp, type ControllerAppOptions } from '../../controller/main.ts';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import { buildWebhookProcess, type WebhookProcessOptions } from '../../webhook/main.ts';
import { commandOptions, type FlagValues } from './flags.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import { CONTROLLER_FLAGS_HELP, CONTROLLER_OPTIONS, controllerOptionsFrom } from './controller.ts';
import { untilSignal, WEBHOOK_HELP, WEBHOOK_OPTIONS, webhookOptionsFrom } from './webhook.ts';

export const summary = 'run the webhook and the controller in one process';

/** The controller needs the cluster, so the webhook's offline mode has no meaning here. */
const { 'no-kube': _noKube, 'metrics-port': _webhookMetrics, ...webhookFlags } = WEBHOOK_OPTIONS;
/** --metrics-port is the controller's in `run`; the webhook's /metrics gets a flag of its own. */
export const RUN_OPTIONS = { ...webhookFlags, ...CONTROLLER_OPTIONS, 'webhook-metrics-port': { type: 'string' } } as const;

/** Webhook flag sections without the flags the controller sections already list (shared ones, --help). */
function webhookOnlyHelp(): string {
  // Audit flags are the webhook's in `run` (on by default); the controller's records follow them.
  const shared = new Set(Object.keys(CONTROLLER_OPTIONS).filter((k) => !k.startsWith('audit')).map((k) => `--${k}`));
  shared.add('--no-kube');
  const sections = WEBHOOK_HELP.slice(WEBHOOK_HELP.indexOf('TLS:')).trimEnd().split('\n\n');
  return sections.map((section) => {
    const [title, ...lines] = section.split('\n');
    const kept = lines.filter((line) => {
      const flags = line.trim().split(/\s+/).filter((w) => w.startsWith('--'));
      return !flags.some((f) => shared.has(f)) && !line.trim().startsWith('-h,');
    });
    return kept.length ? [title, ...kept].join('\n') : '';
  }).filter(Boolean).join('\n\n');
}

export const RUN_HELP = `Usage: vaultgate run [options]

Runs the admission webhook and the controller in one process, e.g. for a small cluster or a local trial.
Both halves share --kubeconfig, --name-prefix, --controller-class and --log-level (and one Kubernetes
client); every other flag is the one of \`vaultgate webhook\` or \`vaultgate controller\`. SIGTERM or SIGINT
stops both gracefully (the webhook drains, the controller finishes in-flight reconciles).

Webhook (see vaultgate webhook --help):

${webhookOnlyHelp()}
  --webhook-metrics-port <port> the webhook's plain-HTTP /metrics (default 8081; 0 = any free port)

Controller and shared flags (see vaultgate controller --help):

${CONTROLLER_FLAGS_HELP.replace(/Audit trail \([^\n]*\n(?: {2}.*\n)+\n/, '')}`;

export interface RunOptions {
  webhook: WebhookProcessOptions;
  controller: ControllerAppOptions;
}

/** Flags → both halves' options over one Kubernetes client; throws with a message naming the flag. */
export function runOptionsFrom(values: FlagValues, deps: { client?: HttpKubeClient } = {}): RunOptions {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  // Webhook flags first: a bad one is reported before any kubeconfig is read. webhookOptionsFrom builds
  // its own client unless told there is none, so it is told so and handed the shared one.
  const webhook = webhookOptionsFrom({ ...values, 'no-kube': true, 'metrics-port': values['webhook-metrics-port'] });
  const { audit: _a, 'audit-namespace': _n, 'audit-key-file': _k, 'audit-file': _f, 'webhook-metrics-port': _m, ...controllerValues } = values;
  const controller = controllerOptionsFrom(controllerValues, { client: deps.client ?? new HttpKubeClient(loadKubeConfig(str('kubeconfig'))) });
  // One set of audit flags for the process: the controller's Vault writes go to its own chain (stdout
  // only: two writers must not share one file's chain), signed with the webhook's key.
  if (webhook.audit) {
    const { file: _file, ...rest } = webhook.audit;
    controller.audit = { ...rest, replica: `${webhook.audit.replica}-controller` };
  }
  return { webhook: { ...webhook, client: controller.client }, controller };
}

export async function run(argv: string[]): Promise<number> {
  const opts = commandOptions('run', argv, RUN_OPTIONS, RUN_HELP, (values) => runOptionsFrom(values));
  if (typeof opts === 'number') return opts;
  const log = opts.webhook.logger;
  const webhook = buildWebhookProcess(opts.webhook);
  const controller = buildControllerApp(opts.controller);
  const signal = untilSignal();
  const webhookStarting = webhook.start();
  const controllerStarting = controller.start();
  try {
    // A signal may come before both are up (caches syncing, certificate not there yet).
    await Promise.race([Promise.all([webhookStarting, controllerStarting]), signal]);
    if (controller.health) opts.controller.log?.info({ port: controller.health.port }, 'controller health and metrics listening');
    log.info({ signal: await signal }, 'shutting down');
  } finally {
    // controller.stop() also ends a start still waiting for caches; the webhook is stopped once its start
    // settled, so a server it is about to open is closed too.
    await Promise.all([webhookStarting.catch(() => undefined).then(() => webhook.stop()), controller.stop()]);
  }
  return 0;
}
