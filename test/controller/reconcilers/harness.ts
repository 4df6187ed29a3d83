// In-memory Kubernetes for reconciler unit tests: the simulator's KubeStore (the rules the contract suite
// holds to a real apiserver: 409s, generation, finalizers, status subresource, server-side apply with
// field managers, conflicts, force and removal of fields a manager stops applying, ownerReference GC)
// as the in-process FakeKubeClient, plus what reconciler tests need around it: runtime Caches the
// ReconcileContext reads, kept in step with the store by a watch (an informer that is always in sync),
// a log of the controller's writes, injectable 409s on status writes, captured Events and log lines.
// Unlike an apiserver: objects may live in namespaces nobody created, and a TokenRequest answers
// `tokenFor` (set it to null for the store's signed JWTs). test/contract/kube-fake.test.ts runs this fake
// through the contract suite the real apiserver passes.
import { Writable } from 'node:stream';
import { Cache, type Store } from '../../../kube/cache.ts';
import { KubeApiError } from '../../../kube/errors.ts';
import type { EventInput, EventRecorder } from '../../../kube/events.ts';
import type {
  ApplyOptions,
  DeleteOptions,
  IssuedToken,
  PatchType,
  TokenRequestOptions,
  WriteOptions,
} from '../../../kube/kube-client.ts';
import { objectKey, type KubeObject } from '../../../kube/objects.ts';
import type { ReconcileContext, Reconciler, Result } from '../../../kube/reconciler.ts';
import { resourceId, type ResourceRef } from '../../../kube/resources.ts';
import { createLogger } from '../../../observability/log.ts';
import { FakeKubeClient } from '../../sim/kube-fake-client.ts';
import { KubeStore } from '../../sim/kube-store.ts';

export interface RecordedEvent extends EventInput {
  object: string;
}

/** The field manager of objects a test puts, as a user's kubectl would (never the controller's). */
const USER = 'kubectl-test';

const split = (key: string): { namespace?: string; name: string } => {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
};

export class FakeKube extends FakeKubeClient {
  readonly caches = new Map<string, Cache>();
  readonly writes: string[] = [];
  readonly events: RecordedEvent[] = [];
  readonly logLines: string[] = [];
  /** Status writes to fail with 409 before succeeding. */
  statusConflicts = 0;
  /** The token a TokenRequest returns; null: the store issues a signed JWT (404 for a missing ServiceAccount). */
  tokenFor: ((ns: string, sa: string, opts?: TokenRequestOptions) => string) | null = (ns, sa) => `token-${ns}-${sa}`;
  tokenRequests: string[] = [];
  /** The audiences of each TokenRequest, in order ([] = none asked: the apiserver's own). */
  tokenAudiences: string[][] = [];

  constructor() {
    super({ store: new KubeStore({ namespaces: [], implicitNamespaces: true }) });
  }

  /** The cache of a resource: filled from the store, then kept in step with it by a synchronous watch. */
  cacheOf(res: ResourceRef): Cache {
    const id = resourceId(res);
    let c = this.caches.get(id);
    if (c) return c;
    const cache = (c = new Cache());
    this.caches.set(id, cache);
    const reg = this.store.resource(res.group, res.version, res.plural);
    if (!reg) throw new Error(`fake: ${id} is not registered`);
    this.store.watch(
      reg,
      {},
      {
        send: (ev) => {
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED') cache.upsert(ev.object);
          else if (ev.type === 'DELETED') cache.remove(objectKey(ev.object));
        },
      },
    );
    return cache;
  }

  /** Put an object as if a user created or updated it (not a controller write); `status` goes through /status. */
  put<T extends KubeObject>(res: ResourceRef, obj: T): T {
    const reg = this.store.resource(res.group, res.version, res.plural);
    if (!reg) throw new Error(`fake: ${resourceId(res)} is not registered`);
    this.cacheOf(res);
    const ns = res.namespaced ? obj.metadata.namespace : undefined;
    const cur = this.getObj(res, objectKey(obj));
    const body = structuredClone({ ...obj, apiVersion: undefined, kind: undefined }) as KubeObject;
    delete body.metadata.uid;
    delete body.metadata.generation;
    let stored = cur
      ? this.store.update(
          reg,
          ns,
          obj.metadata.name,
          { ...body, metadata: { ...body.metadata, resourceVersion: cur.metadata.resourceVersion } },
          { fieldManager: USER },
        )
      : this.store.create(reg, ns, body, { fieldManager: USER });
    if (obj.status !== undefined && reg.statusSubresource) {
      stored = this.store.update(
        reg,
        ns,
        obj.metadata.name,
        { ...stored, status: structuredClone(obj.status) },
        { fieldManager: USER, subresource: 'status' },
      );
    }
    return structuredClone(stored) as T;
  }

