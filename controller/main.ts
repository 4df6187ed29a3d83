// The controller process: one Manager running the controllers (VaultPolicy, VaultRoleBinding, SecretStore, ClusterSecretStore, ExternalSecret, ClusterExternalSecret, PushSecret) over shared informers, the Vault
// adapter (the controller's own identity for policies and roles; each store's identity for secrets),
// leader election, the webhook certificate keeper (leader only), /healthz /readyz /metrics, pino logs. `cli/commands/controller.ts` parses flags into
// ControllerAppOptions; tests and benchmarks call buildControllerApp with a fake or simulated client.
import { readFile } from 'node:fs/promises';
import { Registry } from 'prom-client';
import { silentLogger, type Logger } from '../observability/log.ts';
import { generationChanged, type Predicate } from '../kube/builder.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { Manager, type ManagerOptions } from '../kube/manager.ts';
import { RuntimeMetrics } from '../kube/metrics.ts';
import { objectKey, type KubeObject } from '../kube/objects.ts';
import { OwnWrites } from '../kube/own-writes.ts';
import { startHealthServer, type HealthServer } from '../kube/health.ts';
import { CONFIGMAPS, NAMESPACES, SECRETS, type ResourceRef } from '../kube/resources.ts';
import {
  CLUSTER_EXTERNAL_SECRETS,
  CLUSTER_SECRET_STORES,
  EXTERNAL_SECRETS,
  PUSH_SECRETS,
  SECRET_STORES,
  VAULT_DYNAMIC_SECRETS,
  VAULT_GUARDRAILS,
  VAULT_POLICIES,
  VAULT_ROLE_BINDINGS,
} from '../schemas/resources.ts';
import { createVaultClient, type VaultClientOptions } from '../vault/client.ts';
import { VaultRateLimits } from '../vault/rate-limits.ts';
import { createSysApi } from '../vault/sys.ts';
import { TokenCache } from '../vault/token-cache.ts';
import type { SysApi, VaultClient, VaultCredentials, VaultRequester } from '../vault/types.ts';
import {
  createExternalSecretReconciler,
  STORE_INDEX,
  storeIndex,
  TARGET_INDEX,
  targetIndex,
} from './reconcilers/externalsecret.ts';
import { createClusterExternalSecretReconciler } from './reconcilers/clusterexternalsecret.ts';
import {
  createPushSecretReconciler,
  PUSH_STORE_INDEX,
  pushStoreIndex,
  pushStoreKeys,
} from './reconcilers/pushsecret.ts';
import { TEMPLATE_SOURCE_INDEX, templateSourceIndex } from './reconcilers/template-sources.ts';
import { CoalescingKvReader } from './reconcilers/kv-reader.ts';
import { RenderPool, type SecretRenderer } from './reconcilers/render-pool.ts';

/** The controller's template renderer, also what `vaultgate template` renders with (the one entry the CLI imports). */
export { RenderPool } from './reconcilers/render-pool.ts';
import { createSecretStoreReconciler } from './reconcilers/secretstore.ts';
import { StoreConnector } from './reconcilers/store-connector.ts';
import { auditVaultWrite } from '../trail/events.ts';
import { openAuditTrail, type AuditTrailConfig } from '../trail/open.ts';
import type { AuditTrail } from '../trail/trail.ts';
import type { VaultWriteObserver } from './reconcilers/common.ts';
import { createVaultPolicyReconciler } from './reconcilers/vaultpolicy.ts';
import {
  DEFAULT_DRIFT_CHECK_MS,
  DEFAULT_VAULT_SA_TOKEN_FILE,
  DEFAULT_VAULT_TIMEOUT_MS,
  DEFAULT_WORKERS,
} from './defaults.ts';
import { createVaultGuardrailReconciler } from './reconcilers/vaultguardrail.ts';
import { admissionContext } from './reconcilers/admission-context.ts';
import { createVaultRoleBindingReconciler, POLICY_INDEX, policyIndex } from './reconcilers/vaultrolebinding.ts';
import {
  createLifecycleMetrics,
  createVaultDynamicSecretReconciler,
  settledWithoutTargets,
  VDS_SECRET_INDEX,
  vdsSecretIndex,
  type RolloutGate,
} from './reconcilers/vaultdynamicsecret.ts';
import { RolloutCoordinator } from './rollouts/coordinator.ts';
import { HmacKeyring } from './rollouts/hmac.ts';
import type { RolloutPolicy } from './rollouts/plan.ts';
import { externalSecretSource, vaultDynamicSecretSource } from './rollouts/sources.ts';
import { dataHash, LABEL_MANAGED } from '../eso/target.ts';
import { secretDigests } from '../kube/cache-transform.ts';
import { assertValidPrefix, DEFAULT_PREFIX } from '../schemas/vault-names.ts';
import { DEFAULT_TARGET, targetName, versionMismatch, type VaultTarget } from '../policy/capabilities.ts';
import { CertKeeper } from '../certs/keeper.ts';
import { certKubeClient } from '../certs/kube-adapter.ts';

