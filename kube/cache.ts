// The informer's store: objects keyed `namespace/name` (or `name` when cluster-scoped) with indexes.
// Built in: the `namespace` index. Reconcilers register their own (e.g. ExternalSecrets by store name,
// VaultRoleBindings by policy name) and query with byIndex, as client-go's Indexer.
// Objects are deep-frozen on the way in: a reconciler that mutates a cached object would corrupt what
// every other reader sees (the classic client-go bug); copy with structuredClone before editing.
import { objectKey, type KubeObject } from './objects.ts';

/** Index values of one object (several allowed, e.g. every policy a binding names; [] = not indexed). */
export type IndexFn<T extends KubeObject = KubeObject> = (obj: T) => string[];

export const NAMESPACE_INDEX = 'namespace';

/** Read-only view of a cache, what reconcilers get. */
export interface Store<T extends KubeObject = KubeObject> {
  /** By key (`namespace/name`, or `name` for cluster-scoped). */
  get(key: string): T | undefined;
  /** All objects, or those of one namespace. */
  list(namespace?: string): T[];
  keys(): string[];
  /** Objects whose index function returned `value`. Throws on an unknown index (a wiring bug). */
  byIndex(index: string, value: string): T[];
  /** Keys whose index function returned `value`. */
  keysByIndex(index: string, value: string): string[];
  readonly size: number;
}

export interface CacheDelta<T> {
  added: T[];
  updated: { old: T; obj: T }[];
  deleted: T[];
}

function deepFreeze<V>(v: V): V {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

export class Cache<T extends KubeObject = KubeObject> implements Store<T> {
  private readonly objects = new Map<string, T>();
  private readonly indexFns = new Map<string, IndexFn<T>>();
  /** index → value → keys */
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  constructor() {
    this.addIndex(NAMESPACE_INDEX, (o) => (o.metadata.namespace ? [o.metadata.namespace] : []));
  }

  /** Register an index; existing objects are indexed at once. Re-registering the same name replaces it. */
  addIndex(name: string, fn: IndexFn<T>): void {
    this.indexFns.set(name, fn);
    const idx = new Map<string, Set<string>>();
    this.indexes.set(name, idx);
    for (const [key, obj] of this.objects) this.indexOne(idx, fn, key, obj);
  }

  hasIndex(name: string): boolean {
    return this.indexFns.has(name);
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.objects.values()];
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  keysByIndex(index: string, value: string): string[] {
    const idx = this.indexes.get(index);
    if (!idx) throw new Error(`cache: no index named "${index}"`);
    return [...(idx.get(value) ?? [])];
  }

  byIndex(index: string, value: string): T[] {
    return this.keysByIndex(index, value)
      .map((k) => this.objects.get(k))
      .filter((o): o is T => o !== undefined);
  }

  /** Insert or replace; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    if (old) this.unindex(key, old);
    // What is kept of an object (no managedFields...) is the informer's transform (kube/cache-transform.ts).
    const frozen = deepFreeze(obj);
    this.objects.set(key, frozen);
    for (const [name, fn] of this.indexFns) this.indexOne(this.indexes.get(name)!, fn, key, frozen);
    return old;
  }

  /** Remove by key; returns the removed object. */
  remove(key: string): T | undefined {
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.objects.delete(key);
    return old;
  }

  /**
   * Swap the whole content for a fresh LIST in one step (kube-rs's atomic store swap after a relist),
   * returning what changed, so consumers see deletes only for objects really absent from the new list.
   * Objects whose resourceVersion did not change count as unchanged. With `within`, only the cached
   * objects it accepts are replaced (one scope of a multi-namespace informer); the others stay.
   */
  replaceAll(objs: T[], within?: (obj: T) => boolean): CacheDelta<T> {
    const delta: CacheDelta<T> = { added: [], updated: [], deleted: [] };
    const seen = new Set<string>();
    for (const obj of objs) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.objects.get(key);
      if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) continue;
      this.upsert(obj);
      if (old) delta.updated.push({ old, obj });
      else delta.added.push(obj);
    }
    for (const key of this.keys()) {
      if (seen.has(key)) continue;
      if (within && !within(this.objects.get(key)!)) continue;
      const old = this.remove(key);
      if (old) delta.deleted.push(old);
    }
    return delta;
  }

  private indexOne(idx: Map<string, Set<string>>, fn: IndexFn<T>, key: string, obj: T): void {
    let values: string[];
    try {
      values = fn(obj);
    } catch {
      values = []; // a throwing index function must not break the informer; the object is just unindexed
    }
    for (const v of values) {
      let set = idx.get(v);
      if (!set) idx.set(v, (set = new Set()));
      set.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexFns) {
      const idx = this.indexes.get(name)!;
      let values: string[];
      try {
        values = fn(obj);
      } catch {
        values = [];
      }
      for (const v of values) {
        const set = idx.get(v);
        if (!set) continue;
        set.delete(key);
        if (set.size === 0) idx.delete(v);
      }
    }
  }
}
