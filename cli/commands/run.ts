// `vaultgate run`: the admission webhook and the controller in one process (small clusters, local
// trials). Each half takes its own command's flags; the ones both declare (shared-flags.ts) are given once,
// and both halves share one Kubernetes client.
import { buildControllerApp, type ControllerAppOptions } from '../../controller/main.ts';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import { buildWebhookProcess, type WebhookProcessOptions } from '../../webhook/main.ts';
import { defineCommand, type Flag, type FlagSection, flagsOf, type FlagValues, sectionsHelp } from './flags.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import { CONTROLLER_AUDIT_SECTION, CONTROLLER_SECTIONS, controllerOptionsFrom } from './controller.ts';
import {
  ADMISSION_WORKERS_FLAG,
  untilSignal,
  WEBHOOK_METRICS_PORT_FLAG,
  WEBHOOK_SECTIONS,
  webhookOptionsFrom,
} from './webhook.ts';

/** --metrics-port is the controller's in `run`; the webhook's /metrics gets a flag of its own. */
export const WEBHOOK_METRICS_PORT_IN_RUN: Flag = {
  ...WEBHOOK_METRICS_PORT_FLAG,
  name: 'webhook-metrics-port',
  help: "the webhook's plain-HTTP /metrics; 0 = any free port",
};

/**
 * The webhook's sections as `run` takes them: without the flags the controller's sections list (the
 * shared ones, given once; --help), without --no-kube (the controller needs the cluster), with
 * --webhook-metrics-port for its --metrics-port. The audit flags stay: in `run` they are the webhook's
 * (on by default), and the controller's records follow them.
 */
function webhookSectionsInRun(): FlagSection[] {
  const controllerFlags = new Set(
    CONTROLLER_SECTIONS.filter((s) => s !== CONTROLLER_AUDIT_SECTION).flatMap((s) => s.flags),
  );
  return WEBHOOK_SECTIONS.map((s) => ({
    title: s.title,
    flags: s.flags
      .filter((f) => !controllerFlags.has(f) && f.name !== 'no-kube' && f !== ADMISSION_WORKERS_FLAG)
      .map((f) => (f === WEBHOOK_METRICS_PORT_FLAG ? WEBHOOK_METRICS_PORT_IN_RUN : f)),
  })).filter((s) => s.flags.length > 0);
}

/** The controller's sections without its Audit trail section (the webhook's audit flags decide in `run`). */
const CONTROLLER_SECTIONS_IN_RUN = CONTROLLER_SECTIONS.filter((s) => s !== CONTROLLER_AUDIT_SECTION);
const WEBHOOK_SECTIONS_IN_RUN = webhookSectionsInRun();

/** Every flag of `vaultgate run`: each declared once, a shared one for both halves. */
export const RUN_SECTIONS: readonly FlagSection[] = [...WEBHOOK_SECTIONS_IN_RUN, ...CONTROLLER_SECTIONS_IN_RUN];
flagsOf(RUN_SECTIONS); // throws at load if two different declarations share a name

// The help places the two halves' sections itself, each under its own heading.
const helpText = (): string => `Usage: vaultgate run [options]

Runs the admission webhook and the controller in one process, e.g. for a small cluster or a local trial.
Both halves share --kubeconfig, --namespace, --name-prefix, --controller-class, --allowed-vault-server,
--vault-flavor, --vault-version and --log-level (and one Kubernetes client); every other flag is the one of
\`vaultgate webhook\` or \`vaultgate controller\`. SIGTERM or SIGINT stops both gracefully (the webhook
drains, the controller finishes in-flight reconciles).

Webhook (see vaultgate webhook --help):

${sectionsHelp(WEBHOOK_SECTIONS_IN_RUN)}
Controller and shared flags (see vaultgate controller --help):

${sectionsHelp(CONTROLLER_SECTIONS_IN_RUN)}`;

const COMMAND = defineCommand('run', RUN_SECTIONS, helpText);
export const { help: RUN_HELP, options: RUN_OPTIONS } = COMMAND;

export interface RunOptions {
  webhook: WebhookProcessOptions;
  controller: ControllerAppOptions;
}

/** Flags → both halves' options over one Kubernetes client; throws with a message naming the flag. */
export function runOptionsFrom(values: FlagValues, deps: { client?: HttpKubeClient } = {}): RunOptions {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  // Webhook flags first: a bad one is reported before any kubeconfig is read. webhookOptionsFrom builds
  // its own client unless told there is none, so it is told so and handed the shared one. One admission
  // process: workers would each run the controller too.
  const webhook = webhookOptionsFrom({
    ...values,
    'no-kube': true,
    'metrics-port': values['webhook-metrics-port'],
    'admission-workers': '1',
  });
  const {
    audit: _a,
    'audit-namespace': _n,
    'audit-key-file': _k,
    'audit-file': _f,
    'webhook-metrics-port': _m,
    ...controllerValues
  } = values;
  const controller = controllerOptionsFrom(controllerValues, {
    client: deps.client ?? new HttpKubeClient(loadKubeConfig(str('kubeconfig'))),
  });
  // One set of audit flags for the process: the controller's Vault writes go to its own chain (stdout
  // only: two writers must not share one file's chain), signed with the webhook's key.
  if (webhook.audit) {
    const { file: _file, ...rest } = webhook.audit;
    controller.audit = { ...rest, replica: `${webhook.audit.replica}-controller` };
  }
  return { webhook: { ...webhook, client: controller.client }, controller };
}

export async function run(argv: string[]): Promise<number> {
  const opts = COMMAND.parse(argv, (values) => runOptionsFrom(values));
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
    if (controller.health)
      opts.controller.log?.info({ port: controller.health.port }, 'controller health and metrics listening');
    log.info({ signal: await signal }, 'shutting down');
  } finally {
    // controller.stop() also ends a start still waiting for caches; the webhook is stopped once its start
    // settled, so a server it is about to open is closed too.
    await Promise.all([webhookStarting.catch(() => undefined).then(() => webhook.stop()), controller.stop()]);
  }
  return 0;
}