/** The controller's defaults, which its flags declare too (the CLI imports the controller through this file only). */
export * from './defaults.ts';

/** How the controller authenticates to Vault as itself (bootstrap policy: policies and roles under the prefix). */
export type ControllerVaultAuth =
  { method: 'token'; token: string } | { method: 'kubernetes'; mount: string; role: string; tokenFile?: string };

export interface ControllerAppOptions {
  client: KubeClient;
  vault: {
    address: string;
    caPem?: string;
    namespace?: string;
    timeoutMs?: number;
    auth: ControllerVaultAuth;
    clientDefaults?: Partial<VaultClientOptions>;
    /** Request limits per Vault server, shared by the controller's own session and every store (default DEFAULT_VAULT_RATE_LIMIT each). */
    rateLimits?: VaultRateLimits;
  };
  /** Prefix of every Vault-side name (default `vaultgate`). */
  namePrefix?: string;
  /** ESO `spec.controller` class served; '' = stores without a class. */
  controllerClass?: string;
  /**
   * Reconcile ESO's kinds (SecretStore, ClusterSecretStore, ExternalSecret → Secret). Default true. Off,
   * the controller never reads or writes Secrets nor mints ServiceAccount tokens, and the chart grants
   * it neither (eso.enabled=false).
   */
  esoKinds?: boolean;
  /**
   * Vault servers (http(s) origins) secret stores may name (--allowed-vault-server; the chart passes
   * vault.address); enforce guardrails add per namespace. Checked before any token is minted or request
   * sent to a store's server. Absent or empty, with no guardrail adding one: any server.
   */
  vaultServers?: readonly string[];
  /** Concurrent reconciles per controller (default DEFAULT_WORKERS; ESO's kinds but ExternalSecret get half). */
  workers?: number;
  leaderElection?: ManagerOptions['leaderElection'];
  /**
   * Watch only these namespaces (default: all): the namespaced kinds in them and their Namespace objects.
   * Cluster-wide it then reads only VaultGuardrails, and serves no ClusterSecretStore (as ESO's scoped
   * mode). The chart's watchNamespaces renders Roles in each namespace instead of ClusterRoles.
   */
  namespaces?: readonly string[];
  log?: Logger;
  /** Port for /healthz, /readyz, /metrics; undefined = no server. */
  metricsPort?: number;
  metricsHost?: string;
  /** Kubernetes Events (default: recorded under `vaultgate.io/controller`). */
  eventsInstance?: string;
  informer?: ManagerOptions['informer'];
  /** Periodic Vault re-read of policies and roles (default DEFAULT_DRIFT_CHECK_MS). */
  driftCheckMs?: number;
  /** Overrides for tests/benchmarks. */
  sys?: SysApi;
  tokens?: TokenCache;
  events?: ManagerOptions['events'];
  /** Wall clock of the ExternalSecret refresh logic (benchmarks move it forward to force a refresh cycle). */
  now?: () => Date;
  /**
   * Renders tenant templates (ExternalSecret target.template, PushSecret template). Default: a RenderPool,
   * 2 worker threads with a 2 s deadline and a 64 MiB heap each, started at the first template.
   */
  renderer?: SecretRenderer;
  /** Keep the webhook's serving certificate (create, rotate, inject caBundle) while leading; off when omitted. */
  webhookCerts?: WebhookCertOptions;
  /** Signed audit trail of every Vault write (policy/role created, updated, deleted, drift repaired, adopted). */
  audit?: AuditTrailConfig;
  /** The Vault server vaultgate is set up for (`--vault-flavor`, `--vault-version`); default OpenBao 2.7. */
  vaultTarget?: VaultTarget;
  /**
   * The server's version, read once at start to compare with vaultTarget (default: `version` from the
   * unauthenticated `sys/seal-status`; undefined = unknown). Tests and benchmarks override it.
   */
  serverVersion?: () => Promise<string | undefined>;
  /**
   * Restart the Deployments, StatefulSets and DaemonSets that ExternalSecrets (opt-in annotation) and
   * VaultDynamicSecrets name when their Secret's data changes (controller/rollouts/). `namespace` holds the
   * Secret with the HMAC key (created once). Off when omitted; needs the ESO kinds.
   */
  rolloutRestarts?: { namespace: string; keySecret?: string; policy?: Partial<RolloutPolicy> };
  /**
   * Whether the workloads using a VaultDynamicSecret's Secret run with its current data (default: the rollout
   * coordinator when rolloutRestarts is set; else only objects without rollout targets ever count as rolled).
   */
  rollouts?: RolloutGate;
}

