// An in-process KubeClient over the simulator's KubeStore: no HTTP, same rules (409s, generation,
// finalizers, status subresource, SSA ownership, watches). For reconciler unit tests:
//
//   const kube = new FakeKubeClient();            // namespaces default + kube-system exist
//   await kube.create(VAULT_POLICIES, {...});
//   kube.failWith((call) => call.verb === 'apply' ? new KubeApiError(500, 'InternalError', 'boom') : undefined);
//   kube.calls  // every call made, for assertions (no bodies kept: they may hold secrets)
import { errorFromResponse, KubeApiError } from '../../kube/errors.ts';
import {
  FIELD_MANAGER,
  type ApplyOptions,
  type DeleteOptions,
  type IssuedToken,
  type KubeClient,
  type ListOptions,
  type ListResult,
  type PatchType,
  type TokenRequestOptions,
  type WatchOptions,
  type WriteOptions,
} from '../../kube/kube-client.ts';
import type { KubeObject, WatchEvent } from '../../kube/objects.ts';
import type { ResourceRef } from '../../kube/resources.ts';
import { KubeStore, SimError, type KubeStoreOptions, type RegisteredResource } from './kube-store.ts';

export interface FakeCall {
  verb: 'get' | 'list' | 'create' | 'replace' | 'patch' | 'apply' | 'delete' | 'watch' | 'createToken';
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

const CONTENT: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export class FakeKubeClient implements KubeClient {
  readonly store: KubeStore;
  readonly calls: FakeCall[] = [];
  private failer?: (call: FakeCall) => Error | undefined;

  constructor(opts: KubeStoreOptions & { store?: KubeStore } = {}) {
    this.store = opts.store ?? new KubeStore(opts);
  }

  /** Make calls fail: return an error to throw for a call, or undefined to let it through. */
  failWith(fn: ((call: FakeCall) => Error | undefined) | undefined): void {
    this.failer = fn;
  }

  async get<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    return this.run({ verb: 'get', resource: res.plural, namespace, name }, () => {
      try {
        return this.store.get(this.reg(res), namespace, name) as T;
      } catch (err) {
        if (err instanceof SimError && err.status.code === 404) return undefined;
        throw err;
      }
    });
  }

  async list<T extends KubeObject = KubeObject>(res: ResourceRef, opts: ListOptions = {}): Promise<ListResult<T>> {
    return this.run({ verb: 'list', resource: res.plural, namespace: opts.namespace }, () => {
      const page = this.store.list(this.reg(res), { ...opts, namespace: opts.namespace || undefined });
      return { items: page.items as T[], resourceVersion: page.resourceVersion, continue: page.continue };
    });
  }

