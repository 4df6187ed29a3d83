// Keeps the admission context current from informer caches (guardrails, namespaces, policies, role
// bindings, stores),
// so every review is a cache read, never an API call on the admission hot path.
import { Informer, NAMESPACES, type KubeClient, type KubeObject } from '../kube/index.ts';
import {
  CLUSTER_SECRET_STORES,
  SECRET_STORES,
  VAULT_GUARDRAILS,
  VAULT_POLICIES,
  VAULT_ROLE_BINDINGS,
} from '../schemas/resources.ts';
import type { Logger } from '../observability/log.ts';
import type { AdmissionContext, CachedObject, GuardrailObject } from './admission/context.ts';
import type { VaultTarget } from '../policy/capabilities.ts';
import type { EsoAdmissionContext, StoreReference } from './rules/eso/index.ts';

export interface ContextSource {
  /** The context for one review: a consistent snapshot of the caches. */
  context(): EsoAdmissionContext;
  /**
   * True once guardrails, namespaces and policies have listed once (readiness gate: before that,
   * guardrails are unknown). The ESO store caches are advisory: with no ESO CRDs installed they never
   * list, and the webhook must still become ready. So is the VaultRoleBinding cache (a chart older than
   * its RBAC rule cannot list them): until it lists, the VaultDynamicSecret access rules only warn.
   */
  synced(): boolean;
  start(): void;
  stop(): Promise<void>;
}

export interface ContextSourceOptions {
  client: Pick<KubeClient, 'list' | 'watch'>;
  namePrefix: string;
  controllerClass: string;
  /** The Vault server admission judges for (absent: OpenBao 2.7). */
  vaultTarget?: VaultTarget;
  /** Vault servers every store may name (--allowed-vault-server); absent: unrestricted unless a guardrail adds some. */
  vaultServers?: readonly string[];
  /** The apiserver's own token audiences; absent: unknown (rule eso.store.token-audience unchecked here). */
  apiServerAudiences?: readonly string[];
  /**
   * Read only these namespaces (a namespaced install): policies and stores in them, their Namespace
   * objects by name, and no ClusterSecretStore (not served then). Default: everything.
   */
  namespaces?: readonly string[];
  logger: Logger;
}

const key = (ns: string | undefined, name: string): string => (ns ? `${ns}/${name}` : name);

/**
 * The admission context over the informer caches. Lookups are methods (no closures built per review)
 * and read the caches live; `guardrails` is the list as of the last guardrail change, so one object
 * serves every review until a guardrail is added, changed or deleted.
 */
class InformerContext implements AdmissionContext {
  constructor(
    readonly guardrails: GuardrailObject[],
    private readonly namespaces: Informer<KubeObject>,
    private readonly policies: Informer<KubeObject>,
    private readonly bindings: Informer<KubeObject>,
    private readonly stores: Informer<KubeObject>,
    private readonly clusterStores: Informer<KubeObject> | undefined,
    readonly namePrefix: string,
    readonly controllerClass: string,
    readonly vaultTarget: VaultTarget | undefined,
    readonly vaultServers: readonly string[] | undefined,
    readonly apiServerAudiences: readonly string[] | undefined,
    private readonly scoped: readonly string[] | undefined,
  ) {}

  private cached(informer: Informer<KubeObject> | undefined, ns: string | undefined, name: string): CachedObject {
    if (!informer?.synced || (ns !== undefined && this.scoped && !this.scoped.includes(ns))) return undefined;
    return informer.cache.get(key(ns, name)) ?? null;
  }

  vaultPolicy(ns: string, name: string): CachedObject {
    return this.cached(this.policies, ns, name);
  }

  vaultRoleBinding(ns: string, name: string): CachedObject {
    return this.cached(this.bindings, ns, name);
  }

  secretStore(kind: 'SecretStore' | 'ClusterSecretStore', name: string, ns?: string): CachedObject {
    return kind === 'ClusterSecretStore'
      ? this.cached(this.clusterStores, undefined, name)
      : ns === undefined
        ? undefined
        : this.cached(this.stores, ns, name);
  }

  namespaceLabels(ns: string): Record<string, string> | undefined {
    if (!this.namespaces.synced) return undefined;
    const found = this.namespaces.cache.get(ns);
    return found ? { ...(found.metadata.labels ?? {}), 'kubernetes.io/metadata.name': ns } : undefined;
  }

  policyExists(ns: string, name: string): boolean | undefined {
    return this.policies.synced ? this.policies.cache.get(key(ns, name)) !== undefined : undefined;
  }

  storeControllerClass(ref: StoreReference): string | undefined {
    const cluster = ref.kind === 'ClusterSecretStore';
    const informer = cluster ? this.clusterStores : this.stores;
    if (!informer?.synced) return undefined;
    const store = informer.cache.get(key(cluster ? undefined : ref.namespace, ref.name));
    const spec = (store as { spec?: { controller?: unknown } } | undefined)?.spec;
    return store ? (typeof spec?.controller === 'string' ? spec.controller : '') : undefined;
  }
}

export function createContextSource(opts: ContextSourceOptions): ContextSource {
  const scoped = opts.namespaces?.length ? opts.namespaces : undefined;
  const make = (resource: typeof VAULT_GUARDRAILS): Informer<KubeObject> => {
    // Scoped: namespaced kinds per namespace, the Namespace objects by name (what the Roles allow).
    const scope = !scoped
      ? {}
      : resource.namespaced
        ? { namespaces: scoped }
        : resource === NAMESPACES
          ? { names: scoped }
          : {};
    const informer = new Informer<KubeObject>(opts.client, { resource, resyncMs: 0, ...scope });
    informer.onLifecycle((ev) => {
      if (ev.type === 'LIST_ERROR' || ev.type === 'WATCH_ERROR') {
        opts.logger.warn(
          { resource: resource.plural, code: ev.error.code, reason: ev.error.reason },
          'admission cache: list/watch failed, retrying',
        );
      }
    });
    return informer;
  };
  const guardrails = make(VAULT_GUARDRAILS);
  const namespaces = make(NAMESPACES);
  const policies = make(VAULT_POLICIES);
  const bindings = make(VAULT_ROLE_BINDINGS);
  const stores = make(SECRET_STORES);
  const clusterStores = scoped ? undefined : make(CLUSTER_SECRET_STORES);
  const all = [guardrails, namespaces, policies, bindings, stores, ...(clusterStores ? [clusterStores] : [])];
  const required = [guardrails, namespaces, policies];

  let current: InformerContext | undefined;
  // The informer updates its cache before it dispatches, so the next context() lists the new state.
  guardrails.addHandler(() => {
    current = undefined;
  });

  return {
    context(): EsoAdmissionContext {
      current ??= new InformerContext(
        guardrails.cache.list() as GuardrailObject[],
        namespaces,
        policies,
        bindings,
        stores,
        clusterStores,
        opts.namePrefix,
        opts.controllerClass,
        opts.vaultTarget,
        opts.vaultServers,
        opts.apiServerAudiences,
        scoped,
      );
      return current;
    },
    synced: () => required.every((i) => i.synced),
    start: () => {
      for (const i of all) i.start();
    },
    stop: async () => {
      await Promise.all(all.map((i) => i.stop()));
    },
  };
}