/** What the start-up version check found. */
export type VersionCheck =
  | { result: 'match'; version: string }
  | { result: 'mismatch'; version: string; message: string }
  | { result: 'unknown'; error: string };

/**
 * Compare the server's version with the configured target and log the outcome: a warning on a mismatch
 * (admission then judges for another server than the one written to) or when the version cannot be read.
 * Never throws and never stops the controller.
 */
export async function checkVaultVersion(
  target: VaultTarget,
  read: () => Promise<string | undefined>,
  log: Logger,
): Promise<VersionCheck> {
  let version: string | undefined;
  try {
    version = await read();
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    log.warn(
      { target: targetName(target), err: error },
      'could not read the Vault server version (sys/seal-status) to compare it with --vault-flavor/--vault-version',
    );
    return { result: 'unknown', error };
  }
  if (!version) {
    log.warn(
      { target: targetName(target) },
      'the Vault server reports no version in sys/seal-status; cannot compare it with --vault-flavor/--vault-version',
    );
    return { result: 'unknown', error: 'no version in sys/seal-status' };
  }
  const message = versionMismatch(target, version);
  if (message) {
    log.warn({ target: targetName(target), serverVersion: version }, message);
    return { result: 'mismatch', version, message };
  }
  log.info(
    { target: targetName(target), serverVersion: version },
    'Vault server version matches the configured target',
  );
  return { result: 'match', version };
}

/** The cert keeper's settings (certs/keeper.ts): the chart's `--webhook-*` flags. */
export interface WebhookCertOptions {
  /** Namespace of the cert Secret and of the webhook Service. */
  namespace: string;
  secretName: string;
  service: string;
  /** Label selector of the webhook configurations to inject the CA bundle into (default vaultgate.io/inject-ca-bundle=true). */
  configSelector?: string;
  leafValidityDays?: number;
  caValidityDays?: number;
  /** Upper bound between keeper passes (default 60 s). */
  intervalMs?: number;
  /** Delay before the follow-up pass after one that acted (default 2 s). */
  settleMs?: number;
}

export interface ControllerApp {
  manager: Manager;
  registry: Registry;
  tokens: TokenCache;
  reader: CoalescingKvReader;
  connector: StoreConnector;
  /** The rollout coordinator, when rolloutRestarts is set. */
  rollouts?: RolloutCoordinator;
  health?: HealthServer;
  /** The start-up version check (settles on its own; start() does not wait for it). */
  versionCheck?: Promise<VersionCheck>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The Secrets the controller caches: those it manages. */
export const MANAGED_SECRETS_SELECTOR = `${LABEL_MANAGED}=true`;

/** Metadata edits that matter to a reconciler: spec (generation), deletion, labels/annotations (adopt, force-sync). */
const specOrMetaChanged: Predicate = (ev) => {
  if (ev.type !== 'update') return true;
  const a = ev.old.metadata;
  const b = ev.obj.metadata;
  return (
    generationChanged(ev) ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {}) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? [])
  );
};

/** A VaultPolicy whose Ready status changed matters to the bindings that name it. */
const readinessChanged: Predicate = (ev) => {
  if (ev.type !== 'update') return true;
  const ready = (o: KubeObject): string =>
    JSON.stringify(
      (
        (o.status as { conditions?: Array<{ type: string; status: string; observedGeneration?: number }> } | undefined)
          ?.conditions ?? []
      ).find((c) => c.type === 'Ready') ?? null,
    );
  return ready(ev.old) !== ready(ev.obj) || generationChanged(ev);
};

/** Labels pick guardrails: a namespace whose labels changed may have moved into or out of one. */
const namespaceLabelsChanged: Predicate = (ev) =>
  ev.type === 'update' && JSON.stringify(ev.old.metadata.labels ?? {}) !== JSON.stringify(ev.obj.metadata.labels ?? {});

function controllerSession(
  opts: ControllerAppOptions,
  tokens: TokenCache,
  limits: VaultRateLimits,
): { client: VaultClient; sys: SysApi } {
  const v = opts.vault;
  const client = createVaultClient({
    limiter: limits,
    ...v.clientDefaults,
    address: v.address,
    timeoutMs: v.timeoutMs ?? DEFAULT_VAULT_TIMEOUT_MS,
    ...(v.namespace ? { namespace: v.namespace } : {}),
    ...(v.caPem ? { tls: { ca: v.caPem } } : {}),
  });
  const auth = v.auth;
  const creds: VaultCredentials =
    auth.method === 'token'
      ? { method: 'token', subject: 'vaultgate-controller', token: () => Promise.resolve(auth.token) }
      : {
          method: 'kubernetes',
          mount: auth.mount,
          role: auth.role,
          subject: 'vaultgate-controller',
          // Re-read on every login: the projected token rotates.
          jwt: async () => (await readFile(auth.tokenFile ?? DEFAULT_VAULT_SA_TOKEN_FILE, 'utf8')).trim(),
        };
  const session: VaultRequester = tokens.session(client, creds);
  return { client, sys: createSysApi(session) };
}