  async create<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.run(
      { verb: 'create', resource: res.plural, namespace: obj.metadata.namespace, name: obj.metadata.name },
      () =>
        this.store.create(this.reg(res), res.namespaced ? obj.metadata.namespace : undefined, obj, {
          fieldManager: FIELD_MANAGER,
          dryRun: opts.dryRun,
        }) as T,
    );
  }

  async replace<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.run(
      {
        verb: 'replace',
        resource: res.plural,
        namespace: obj.metadata.namespace,
        name: obj.metadata.name,
        subresource: opts.subresource,
      },
      () =>
        this.store.update(this.reg(res), obj.metadata.namespace, obj.metadata.name, obj, {
          fieldManager: FIELD_MANAGER,
          dryRun: opts.dryRun,
          subresource: opts.subresource,
        }) as T,
    );
  }

  async patch<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType,
    opts: WriteOptions = {},
  ): Promise<T> {
    return this.run(
      { verb: 'patch', resource: res.plural, namespace, name, subresource: opts.subresource },
      () =>
        this.store.patch(this.reg(res), namespace, name, structuredClone(patch), CONTENT[type], {
          fieldManager: FIELD_MANAGER,
          dryRun: opts.dryRun,
          subresource: opts.subresource,
        }) as T,
    );
  }

  async apply<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    obj: KubeObject,
    opts: ApplyOptions = {},
  ): Promise<T> {
    return this.run(
      {
        verb: 'apply',
        resource: res.plural,
        namespace: obj.metadata.namespace,
        name: obj.metadata.name,
        subresource: opts.subresource,
      },
      () =>
        this.store.patch(
          this.reg(res),
          obj.metadata.namespace,
          obj.metadata.name,
          structuredClone(obj),
          'application/apply-patch+yaml',
          {
            fieldManager: opts.fieldManager ?? FIELD_MANAGER,
            force: opts.force,
            dryRun: opts.dryRun,
            subresource: opts.subresource,
          },
        ) as T,
    );
  }

  async delete<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace?: string,
    opts: DeleteOptions = {},
  ): Promise<T | undefined> {
    return this.run({ verb: 'delete', resource: res.plural, namespace, name }, () => {
      try {
        const { obj, gone } = this.store.delete(this.reg(res), namespace, name, opts);
        return gone ? undefined : (obj as T);
      } catch (err) {
        if (err instanceof SimError && err.status.code === 404) return undefined;
        throw err;
      }
    });
  }

  async *watch<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    opts: WatchOptions = {},
  ): AsyncIterable<WatchEvent<T>> {
    await this.run({ verb: 'watch', resource: res.plural, namespace: opts.namespace }, () => undefined);
    const buffer: WatchEvent<T>[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const handle = this.store.watch(
      this.reg(res),
      { ...opts, namespace: opts.namespace || undefined },
      {
        send: (ev) => {
          buffer.push(ev as WatchEvent<T>);
          wake?.();
        },
      },
    );
    const onAbort = (): void => {
      ended = true;
      wake?.();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // As the apiserver (and the HTTP simulator, kube.ts): the watch ends cleanly after timeoutSeconds, with a
    // BOOKMARK 2 s before when asked for bookmarks.
    const timers: NodeJS.Timeout[] = [];
    if (opts.timeoutSeconds) {
      timers.push(setTimeout(onAbort, opts.timeoutSeconds * 1000));
      if (opts.allowWatchBookmarks && opts.timeoutSeconds > 2) {
        timers.push(
          setTimeout(
            () => {
              buffer.push(this.store.bookmark(this.reg(res)) as WatchEvent<T>);
              wake?.();
            },
            (opts.timeoutSeconds - 2) * 1000,
          ),
        );
      }
    }
    // The signal may have aborted during the await above, before the listener existed: 'abort' fires once.
    if (opts.signal?.aborted) ended = true;
    try {
      if (handle.ended) {
        yield* buffer;
        return;
      }
      while (!ended) {
        const ev = buffer.shift();
        if (ev) yield ev;
        else await new Promise<void>((r) => (wake = r));
      }
    } finally {
      for (const t of timers) clearTimeout(t);
      handle.cancel();
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  async createToken(namespace: string, serviceAccount: string, opts: TokenRequestOptions = {}): Promise<IssuedToken> {
    return this.run(
      { verb: 'createToken', resource: 'serviceaccounts', namespace, name: serviceAccount, subresource: 'token' },
      () => this.store.issueToken(namespace, serviceAccount, opts),
    );
  }

  private reg(res: ResourceRef): RegisteredResource {
    const r = this.store.resource(res.group, res.version, res.plural);
    if (!r) throw new KubeApiError(404, 'NotFound', 'the server could not find the requested resource');
    return r;
  }

  private async run<R>(call: FakeCall, fn: () => R): Promise<R> {
    this.calls.push(call);
    await Promise.resolve(); // stay asynchronous, as a real client is
    const injected = this.failer?.(call);
    if (injected) throw injected;
    try {
      return fn();
    } catch (err) {
      if (err instanceof SimError) throw errorFromResponse(err.status.code, err.status);
      throw err;
    }
  }
}
