// Declarative wiring of one controller, as controller-runtime's builder:
//
//   mgr.controller('vaultrolebinding')
//     .for(VAULT_ROLE_BINDINGS)
//     .withIndex('policy', (vrb) => vrb.spec.policies.map((p) => `${vrb.metadata.namespace}/${p}`))
//     .watches(VAULT_POLICIES, { index: 'policy', values: (vp) => [objectKey(vp)] })
//     .owns(SECRETS, { labelSelector: 'app.kubernetes.io/managed-by=vaultgate' })
//     .workers(2)
//     .complete(reconcileRoleBinding);
//
// "this changed → reconcile that" is declared here, never coded inside the reconciler.
import type { IndexFn } from './cache.ts';
import type { ObjectEvent, WatchSelectors } from './informer.ts';
import type { KubeObject } from './objects.ts';
import type { Reconciler } from './reconciler.ts';
import type { ResourceRef } from './resources.ts';

/** Keys (`namespace/name`) of primary objects to reconcile when a watched object changes. */
export type MapFn = (obj: KubeObject) => string[];

/** Map a watched object to primaries through an index on the primary's cache (registered with withIndex). */
export interface IndexMapping {
  index: string;
  /** The index values the changed object stands for, e.g. the policy's `namespace/name`. */
  values: (obj: KubeObject) => string[];
}

/** Filter on informer events before anything is queued (controller-runtime's predicates). */
export type Predicate = (ev: ObjectEvent) => boolean;

/** Pass only changes of metadata.generation (spec), creations, deletions and resyncs. */
export const generationChanged: Predicate = (ev) =>
  ev.type !== 'update' ||
  ev.old.metadata.generation !== ev.obj.metadata.generation ||
  ev.old.metadata.deletionTimestamp !== ev.obj.metadata.deletionTimestamp ||
  ev.old.metadata.generation === undefined;

/**
 * Options of for/owns/watches. `labelSelector`/`fieldSelector` filter the resource's shared informer on
 * the server (its cache then holds only matching objects, and an object that stops matching arrives as
 * a delete); every declaration of the same resource must use the same selectors.
 */
export interface SourceOptions extends WatchSelectors {
  predicate?: Predicate;
}

export interface WatchSpec {
  resource: ResourceRef;
  map: MapFn | IndexMapping;
  predicate?: Predicate;
  selectors: WatchSelectors;
}

export interface ControllerSpec {
  name: string;
  primary: ResourceRef;
  primaryPredicate?: Predicate;
  primarySelectors: WatchSelectors;
  owns: { resource: ResourceRef; predicate?: Predicate; selectors: WatchSelectors }[];
  watches: WatchSpec[];
  indexes: { name: string; fn: IndexFn }[];
  workers: number;
  reconciler: Reconciler;
}

/** What a builder needs from its manager (kept narrow to avoid a circular import). */
export interface ControllerHost {
  addController(spec: ControllerSpec): void;
}

export class ControllerBuilder {
  private primary?: ResourceRef;
  private primaryPredicate?: Predicate;
  private primarySelectors: WatchSelectors = {};
  private readonly ownsList: ControllerSpec['owns'] = [];
  private readonly watchList: WatchSpec[] = [];
  private readonly indexList: ControllerSpec['indexes'] = [];
  private workerCount = 1;

  constructor(
    private readonly host: ControllerHost,
    private readonly name: string,
  ) {}

  /** The primary resource: its keys are what the reconciler receives. Exactly one per controller. */
  for(resource: ResourceRef, opts: SourceOptions = {}): this {
    if (this.primary) throw new Error(`controller ${this.name}: for() called twice`);
    this.primary = resource;
    this.primaryPredicate = opts.predicate;
    this.primarySelectors = selectorsOf(opts);
    return this;
  }

  /**
   * Objects this controller creates: a change to one enqueues its controlling owner (the ownerReference
   * with `controller: true` whose kind/apiVersion is the primary's), as EnqueueRequestForOwner.
   */
  owns(resource: ResourceRef, opts: SourceOptions = {}): this {
    this.ownsList.push({ resource, predicate: opts.predicate, selectors: selectorsOf(opts) });
    return this;
  }

  /** Any other resource whose changes affect primaries: map a changed object to primary keys. */
  watches(resource: ResourceRef, map: MapFn | IndexMapping, opts: SourceOptions = {}): this {
    this.watchList.push({ resource, map, predicate: opts.predicate, selectors: selectorsOf(opts) });
    return this;
  }

  /** Register an index on the primary's cache (usable by watches() and by the reconciler via byIndex). */
  withIndex<T extends KubeObject = KubeObject>(name: string, fn: IndexFn<T>): this {
    this.indexList.push({ name, fn: fn as IndexFn });
    return this;
  }

  /** Concurrent reconciles (different keys only; one key never runs twice at once). Default 1. */
  workers(n: number): this {
    if (!Number.isInteger(n) || n < 1) throw new Error(`controller ${this.name}: workers must be a positive integer`);
    this.workerCount = n;
    return this;
  }

  complete(reconciler: Reconciler): void {
    if (!this.primary) throw new Error(`controller ${this.name}: for() is required`);
    this.host.addController({
      name: this.name,
      primary: this.primary,
      primaryPredicate: this.primaryPredicate,
      primarySelectors: this.primarySelectors,
      owns: this.ownsList,
      watches: this.watchList,
      indexes: this.indexList,
      workers: this.workerCount,
      reconciler,
    });
  }
}

function selectorsOf(opts: WatchSelectors): WatchSelectors {
  return {
    ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
    ...(opts.fieldSelector ? { fieldSelector: opts.fieldSelector } : {}),
  };
}