/** What every wiring step reads: the options, the manager and metrics registry, and settings derived once. */
interface Wiring {
  opts: ControllerAppOptions;
  log: Logger;
  manager: Manager;
  registry: Registry;
  /** Prefix of every Vault-side name. */
  prefix: string;
  controllerClass: string;
  /** Concurrent reconciles of the main controllers (shareOfWorkers for the others). */
  workers: number;
  /** Watching only some namespaces (opts.namespaces): no cluster-wide ESO kinds. */
  scoped: boolean;
}

/** Vault sessions of the stores, one connector per token cache. */
interface StoreConnectors {
  connector: StoreConnector;
  /** VaultDynamicSecrets' and generators' connector (see storeConnectors). */
  dynamicConnector: StoreConnector;
}

/** What the ESO kinds' reconcilers share besides the Wiring. */
interface EsoParts {
  connectors: StoreConnectors;
  reader: CoalescingKvReader;
  renderer: SecretRenderer;
  onVaultWrite: VaultWriteObserver;
  rollouts: RolloutCoordinator | undefined;
}

/** What the app starts and closes besides the manager. */
interface AppParts {
  tokens: TokenCache;
  own: { client: VaultClient; sys: SysApi } | undefined;
  writes: VaultWriteFollowUps;
  connectors: StoreConnectors;
  reader: CoalescingKvReader;
  renderPool: RenderPool | undefined;
  rollouts: RolloutCoordinator | undefined;
}

/**
 * The controller, wired step by step: the controller's own Vault session, the Manager, the stores' Vault
 * connectors, the rollout coordinator, the caches every reconciler reads, the controllers of each kind,
 * the webhook certificate keeper; controllerApp then starts and stops them.
 */
export function buildControllerApp(opts: ControllerAppOptions): ControllerApp {
  const log = opts.log ?? silentLogger;
  const tokens = opts.tokens ?? new TokenCache({ logger: log });
  const writes = vaultWriteFollowUps(opts, tokens);
  const prefix = opts.namePrefix ?? DEFAULT_PREFIX;
  assertValidPrefix(prefix);
  const registry = new Registry();
  const limits = opts.vault.rateLimits ?? new VaultRateLimits();
  const own = opts.sys ? undefined : controllerSession(opts, tokens, limits);
  const w: Wiring = {
    opts,
    log,
    manager: createManager(opts, log, registry),
    registry,
    prefix,
    controllerClass: opts.controllerClass ?? '',
    workers: opts.workers ?? DEFAULT_WORKERS,
    scoped: (opts.namespaces?.length ?? 0) > 0,
  };
  const connectors = storeConnectors(w, tokens, limits);
  const reader = new CoalescingKvReader(opts.now ? { now: () => opts.now!().getTime() } : {});
  const renderPool = opts.renderer ? undefined : new RenderPool();
  const rollouts = rolloutCoordinator(w);
  cacheGuardrailsAndNamespaces(w.manager);
  registerVaultObjectControllers(w, opts.sys ?? own!.sys, writes.onVaultWrite);
  if (opts.esoKinds !== false) {
    const renderer = opts.renderer ?? renderPool!;
    registerEsoControllers(w, { connectors, reader, renderer, onVaultWrite: writes.onVaultWrite, rollouts });
  }
  if (opts.webhookCerts) keepWebhookCerts(w, opts.webhookCerts);
  return controllerApp(w, { tokens, own, writes, connectors, reader, renderPool, rollouts });
}

/** What follows each Vault write of a reconciler: fresh logins for the role written, an audit record. */
interface VaultWriteFollowUps {
  onVaultWrite: VaultWriteObserver;
  openTrail(config: AuditTrailConfig): Promise<void>;
  closeTrail(): Promise<void>;
}

