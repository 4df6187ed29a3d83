// The one interface reconcilers and the runtime use to talk to the apiserver. Small on purpose: an
// in-memory fake (test/sim/kube-fake-client.ts) implements it over the same store as the HTTP simulator.
// The HTTP implementation is kube/http-kube-client.ts.
import type { KubeObject, WatchEvent } from './objects.ts';
import type { ResourceRef } from './resources.ts';

/** Field manager for every write vaultgate makes (project-wide decision). */
export const FIELD_MANAGER = 'vaultgate';

export interface ListOptions {
  /** Omit (or '') to list across all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the server returns `continue` when more remain. */
  limit?: number;
  continue?: string;
  /** '0' lets the server answer from its cache; unset = most recent (quorum read). */
  resourceVersion?: string;
}

export interface ListResult<T extends KubeObject = KubeObject> {
  items: T[];
  /** The list's resourceVersion: a watch started from it misses nothing. */
  resourceVersion: string;
  /** Present when another page remains. */
  continue?: string;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this version; unset = "now" (the server sends synthetic ADDED for existing objects). */
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** Server-side timeout: the apiserver ends the watch cleanly after this many seconds. */
  timeoutSeconds?: number;
  /** Aborting ends the stream (the iterator finishes without error). */
  signal?: AbortSignal;
}

export type PatchType = 'merge' | 'json' | 'strategic';

export interface WriteOptions {
  /** Write `/status` (status changes only; spec changes are ignored by the server there). */
  subresource?: 'status';
  /** `?dryRun=All`. */
  dryRun?: boolean;
  /** Per-call timeout; the client's default otherwise. */
  timeoutMs?: number;
}

export interface ApplyOptions extends WriteOptions {
  /** Take ownership of fields another manager owns instead of failing with 409. Default false. */
  force?: boolean;
  /** Default FIELD_MANAGER. */
  fieldManager?: string;
}

export interface DeleteOptions {
  /** Delete only if the object is still at this version/uid (else 409). */
  preconditions?: { resourceVersion?: string; uid?: string };
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  timeoutMs?: number;
}

export interface TokenRequestOptions {
  audiences?: string[];
  expirationSeconds?: number;
  /** Bind the token to an object (e.g. a Pod or Secret): it dies with it. */
  boundObjectRef?: { apiVersion: string; kind: string; name: string; uid?: string };
  timeoutMs?: number;
}

/** The token itself is secret: never log it, put it in an event, a status or an error. */
export interface IssuedToken {
  token: string;
  /** RFC 3339. */
  expirationTimestamp: string;
}

/**
 * Typed access to the Kubernetes API. Every method rejects with a `KubeApiError` ({ code, reason, message };
 * see errors.ts: isNotFound / isConflict / isGone) and never with a raw response. Objects are plain JSON.
 * Writes use field manager `vaultgate` unless told otherwise.
 */
export interface KubeClient {
  /** GET one object; `undefined` when it does not exist (404). Omit namespace for cluster-scoped kinds. */
  get<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace?: string,
    opts?: { timeoutMs?: number },
  ): Promise<T | undefined>;

  /** One page of a LIST (loop on `continue` for all, or use listAll). */
  list<T extends KubeObject = KubeObject>(res: ResourceRef, opts?: ListOptions): Promise<ListResult<T>>;

  /** POST. 409 AlreadyExists if the name is taken. `obj.metadata.namespace` selects the namespace. */
  create<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T, opts?: WriteOptions): Promise<T>;

  /**
   * PUT the whole object. With `metadata.resourceVersion` set this is an optimistic-concurrency update:
   * 409 Conflict if the object changed since that version.
   */
  replace<T extends KubeObject = KubeObject>(res: ResourceRef, obj: T, opts?: WriteOptions): Promise<T>;

  /** PATCH with the given patch type (`merge` = RFC 7386, `json` = RFC 6902 ops array). */
  patch<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType,
    opts?: WriteOptions,
  ): Promise<T>;

  /**
   * Server-side apply (`application/apply-patch+yaml`, fieldManager `vaultgate`). `obj` is the fully
   * specified intent: apiVersion, kind, metadata.name(+namespace) and only the fields vaultgate owns.
   * Fields another manager owns → 409 Conflict unless `force`.
   */
  apply<T extends KubeObject = KubeObject>(res: ResourceRef, obj: KubeObject, opts?: ApplyOptions): Promise<T>;

  /**
   * DELETE. Resolves to the object as left by the server when finalizers keep it (deletionTimestamp set),
   * or `undefined` when it is gone (or was already absent: NotFound is not an error here).
   */
  delete<T extends KubeObject = KubeObject>(
    res: ResourceRef,
    name: string,
    namespace?: string,
    opts?: DeleteOptions,
  ): Promise<T | undefined>;

  /** WATCH as an async stream of events. Ends when the server closes the stream or `signal` aborts. */
  watch<T extends KubeObject = KubeObject>(res: ResourceRef, opts?: WatchOptions): AsyncIterable<WatchEvent<T>>;

  /** TokenRequest: `POST .../serviceaccounts/<name>/token`. */
  createToken(namespace: string, serviceAccount: string, opts?: TokenRequestOptions): Promise<IssuedToken>;
}

/** LIST every page. */
export async function listAll<T extends KubeObject = KubeObject>(
  client: KubeClient,
  res: ResourceRef,
  opts: Omit<ListOptions, 'continue'> = {},
): Promise<ListResult<T>> {
  const items: T[] = [];
  let cont: string | undefined;
  let resourceVersion = '';
  do {
    const page: ListResult<T> = await client.list<T>(res, { ...opts, continue: cont });
    items.push(...page.items);
    resourceVersion = page.resourceVersion;
    cont = page.continue || undefined;
  } while (cont);
  return { items, resourceVersion };
}
