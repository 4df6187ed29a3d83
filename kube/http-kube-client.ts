// KubeClient over the apiserver's REST API (see kube-transport.ts for why raw HTTP with client-node's
// KubeConfig). Every write names field manager `vaultgate`. Content types are set explicitly for each
// patch kind: client-node's generated CustomObjectsApi sends the first type it accepts, json-patch, so a
// merge body sent without one is refused.
import type { KubeConfig } from '@kubernetes/client-node';
import { isNotFound, KubeApiError } from './errors.ts';
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
} from './kube-client.ts';
import { KubeTransport, type KubeRequest, type KubeTransportOptions } from './kube-transport.ts';
import type { KubeObject, WatchEvent } from './objects.ts';
import { apiVersionOf, resourcePath, SERVICEACCOUNTS, type ResourceRef } from './resources.ts';

const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};
export const APPLY_CONTENT_TYPE = 'application/apply-patch+yaml';

function nsOf(res: ResourceRef, obj: KubeObject): string | undefined {
  if (!res.namespaced) return undefined;
  const ns = obj.metadata.namespace;
  if (!ns)
    throw new KubeApiError(400, 'BadRequest', `${res.plural} "${obj.metadata.name}": metadata.namespace is required`);
  return ns;
}

export class HttpKubeClient implements KubeClient {
  readonly transport: KubeTransport;

  constructor(kc: KubeConfig, opts: KubeTransportOptions = {}) {
    this.transport = new KubeTransport(kc, opts);
  }

  async get<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace?: string,
    opts: { timeoutMs?: number } = {},
  ): Promise<T | undefined> {
    try {
      return (await this.transport.request({
        method: 'GET',
        path: resourcePath(res, namespace, name),
        timeoutMs: opts.timeoutMs,
      })) as T;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list<T extends KubeObject = KubeObject>(res: ResourceRef, opts: ListOptions = {}): Promise<ListResult<T>> {
    const body = (await this.transport.request({
      method: 'GET',
      path: resourcePath(res, opts.namespace),
      query: {
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit,
        continue: opts.continue,
        resourceVersion: opts.resourceVersion,
      },
    })) as { items?: T[]; metadata?: { resourceVersion?: string; continue?: string } } | undefined;
    // A list's items carry no apiVersion/kind on a real apiserver: put them back so objects look alike.
    const items = (body?.items ?? []).map((o) => ({ apiVersion: apiVersionOf(res), kind: res.kind, ...o }));
    return {
      items,
      resourceVersion: body?.metadata?.resourceVersion ?? '',
      continue: body?.metadata?.continue || undefined,
    };
  }

  async create<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    return (await this.transport.request({
      method: 'POST',
      path: resourcePath(res, nsOf(res, obj)),
      body: withTypeMeta(res, obj),
      query: writeQuery(opts),
      timeoutMs: opts.timeoutMs,
    })) as T;
  }

  async replace<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    return (await this.transport.request({
      method: 'PUT',
      path: resourcePath(res, nsOf(res, obj), obj.metadata.name, opts.subresource),
      body: withTypeMeta(res, obj),
      query: writeQuery(opts),
      timeoutMs: opts.timeoutMs,
    })) as T;
  }

  async patch<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType,
    opts: WriteOptions = {},
  ): Promise<T> {
    const path = resourcePath(res, namespace, name, opts.subresource);
    return this.sendPatch<T>(path, patch, PATCH_CONTENT_TYPE[type], writeQuery(opts), opts.timeoutMs);
  }

  async apply<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    obj: KubeObject,
    opts: ApplyOptions = {},
  ): Promise<T> {
    const path = resourcePath(res, nsOf(res, obj), obj.metadata.name, opts.subresource);
    // JSON is valid YAML, so the body is sent as JSON under the apply-patch+yaml content type.
    return this.sendPatch<T>(path, withTypeMeta(res, obj), APPLY_CONTENT_TYPE, applyQuery(opts), opts.timeoutMs);
  }

  /** One PATCH of an object: a patch of `contentType`, or for server-side apply the object itself. */
  private async sendPatch<T>(
    path: string,
    body: unknown,
    contentType: string,
    query: KubeRequest['query'],
    timeoutMs: number | undefined,
  ): Promise<T> {
    return (await this.transport.request({ method: 'PATCH', path, body, contentType, query, timeoutMs })) as T;
  }

  async delete<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace?: string,
    opts: DeleteOptions = {},
  ): Promise<T | undefined> {
    try {
      const body = (await this.transport.request({
        method: 'DELETE',
        path: resourcePath(res, namespace, name),
        timeoutMs: opts.timeoutMs,
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          preconditions: opts.preconditions,
          propagationPolicy: opts.propagationPolicy,
        },
      })) as KubeObject | { kind: 'Status' } | undefined;
      if (!body || body.kind === 'Status') return undefined;
      const meta = (body as KubeObject).metadata;
      return meta?.deletionTimestamp && (meta.finalizers?.length ?? 0) > 0 ? (body as T) : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async *watch<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    opts: WatchOptions = {},
  ): AsyncIterable<WatchEvent<T>> {
    const lines = this.transport.lines({
      method: 'GET',
      path: resourcePath(res, opts.namespace),
      signal: opts.signal,
      query: {
        watch: 'true',
        resourceVersion: opts.resourceVersion,
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        allowWatchBookmarks: opts.allowWatchBookmarks ? 'true' : undefined,
        timeoutSeconds: opts.timeoutSeconds,
      },
    });
    for await (const line of lines) {
      const ev = line as Partial<WatchEvent<T>>;
      if (typeof ev.type !== 'string' || typeof ev.object !== 'object' || ev.object === null) continue;
      yield ev as WatchEvent<T>;
    }
  }

  async createToken(namespace: string, serviceAccount: string, opts: TokenRequestOptions = {}): Promise<IssuedToken> {
    const body = (await this.transport.request({
      method: 'POST',
      path: resourcePath(SERVICEACCOUNTS, namespace, serviceAccount, 'token'),
      timeoutMs: opts.timeoutMs,
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          audiences: opts.audiences ?? [],
          expirationSeconds: opts.expirationSeconds,
          boundObjectRef: opts.boundObjectRef,
        },
      },
    })) as { status?: { token?: string; expirationTimestamp?: string } } | undefined;
    const token = body?.status?.token;
    if (!token)
      throw new KubeApiError(500, 'InternalError', `TokenRequest for ${namespace}/${serviceAccount} returned no token`);
    return { token, expirationTimestamp: body.status?.expirationTimestamp ?? '' };
  }

  /** Close pooled connections. */
  close(): void {
    this.transport.close();
  }
}

function withTypeMeta(res: ResourceRef, obj: KubeObject): KubeObject {
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(res), kind: obj.kind ?? res.kind };
}

function writeQuery(opts: WriteOptions): Record<string, string | undefined> {
  return { fieldManager: FIELD_MANAGER, dryRun: opts.dryRun ? 'All' : undefined };
}

function applyQuery(opts: ApplyOptions): Record<string, string | undefined> {
  return {
    fieldManager: opts.fieldManager ?? FIELD_MANAGER,
    force: opts.force ? 'true' : undefined,
    dryRun: opts.dryRun ? 'All' : undefined,
  };
}