function vaultWriteFollowUps(opts: ControllerAppOptions, tokens: TokenCache): VaultWriteFollowUps {
  // Opened at start(); reconcilers only run after that (caches sync first), so no write goes unrecorded.
  let trail: AuditTrail | undefined;
  return {
    onVaultWrite: (write) => {
      // Stores logging in with a role just written hold tokens with its old policies: log in afresh.
      if (write.object === 'role' && write.mount) tokens.roleChanged(write.mount, write.vaultName);
      // A record that cannot be written must not undo or block the Vault write: log it (never the content).
      trail?.append(auditVaultWrite(write)).catch((err: unknown) => {
        opts.log?.error(
          { err: err instanceof Error ? err.message : String(err), vaultName: write.vaultName },
          'audit record of a Vault write could not be written',
        );
      });
    },
    async openTrail(config) {
      trail = await openAuditTrail(config, opts.client);
    },
    async closeTrail() {
      await trail?.close();
    },
  };
}

/** The Manager: shared informers and caches, work queues, leader election, Events, runtime metrics. */
function createManager(opts: ControllerAppOptions, log: Logger, registry: Registry): Manager {
  return new Manager({
    client: opts.client,
    log,
    metrics: new RuntimeMetrics(registry),
    namespaces: opts.namespaces,
    informer: opts.informer,
    leaderElection: opts.leaderElection,
    // Kinds newer than the first chart's CRDs (helm upgrade adds no CRD): missing, they do not hold readiness.
    optionalResources: [CLUSTER_EXTERNAL_SECRETS, PUSH_SECRETS, VAULT_DYNAMIC_SECRETS],
    // The Secret cache keeps no values: a keyed digest per value and ESO's data-hash are all a sync compares.
    cacheTransforms: [{ resource: SECRETS, transform: secretDigests(dataHash) }],
    events: opts.events ?? { controller: 'vaultgate.io/controller', instance: opts.eventsInstance ?? 'vaultgate' },
  });
}

function storeConnectors(w: Wiring, tokens: TokenCache, limits: VaultRateLimits): StoreConnectors {
  const { opts, log, manager } = w;
  // A connector checks a store's server and token audiences with the controller's view of guardrails and
  // namespace labels (cacheGuardrailsAndNamespaces) before it mints a token or sends a request.
  const connectorWith = (tokenCache: TokenCache): StoreConnector =>
    new StoreConnector({
      client: opts.client,
      tokens: tokenCache,
      timeoutMs: opts.vault.timeoutMs ?? DEFAULT_VAULT_TIMEOUT_MS,
      clientDefaults: { logger: log, limiter: limits, ...opts.vault.clientDefaults },
      admission: () => ({
        ...admissionContext({
          guardrails: manager.cache(VAULT_GUARDRAILS),
          namespaces: manager.cache(NAMESPACES),
          namePrefix: w.prefix,
          controllerClass: w.controllerClass,
        }),
        ...(opts.vaultServers?.length ? { vaultServers: opts.vaultServers } : {}),
      }),
    });
  return {
    connector: connectorWith(tokens),
    // VaultDynamicSecrets' own connector: its TokenCache never revokes a token it replaces, as Vault revokes
    // the leases a token minted with it (the planner replaces a credential before its minting token ends).
    dynamicConnector: connectorWith(new TokenCache({ logger: log, revokeOnEvict: false })),
  };
}

/**
 * Workloads restarted when the Secrets they consume change (opts.rolloutRestarts, with the ESO kinds);
 * settled() gates the revocation of replaced credentials.
 */
function rolloutCoordinator({ opts, registry }: Wiring): RolloutCoordinator | undefined {
  const restarts = opts.rolloutRestarts;
  if (!restarts || opts.esoKinds === false) return undefined;
  return new RolloutCoordinator({
    client: opts.client,
    keyring: new HmacKeyring(opts.client, restarts.namespace, restarts.keySecret),
    sources: [externalSecretSource, vaultDynamicSecretSource],
    secretSelector: MANAGED_SECRETS_SELECTOR,
    registry,
    ...(restarts.policy ? { policy: restarts.policy } : {}),
  });
}

/**
 * Caches the reconcilers read besides their primaries: guardrails and namespaces (admission re-check,
 * ClusterSecretStore namespaceSelector). Scoped to watched namespaces, the Namespace informer lists
 * those objects by name only (a Role cannot grant a cluster-wide list).
 */
function cacheGuardrailsAndNamespaces(manager: Manager): void {
  manager.informer(VAULT_GUARDRAILS);
  manager.informer(NAMESPACES);
}

/** The keys of every cached `res` object: a change of any guardrail re-checks them all. */
const allKeys = (manager: Manager, res: ResourceRef) => (): string[] => manager.cache(res).keys();

/**
 * A namespace relabel re-checks that namespace's VaultPolicies and VaultRoleBindings at once (labels
 * pick guardrails), not at the next drift check. Not in a namespace-scoped install (no Namespace informer).
 */
const keysInNamespace =
  (manager: Manager, res: ResourceRef) =>
  (ns: KubeObject): string[] =>
    manager.cache(res).list(ns.metadata.name).map(objectKey);

