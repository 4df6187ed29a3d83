/* eslint-disable @typescript-eslint/require-await -- a fake: async to match the KubeClient interface */
// In-memory Kubernetes for reconciler unit tests: a KubeClient whose writes land in runtime Caches that
// the ReconcileContext reads (an informer that is always in sync), with write counters, injectable
// 409s on status writes, captured Events and a captured log. SSA is approximated: an apply merges the
// given fields into the object (enough for what the reconcilers write); GC of owned objects is explicit.
import { Writable } from 'node:stream';
import { Cache, type Store } from '../../../kube/cache.ts';
import { KubeApiError } from '../../../kube/errors.ts';
import type { EventInput, EventRecorder } from '../../../kube/events.ts';
import type { ApplyOptions, DeleteOptions, IssuedToken, KubeClient, ListOptions, ListResult, PatchType, TokenRequestOptions, WriteOptions } from '../../../kube/kube-client.ts';
import { objectKey, type KubeObject, type WatchEvent } from '../../../kube/objects.ts';
import type { ReconcileContext, Reconciler, Result } from '../../../kube/reconciler.ts';
import { resourceId, type ResourceRef } from '../../../kube/resources.ts';
import { createLogger } from '../../../observability/log.ts';

export interface RecordedEvent extends EventInput {
  object: string;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return patch;
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export class FakeKube implements KubeClient {
  readonly caches = new Map<string, Cache>();
  readonly writes: string[] = [];
  readonly events: RecordedEvent[] = [];
  readonly logLines: string[] = [];
  /** Status writes to fail with 409 before succeeding. */
  statusConflicts = 0;
  tokenFor: (ns: string, sa: string, opts?: TokenRequestOptions) => string = (ns, sa) => `token-${ns}-${sa}`;
  tokenRequests: string[] = [];
  /** The audiences of each TokenRequest, in order ([] = none asked: the apiserver's own). */
  tokenAudiences: string[][] = [];
  private rv = 1;
  private uid = 1;

  cacheOf(res: ResourceRef): Cache {
    const id = resourceId(res);
    let c = this.caches.get(id);
    if (!c) this.caches.set(id, (c = new Cache()));
    return c;
  }

  /** Put an object as if a user created it (not counted as a controller write). */
  put<T extends KubeObject>(res: ResourceRef, obj: T): T {
    const cur = this.cacheOf(res).get(objectKey(obj));
    const specChanged = !cur || JSON.stringify(cur.spec) !== JSON.stringify(obj.spec);
    const stored = structuredClone({
      ...obj,
      metadata: {
        ...obj.metadata,
        uid: obj.metadata.uid ?? cur?.metadata.uid ?? `uid-${this.uid++}`,
        generation: specChanged ? (cur?.metadata.generation ?? 0) + 1 : cur?.metadata.generation ?? 1,
        resourceVersion: String(this.rv++),
        creationTimestamp: cur?.metadata.creationTimestamp ?? '2026-01-01T00:00:00Z',
      },
      ...(cur?.status !== undefined && obj.status === undefined ? { status: cur.status } : {}),
    });
    this.cacheOf(res).upsert(stored);
    return structuredClone(stored);
  }

  getObj<T extends KubeObject = KubeObject>(res: ResourceRef, key: string): T | undefined {
    const o = this.cacheOf(res).get(key);
    return o ? (structuredClone(o) as T) : undefined;
  }

  /** Delete as the apiserver would: with finalizers only a deletionTimestamp is set. */
  remove(res: ResourceRef, key: string): void {
    const o = this.cacheOf(res).get(key);
    if (!o) return;
    if (o.metadata.finalizers?.length) {
      this.cacheOf(res).upsert({ ...structuredClone(o), metadata: { ...structuredClone(o.metadata), deletionTimestamp: '2026-01-01T00:00:00Z', resourceVersion: String(this.rv++) } });
    } else this.cacheOf(res).remove(key);
  }

  context(opts: { controller?: string } = {}): ReconcileContext {
    const log = createLogger({ level: 'debug', destination: new Writable({ write: (chunk: Buffer, _e, cb) => { this.logLines.push(chunk.toString()); cb(); } }) });
    const events: EventRecorder = { record: (obj, ev) => { this.events.push({ ...ev, object: objectKey(obj) }); } };
    return {
      controller: opts.controller ?? 'test', client: this, cache: <T extends KubeObject>(res: ResourceRef) => this.cacheOf(res) as unknown as Store<T>,
      events, log, signal: new AbortController().signal, retries: 0,
    };
  }

  async reconcile(r: Reconciler, key: string): Promise<Result> {
    return r(key, this.context());
  }

  private write<T extends KubeObject>(res: ResourceRef, verb: string, obj: KubeObject): T {
    this.writes.push(`${verb} ${res.plural} ${objectKey(obj)}`);
    const stored = structuredClone({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.rv++) } });
    if (stored.metadata.deletionTimestamp && !stored.metadata.finalizers?.length) {
      this.cacheOf(res).remove(objectKey(stored));
      return stored as T;
    }
    this.cacheOf(res).upsert(stored);
    return structuredClone(stored) as T;
  }

  async get<T extends KubeObject = KubeObject>(res: ResourceRef, name: string, namespace?: string): Promise<T | undefined> {
    return this.getObj<T>(res, namespace ? `${namespace}/${name}` : name);
  }

  async list<T extends KubeObject = KubeObject>(res: ResourceRef, opts: ListOptions = {}): Promise<ListResult<T>> {
    return { items: this.cacheOf(res).list(opts.namespace || undefined).map((o) => structuredClone(o) as T), resourceVersion: String(this.rv) };
  }

  async create<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T, _o?: WriteOptions): Promise<T> {
    if (this.cacheOf(res).get(objectKey(obj))) throw new KubeApiError(409, 'AlreadyExists', `${res.plural} "${obj.metadata.name}" already exists`);
    return this.write<T>(res, 'create', { ...obj, metadata: { ...obj.metadata, uid: `uid-${this.uid++}`, generation: 1 } });
  }

  async replace<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T): Promise<T> {
    return this.write<T>(res, 'replace', obj);
  }

  async patch<T extends KubeObject = KubeObject>(res: ResourceRef, name: string, namespace: string | undefined, patch: unknown, type: PatchType): Promise<T> {
    if (type !== 'merge') throw new Error('fake: only merge patches');
    const key = namespace ? `${namespace}/${name}` : name;
    const cur = this.cacheOf(res).get(key);
    if (!cur) throw new KubeApiError(404, 'NotFound', `${res.plural} "${name}" not found`);
    const p = patch as { metadata?: { resourceVersion?: string } };
    if (p.metadata?.resourceVersion && p.metadata.resourceVersion !== cur.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', 'the object has been modified');
    return this.write<T>(res, 'patch', mergePatch(structuredClone(cur), patch) as KubeObject);
  }

  async apply<T extends KubeObject = KubeObject>(res: ResourceRef, obj: KubeObject, opts: ApplyOptions = {}): Promise<T> {
    const key = objectKey(obj);
    const cur = this.cacheOf(res).get(key);
    if (opts.subresource === 'status') {
      if (!cur) throw new KubeApiError(404, 'NotFound', `${res.plural} "${obj.metadata.name}" not found`);
      if (this.statusConflicts > 0) {
        this.statusConflicts--;
        throw new KubeApiError(409, 'Conflict', 'Apply failed with 1 conflict');
      }
      return this.write<T>(res, 'status', { ...structuredClone(cur), status: structuredClone(obj.status) });
    }
    const { apiVersion: _a, kind: _k, ...rest } = obj;
    if (!cur) return this.write<T>(res, 'create', { ...rest, metadata: { ...rest.metadata, uid: `uid-${this.uid++}` } });
    const merged = mergePatch(structuredClone(cur), { ...rest, metadata: { ...rest.metadata, ownerReferences: rest.metadata.ownerReferences ?? cur.metadata.ownerReferences } }) as KubeObject;
    return this.write<T>(res, 'apply', merged);
  }

  async delete<T extends KubeObject = KubeObject>(res: ResourceRef, name: string, namespace?: string, _o?: DeleteOptions): Promise<T | undefined> {
    const key = namespace ? `${namespace}/${name}` : name;
    if (!this.cacheOf(res).get(key)) return undefined;
    this.writes.push(`delete ${res.plural} ${key}`);
    this.cacheOf(res).remove(key);
    return undefined;
  }

  watch<T extends KubeObject = KubeObject>(): AsyncIterable<WatchEvent<T>> {
    throw new Error('fake: no watch');
  }

  async createToken(namespace: string, serviceAccount: string, opts?: TokenRequestOptions): Promise<IssuedToken> {
    this.tokenRequests.push(`${namespace}/${serviceAccount}`);
    this.tokenAudiences.push([...(opts?.audiences ?? [])]);
    return { token: this.tokenFor(namespace, serviceAccount, opts), expirationTimestamp: '2099-01-01T00:00:00Z' };
  }

  /** Writes since the last call (and reset). */
  takeWrites(): string[] {
    return this.writes.splice(0);
  }
}

export function readyOf(obj: KubeObject | undefined): { status?: string; reason?: string; message?: string; observedGeneration?: number } | undefined {
  return (obj?.status as { conditions?: Array<{ type: string; status: string; reason: string; message: string; observedGeneration?: number }> } | undefined)?.conditions?.find((c) => c.type === 'Ready');
}