  getObj<T extends KubeObject = KubeObject>(res: ResourceRef, key: string): T | undefined {
    const { namespace, name } = split(key);
    try {
      return this.store.get(res, res.namespaced ? namespace : undefined, name) as T;
    } catch {
      return undefined;
    }
  }

  /** Delete as a user would: with finalizers only a deletionTimestamp is set; dependents are collected. */
  remove(res: ResourceRef, key: string): void {
    const reg = this.store.resource(res.group, res.version, res.plural)!;
    const { namespace, name } = split(key);
    if (!this.getObj(res, key)) return;
    this.store.delete(reg, res.namespaced ? namespace : undefined, name);
  }

  context(opts: { controller?: string } = {}): ReconcileContext {
    const log = createLogger({
      level: 'debug',
      destination: new Writable({
        write: (chunk: Buffer, _e, cb) => {
          this.logLines.push(chunk.toString());
          cb();
        },
      }),
    });
    const events: EventRecorder = {
      record: (obj, ev) => {
        this.events.push({ ...ev, object: objectKey(obj) });
      },
    };
    return {
      controller: opts.controller ?? 'test',
      client: this,
      cache: <T extends KubeObject>(res: ResourceRef) => this.cacheOf(res) as unknown as Store<T>,
      events,
      log,
      signal: new AbortController().signal,
      retries: 0,
    };
  }

  async reconcile(r: Reconciler, key: string): Promise<Result> {
    return r(key, this.context());
  }

  override async create<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T, opts?: WriteOptions): Promise<T> {
    const out = await super.create<T>(res, obj, opts);
    this.writes.push(`create ${res.plural} ${objectKey(out)}`);
    return out;
  }

  override async replace<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T, opts?: WriteOptions): Promise<T> {
    const out = await super.replace<T>(res, obj, opts);
    this.writes.push(`replace ${res.plural} ${objectKey(out)}`);
    return out;
  }

  override async patch<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType,
    opts?: WriteOptions,
  ): Promise<T> {
    const out = await super.patch<T>(res, name, namespace, patch, type, opts);
    this.writes.push(`patch ${res.plural} ${namespace ? `${namespace}/${name}` : name}`);
    return out;
  }

  /** Logged as `status` (the /status subresource), `create` (an apply that created the object) or `apply`. */
  override async apply<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    obj: KubeObject,
    opts: ApplyOptions = {},
  ): Promise<T> {
    if (opts.subresource === 'status' && this.statusConflicts > 0) {
      this.statusConflicts--;
      throw new KubeApiError(409, 'Conflict', 'Apply failed with 1 conflict');
    }
    const existed = opts.subresource === 'status' || this.getObj(res, objectKey(obj)) !== undefined;
    const out = await super.apply<T>(res, obj, opts);
    this.writes.push(
      `${opts.subresource === 'status' ? 'status' : existed ? 'apply' : 'create'} ${res.plural} ${objectKey(out)}`,
    );
    return out;
  }

  override async delete<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace?: string,
    opts?: DeleteOptions,
  ): Promise<T | undefined> {
    const key = namespace ? `${namespace}/${name}` : name;
    const existed = this.getObj(res, key) !== undefined;
    const out = await super.delete<T>(res, name, namespace, opts);
    if (existed) this.writes.push(`delete ${res.plural} ${key}`);
    return out;
  }

  override async createToken(
    namespace: string,
    serviceAccount: string,
    opts?: TokenRequestOptions,
  ): Promise<IssuedToken> {
    this.tokenRequests.push(`${namespace}/${serviceAccount}`);
    this.tokenAudiences.push([...(opts?.audiences ?? [])]);
    if (!this.tokenFor) return super.createToken(namespace, serviceAccount, opts);
    return { token: this.tokenFor(namespace, serviceAccount, opts), expirationTimestamp: '2099-01-01T00:00:00Z' };
  }

  /** Writes since the last call (and reset). */
  takeWrites(): string[] {
    return this.writes.splice(0);
  }
}

export function readyOf(
  obj: KubeObject | undefined,
): { status?: string; reason?: string; message?: string; observedGeneration?: number } | undefined {
  return (
    obj?.status as
      | {
          conditions?: Array<{
            type: string;
            status: string;
            reason: string;
            message: string;
            observedGeneration?: number;
          }>;
        }
      | undefined
  )?.conditions?.find((c) => c.type === 'Ready');
}