/** The share of the workers a less busy controller gets (at least one). */
const shareOfWorkers = (workers: number, divisor: number): number => Math.max(1, Math.floor(workers / divisor));

/** VaultPolicy, VaultRoleBinding and VaultGuardrail: the Vault objects the controller writes as itself. */
function registerVaultObjectControllers(w: Wiring, sys: SysApi, onVaultWrite: VaultWriteObserver): void {
  const { manager, prefix: namePrefix, controllerClass, workers } = w;
  const driftCheckMs = w.opts.driftCheckMs ?? DEFAULT_DRIFT_CHECK_MS;
  const vaultObject = { sys, namePrefix, controllerClass, driftCheckMs, onVaultWrite };

  const policies = manager
    .controller('vaultpolicy')
    .for(VAULT_POLICIES, { predicate: specOrMetaChanged })
    .watches(VAULT_GUARDRAILS, allKeys(manager, VAULT_POLICIES), { predicate: generationChanged });
  policies.watches(NAMESPACES, keysInNamespace(manager, VAULT_POLICIES), { predicate: namespaceLabelsChanged });
  policies.workers(workers).complete(createVaultPolicyReconciler(vaultObject));

  const bindings = manager
    .controller('vaultrolebinding')
    .for(VAULT_ROLE_BINDINGS, { predicate: specOrMetaChanged })
    .withIndex(POLICY_INDEX, policyIndex)
    .watches(VAULT_POLICIES, { index: POLICY_INDEX, values: (vp) => [objectKey(vp)] }, { predicate: readinessChanged })
    .watches(VAULT_GUARDRAILS, allKeys(manager, VAULT_ROLE_BINDINGS), { predicate: generationChanged });
  bindings.watches(NAMESPACES, keysInNamespace(manager, VAULT_ROLE_BINDINGS), { predicate: namespaceLabelsChanged });
  bindings.workers(workers).complete(createVaultRoleBindingReconciler(vaultObject));

  // VaultGuardrail status (selected namespaces, floor, Ready): a namespace created, deleted or relabelled
  // may move into or out of a guardrail's selector.
  manager
    .controller('vaultguardrail')
    .for(VAULT_GUARDRAILS, { predicate: generationChanged })
    .watches(NAMESPACES, allKeys(manager, VAULT_GUARDRAILS), {
      predicate: (ev) => ev.type !== 'update' || namespaceLabelsChanged(ev),
    })
    .workers(1)
    .complete(
      createVaultGuardrailReconciler({ namePrefix, controllerClass, ...(w.opts.now ? { now: w.opts.now } : {}) }),
    );
}

/** ESO's kinds and VaultDynamicSecret: the controllers that read and write Secrets (opts.esoKinds). */
function registerEsoControllers(w: Wiring, parts: EsoParts): void {
  registerSecretStores(w, parts.connectors.connector);
  registerExternalSecrets(w, parts);
  // ClusterExternalSecrets (cluster-wide installs only, as ESO's scoped mode).
  if (!w.scoped) registerClusterExternalSecrets(w);
  registerVaultDynamicSecrets(w, parts);
  registerPushSecrets(w, parts);
  // One controller per workload kind, after the sources' informers (controller/rollouts/coordinator.ts).
  parts.rollouts?.register(w.manager, shareOfWorkers(w.workers, 4));
}

function registerSecretStores(w: Wiring, connector: StoreConnector): void {
  const { controllerClass, prefix: namePrefix } = w;
  // A ClusterSecretStore serves every namespace: not in a namespaced install (ESO's scoped mode neither).
  for (const kind of w.scoped ? (['SecretStore'] as const) : (['SecretStore', 'ClusterSecretStore'] as const)) {
    w.manager
      .controller(kind.toLowerCase())
      .for(kind === 'SecretStore' ? SECRET_STORES : CLUSTER_SECRET_STORES, { predicate: specOrMetaChanged })
      .workers(shareOfWorkers(w.workers, 2))
      .complete(createSecretStoreReconciler({ kind, connector, controllerClass, namePrefix }));
  }
}

/**
 * The Secret informer lists and watches only Secrets labelled reconcile.external-secrets.io/managed=true
 * (ESO's managed-secrets cache): a cluster's other Secrets are never held in memory. Every Secret the
 * reconciler writes carries the label, Merge targets included; one it has not labelled yet (a Merge
 * target before its first sync, or one whose label was removed by hand) it reads with a GET and labels
 * on the next write. A Secret losing the label arrives as a delete, so its ExternalSecret re-syncs.
 */
function registerExternalSecrets(w: Wiring, { connectors, reader, renderer }: EsoParts): void {
  const { opts } = w;
  const storeReadiness: Predicate = readinessChanged;
  const ownSecretWrites = new OwnWrites();
  const externalSecrets = w.manager
    .controller('externalsecret')
    .for(EXTERNAL_SECRETS, { predicate: specOrMetaChanged })
    .withIndex(STORE_INDEX, storeIndex)
    .withIndex(TARGET_INDEX, targetIndex)
    // Not the event of the reconciler's own write: it knows that Secret already (kube/own-writes.ts).
    .watches(
      SECRETS,
      { index: TARGET_INDEX, values: (s) => [objectKey(s)] },
      { labelSelector: MANAGED_SECRETS_SELECTOR, predicate: ownSecretWrites.notOwn },
    )
    // templateFrom sources: a changed ConfigMap re-renders at once (ConfigMaps are cached, as ESO's
    // client caches them); a Secret source at once if it is a managed Secret (another ExternalSecret's
    // output, in the Secret cache), else at the next refresh (read with a GET, as ESO reads it).
    .withIndex(TEMPLATE_SOURCE_INDEX, templateSourceIndex)
    .watches(CONFIGMAPS, { index: TEMPLATE_SOURCE_INDEX, values: (cm) => [`ConfigMap/${objectKey(cm)}`] })
    .watches(
      SECRETS,
      { index: TEMPLATE_SOURCE_INDEX, values: (s) => [`Secret/${objectKey(s)}`] },
      { labelSelector: MANAGED_SECRETS_SELECTOR },
    )
    .watches(
      SECRET_STORES,
      { index: STORE_INDEX, values: (s) => [`SecretStore/${s.metadata.namespace}/${s.metadata.name}`] },
      { predicate: storeReadiness },
    );
  if (!w.scoped)
    externalSecrets.watches(
      CLUSTER_SECRET_STORES,
      { index: STORE_INDEX, values: (s) => [`ClusterSecretStore/${s.metadata.name}`] },
      { predicate: storeReadiness },
    );
  externalSecrets.workers(w.workers).complete(
    createExternalSecretReconciler({
      connector: connectors.connector,
      // Generators' leases are children of the token that minted them: a connector that never revokes one.
      generatorConnector: connectors.dynamicConnector,
      reader,
      controllerClass: w.controllerClass,
      namePrefix: w.prefix,
      ownSecretWrites,
      renderer,
      ...(opts.now ? { now: opts.now } : {}),
    }),
  );
}

/** A namespace created, deleted or relabelled, or one of its ExternalSecrets changed or deleted, re-checks it at once. */
function registerClusterExternalSecrets(w: Wiring): void {
  w.manager
    .controller('clusterexternalsecret')
    .for(CLUSTER_EXTERNAL_SECRETS, { predicate: specOrMetaChanged })
    .owns(EXTERNAL_SECRETS)
    .watches(NAMESPACES, allKeys(w.manager, CLUSTER_EXTERNAL_SECRETS), {
      predicate: (ev) => ev.type !== 'update' || namespaceLabelsChanged(ev),
    })
    .workers(shareOfWorkers(w.workers, 2))
    .complete(createClusterExternalSecretReconciler({ controllerClass: w.controllerClass, namePrefix: w.prefix }));
}

/**
 * VaultDynamicSecrets: woken by a change of the object or of its target Secret or copy (deleted, edited),
 * else at the next renewal the planner computes.
 */
function registerVaultDynamicSecrets(w: Wiring, { connectors, rollouts }: EsoParts): void {
  const { opts } = w;
  const dynamicSecretWrites = new OwnWrites();
  w.manager
    .controller('vaultdynamicsecret')
    .for(VAULT_DYNAMIC_SECRETS, { predicate: specOrMetaChanged })
    .withIndex(VDS_SECRET_INDEX, vdsSecretIndex)
    .watches(
      SECRETS,
      { index: VDS_SECRET_INDEX, values: (s) => [objectKey(s)] },
      { labelSelector: MANAGED_SECRETS_SELECTOR, predicate: dynamicSecretWrites.notOwn },
    )
    .workers(shareOfWorkers(w.workers, 2))
    .complete(
      createVaultDynamicSecretReconciler({
        connector: connectors.dynamicConnector,
        rollouts: opts.rollouts ?? rollouts ?? settledWithoutTargets,
        metrics: createLifecycleMetrics(w.registry),
        controllerClass: w.controllerClass,
        namePrefix: w.prefix,
        ownSecretWrites: dynamicSecretWrites,
        ...(opts.now ? { now: () => opts.now!().getTime() } : {}),
      }),
    );
}

/**
 * PushSecrets: pushed on a spec or metadata change and every refreshInterval (source Secrets are read
 * with a GET then, as ESO reads them; they are not cached). A store created, made ready or relabelled
 * wakes the PushSecrets naming or selecting it: one applied before its store syncs once the store exists.
 */
function registerPushSecrets(w: Wiring, { connectors, onVaultWrite, renderer }: EsoParts): void {
  const { opts } = w;
  const storeChanged: Predicate = (ev) =>
    readinessChanged(ev) ||
    (ev.type === 'update' &&
      JSON.stringify(ev.old.metadata.labels ?? {}) !== JSON.stringify(ev.obj.metadata.labels ?? {}));
  const pushSecrets = w.manager
    .controller('pushsecret')
    .for(PUSH_SECRETS, { predicate: specOrMetaChanged })
    .withIndex(PUSH_STORE_INDEX, pushStoreIndex)
    .watches(SECRET_STORES, { index: PUSH_STORE_INDEX, values: pushStoreKeys }, { predicate: storeChanged });
  if (!w.scoped)
    pushSecrets.watches(
      CLUSTER_SECRET_STORES,
      { index: PUSH_STORE_INDEX, values: pushStoreKeys },
      { predicate: storeChanged },
    );
  pushSecrets.workers(shareOfWorkers(w.workers, 2)).complete(
    createPushSecretReconciler({
      connector: connectors.connector,
      controllerClass: w.controllerClass,
      namePrefix: w.prefix,
      onVaultWrite,
      renderer,
      ...(opts.now ? { now: opts.now } : {}),
    }),
  );
}

/** The webhook's serving certificate, kept by the leader (certs/keeper.ts). */
function keepWebhookCerts({ opts, log, manager, registry }: Wiring, wc: WebhookCertOptions): void {
  // One keeper for the process (its metrics register once); each leadership term runs its loop.
  const keeper = new CertKeeper({
    client: certKubeClient(opts.client),
    namespace: wc.namespace,
    secretName: wc.secretName,
    service: wc.service,
    ...(wc.configSelector ? { webhookSelector: wc.configSelector } : {}),
    policy: {
      ...(wc.leafValidityDays ? { leafValidityDays: wc.leafValidityDays } : {}),
      ...(wc.caValidityDays ? { caValidityDays: wc.caValidityDays } : {}),
    },
    ...(wc.intervalMs !== undefined ? { intervalMs: wc.intervalMs } : {}),
    ...(wc.settleMs !== undefined ? { settleMs: wc.settleMs } : {}),
    log: log.child({ component: 'cert-keeper' }),
    registry,
  });
  manager.addLeaderTask('webhook-cert-keeper', (signal) => keeper.run(signal));
}

/**
 * start(): /healthz /readyz /metrics, the audit trail, the server version check (not awaited), then the
 * manager; once, however often called. stop(): the manager first, then what the reconcilers used.
 */
function controllerApp(w: Wiring, parts: AppParts): ControllerApp {
  const { opts, log, manager, registry } = w;
  const { tokens, own, writes, connectors, reader, renderPool, rollouts } = parts;
  let starting: Promise<void> | undefined;
  const app: ControllerApp = {
    manager,
    registry,
    tokens,
    reader,
    connector: connectors.connector,
    ...(rollouts ? { rollouts } : {}),
    start() {
      starting ??= (async () => {
        if (opts.metricsPort !== undefined) {
          app.health = await startHealthServer({
            port: opts.metricsPort,
            host: opts.metricsHost ?? '0.0.0.0',
            registry,
            status: () => manager.status(),
          });
        }
        if (opts.audit) await writes.openTrail(opts.audit);
        const readVersion = opts.serverVersion ?? (own ? sealStatusVersion(own.client) : undefined);
        if (readVersion) app.versionCheck = checkVaultVersion(opts.vaultTarget ?? DEFAULT_TARGET, readVersion, log);
        await manager.start();
      })();
      return starting;
    },
    async stop() {
      await manager.stop();
      await starting?.catch(() => undefined); // a stop during start (a signal before the caches synced)
      await app.health?.close();
      reader.clear();
      await renderPool?.close();
      connectors.connector.close();
      connectors.dynamicConnector.close();
      await tokens.close();
      own?.client.close();
      await writes.closeTrail();
    },
  };
  return app;
}

/** The server's version from the unauthenticated `sys/seal-status`. */
function sealStatusVersion(client: VaultClient): () => Promise<string | undefined> {
  return async () => {
    const res = await client.request<{ version?: unknown }>({
      operation: 'sys.seal-status',
      method: 'GET',
      path: 'sys/seal-status',
    });
    return typeof res?.version === 'string' ? res.version : undefined;
  };
}

export { LABEL_MANAGED as MANAGED_SECRET_LABEL };
