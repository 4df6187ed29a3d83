// The Kubernetes simulator's API machinery, with no HTTP: registered resources, objects, one global
// resourceVersion counter (as etcd's revision), the event history that watches resume from, and the
// apiserver's write rules. The HTTP server (kube.ts) and the in-process fake client
// (kube-fake-client.ts) both sit on this, so they can't disagree.
//
// Faithful on purpose (the contract suite checks the same against a real apiserver):
// - 409 AlreadyExists on create, 409 Conflict on a stale resourceVersion (PUT, or a patch carrying one);
//   custom resources refuse PUT without a resourceVersion (422), built-ins allow it;
// - metadata.generation on custom resources: 1 on create, +1 on any change outside metadata/status, and
//   +1 when deletion is first requested (apiserver's markAsDeleting);
// - status subresource: the main endpoint ignores status (and drops it on create), /status ignores
//   everything but status;
// - finalizers: DELETE sets deletionTimestamp and keeps the object until the list is empty; no new
//   finalizers once deleting (422);
// - watches: resume from a resourceVersion, synthetic ADDED without one, DELETED/ADDED when an update
//   moves an object out of/into a label selector, ERROR 410 Expired for a compacted resourceVersion;
// - lists: label/field selectors, `limit` + `continue`, 410 Expired for a continue token older than
//   the compaction point;
// - server-side apply with field ownership (kube-ssa.ts); no-op writes don't bump resourceVersion.
// Simplified (documented): continued list pages show current objects rather than a snapshot; ownerReference
// garbage collection runs synchronously on deletion (background/foreground alike); namespace deletion
// deletes its content synchronously; strategic merge patch on built-ins behaves as a merge patch.
import {
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  sign as cryptoSign,
  verify as cryptoVerify,
  type KeyPairKeyObjectResult,
} from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { applyPatch as applyJsonPatch, type Operation } from 'rfc6902';
import type { ResourceRef } from '../../kube/resources.ts';
import { apiVersionOf, resourceId } from '../../kube/resources.ts';
import type { KubeObject, Status, WatchEvent } from '../../kube/objects.ts';
import { ApplyConflictError, ssaApply, trackUpdate } from './kube-ssa.ts';
import { matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError } from './kube-selectors.ts';

type Obj = Record<string, unknown>;

export interface RegisteredResource extends ResourceRef {
  statusSubresource: boolean;
  /** Custom resources: generation tracking, PUT needs a resourceVersion, DELETE returns the object. */
  custom: boolean;
  singular: string;
  shortNames: string[];
}

export class SimError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
  }
}

function statusError(code: number, reason: string, message: string, details?: Status['details']): SimError {
  return new SimError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...(details ? { details } : {}),
  });
}

const qualified = (r: ResourceRef): string => (r.group ? `${r.plural}.${r.group}` : r.plural);
const notFound = (r: ResourceRef, name: string): SimError =>
  statusError(404, 'NotFound', `${qualified(r)} "${name}" not found`, { name, group: r.group, kind: r.plural });
const conflict = (r: ResourceRef, name: string): SimError =>
  statusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(r)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group: r.group, kind: r.plural },
  );
const invalid = (r: ResourceRef, name: string, field: string, msg: string): SimError =>
  statusError(422, 'Invalid', `${r.kind} "${name}" is invalid: ${field}: ${msg}`, {
    name,
    group: r.group,
    kind: r.kind,
    causes: [{ reason: 'FieldValueInvalid', message: msg, field }],
  });

export interface HistoryEvent {
  rv: number;
  resource: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  obj: KubeObject;
  old?: KubeObject;
}

export interface WatchFilter {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface StoreWatcher {
  send(ev: WatchEvent): void;
}

interface ActiveWatch {
  resource: string;
  matches: (o: KubeObject) => boolean;
  namespace?: string;
  sink: StoreWatcher;
}

export interface WriteContext {
  fieldManager?: string;
  dryRun?: boolean;
}

export interface TokenClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  'kubernetes.io': { namespace: string; serviceaccount: { name: string; uid: string } };
}

const CORE: RegisteredResource[] = [
  {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    statusSubresource: true,
    custom: false,
    singular: 'namespace',
    shortNames: ['ns'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'secrets',
    kind: 'Secret',
    namespaced: true,
    statusSubresource: false,
    custom: false,
    singular: 'secret',
    shortNames: [],
  },
  {
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
    statusSubresource: false,
    custom: false,
    singular: 'configmap',
    shortNames: ['cm'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'serviceaccounts',
    kind: 'ServiceAccount',
    namespaced: true,
    statusSubresource: false,
    custom: false,
    singular: 'serviceaccount',
    shortNames: ['sa'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    namespaced: true,
    statusSubresource: false,
    custom: false,
    singular: 'event',
    shortNames: ['ev'],
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    namespaced: true,
    statusSubresource: false,
    custom: false,
    singular: 'event',
    shortNames: ['ev'],
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    namespaced: true,
    statusSubresource: false,
    custom: false,
    singular: 'lease',
    shortNames: [],
  },
  // Workloads: every apiserver serves apps/v1 (the rollout coordinator lists and patches them).
  ...(
    [
      ['deployments', 'Deployment', ['deploy']],
      ['statefulsets', 'StatefulSet', ['sts']],
      ['daemonsets', 'DaemonSet', ['ds']],
    ] as const
  ).map(([plural, kind, shortNames]) => ({
    group: 'apps',
    version: 'v1',
    plural,
    kind,
    namespaced: true,
    statusSubresource: true,
    custom: false,
    singular: kind.toLowerCase(),
    shortNames: [...shortNames],
  })),
];

/** vaultgate's and ESO's custom resources, registered by default. */
export const VAULTGATE_CRDS: Omit<RegisteredResource, 'custom'>[] = [
  {
    group: 'vaultgate.io',
    version: 'v1alpha1',
    plural: 'vaultpolicies',
    kind: 'VaultPolicy',
    namespaced: true,
    statusSubresource: true,
    singular: 'vaultpolicy',
    shortNames: ['vp'],
  },
  {
    group: 'vaultgate.io',
    version: 'v1alpha1',
    plural: 'vaultrolebindings',
    kind: 'VaultRoleBinding',
    namespaced: true,
    statusSubresource: true,
    singular: 'vaultrolebinding',
    shortNames: ['vrb'],
  },
  {
    group: 'vaultgate.io',
    version: 'v1alpha1',
    plural: 'vaultguardrails',
    kind: 'VaultGuardrail',
    namespaced: false,
    statusSubresource: true,
    singular: 'vaultguardrail',
    shortNames: ['vgr'],
  },
  {
    group: 'external-secrets.io',
    version: 'v1',
    plural: 'secretstores',
    kind: 'SecretStore',
    namespaced: true,
    statusSubresource: true,
    singular: 'secretstore',
    shortNames: ['ss'],
  },
  {
    group: 'external-secrets.io',
    version: 'v1',
    plural: 'clustersecretstores',
    kind: 'ClusterSecretStore',
    namespaced: false,
    statusSubresource: true,
    singular: 'clustersecretstore',
    shortNames: ['css'],
  },
  {
    group: 'external-secrets.io',
    version: 'v1',
    plural: 'externalsecrets',
    kind: 'ExternalSecret',
    namespaced: true,
    statusSubresource: true,
    singular: 'externalsecret',
    shortNames: ['es'],
  },
  {
    group: 'external-secrets.io',
    version: 'v1',
    plural: 'clusterexternalsecrets',
    kind: 'ClusterExternalSecret',
    namespaced: false,
    statusSubresource: true,
    singular: 'clusterexternalsecret',
    shortNames: ['ces'],
  },
  {
    group: 'external-secrets.io',
    version: 'v1alpha1',
    plural: 'pushsecrets',
    kind: 'PushSecret',
    namespaced: true,
    statusSubresource: true,
    singular: 'pushsecret',
    shortNames: ['ps'],
  },
];

export interface KubeStoreOptions {
  now?: () => number;
  /** Events kept for watch resumption before the oldest are compacted away. Default 10 000. */
  historyLimit?: number;
  /** Namespaces that exist from the start. Default ['default', 'kube-system']. */
  namespaces?: string[];
  /** Register VAULTGATE_CRDS. Default true. */
  registerCrds?: boolean;
  /**
   * Accept objects in namespaces that do not exist (the apiserver answers 404). For reconciler unit tests,
   * which put objects in `team-a` without a Namespace object; the namespaces cache stays what they put.
   */
  implicitNamespaces?: boolean;
}

export class KubeStore {
  private readonly resources = new Map<string, RegisteredResource>();
  /** resource id → key → object */
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private readonly history: HistoryEvent[] = [];
  private readonly watches = new Set<ActiveWatch>();
  private rv = 1000;
  /** Events at or below this RV are gone: watching from an older RV gets 410. */
  private compactedRv = 1000;
  private readonly now: () => number;
  private readonly historyLimit: number;
  private readonly implicitNamespaces: boolean;
  /** ServiceAccount token signing key: RS256 as the apiserver's --service-account-signing-key-file (never HS256). */
  private signingKey?: KeyPairKeyObjectResult;
  /** Made on first use: a 2048-bit RSA key takes up to a second of CPU on a busy machine, blocking the loop. */
  private get tokenKey(): KeyPairKeyObjectResult {
    return (this.signingKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }));
  }
  readonly issuer = 'https://kubernetes.default.svc.cluster.local';

  constructor(opts: KubeStoreOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.historyLimit = opts.historyLimit ?? 10_000;
    this.implicitNamespaces = opts.implicitNamespaces ?? false;
    for (const r of CORE) this.register(r);
    if (opts.registerCrds ?? true) for (const r of VAULTGATE_CRDS) this.register({ ...r, custom: true });
    for (const ns of opts.namespaces ?? ['default', 'kube-system'])
      this.create(this.resource('', 'v1', 'namespaces')!, undefined, { metadata: { name: ns } });
  }

  register(r: RegisteredResource): void {
    this.resources.set(resourceId(r), r);
    if (!this.objects.has(resourceId(r))) this.objects.set(resourceId(r), new Map());
  }

  resource(group: string, version: string, plural: string): RegisteredResource | undefined {
    return this.resources.get(resourceId({ group, version, plural, kind: '', namespaced: false }));
  }

  allResources(): RegisteredResource[] {
    return [...this.resources.values()];
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  /** Forget all history: any watch or continue token from an older resourceVersion now gets 410. */
  compact(): void {
    this.history.length = 0;
    this.compactedRv = this.rv;
  }

  // ---- reads ----

  get(r: ResourceRef, namespace: string | undefined, name: string): KubeObject {
    const obj = this.table(r).get(this.key(r, namespace, name));
    if (!obj) throw notFound(r, name);
    return structuredClone(obj);
  }

  list(
    r: ResourceRef,
    opts: WatchFilter & { limit?: number; continue?: string },
  ): { items: KubeObject[]; resourceVersion: string; continue?: string; remainingItemCount?: number } {
    const matches = this.matcher(r, opts);
    let listRv = this.rv;
    let after = '';
    if (opts.continue) {
      let token: { rv: number; after: string };
      try {
        token = JSON.parse(Buffer.from(opts.continue, 'base64url').toString()) as { rv: number; after: string };
      } catch {
        throw statusError(400, 'BadRequest', 'continue key is not valid');
      }
      if (token.rv < this.compactedRv) {
        throw statusError(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        );
      }
      listRv = token.rv;
      after = token.after;
    }
    const all = [...this.table(r).entries()]
      .filter(([k, o]) => k > after && (!opts.namespace || o.metadata.namespace === opts.namespace) && matches(o))
      .sort(([a], [b]) => (a < b ? -1 : 1));
    const limit = opts.limit && opts.limit > 0 ? opts.limit : all.length;
    const page = all.slice(0, limit);
    const more = all.length > limit;
    return {
      items: page.map(([, o]) => structuredClone(o)),
      resourceVersion: String(listRv),
      ...(more
        ? {
            continue: Buffer.from(JSON.stringify({ rv: listRv, after: page[page.length - 1]![0] })).toString(
              'base64url',
            ),
            remainingItemCount: all.length - limit,
          }
        : {}),
    };
  }

  // ---- writes ----

  create(r: RegisteredResource, namespace: string | undefined, body: Obj, ctx: WriteContext = {}): KubeObject {
    const obj = structuredClone(body) as KubeObject;
    obj.metadata ??= { name: '' };
    if (!obj.metadata.name && (obj.metadata as { generateName?: string }).generateName) {
      obj.metadata.name = `${(obj.metadata as { generateName?: string }).generateName}${randomBytes(3).toString('hex').slice(0, 5)}`;
    }
    const name = obj.metadata.name;
    if (!name) throw invalid(r, '', 'metadata.name', 'Required value: name or generateName is required');
    if (r.namespaced) {
      if (obj.metadata.namespace && namespace && obj.metadata.namespace !== namespace) {
        throw statusError(
          400,
          'BadRequest',
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      obj.metadata.namespace = namespace ?? obj.metadata.namespace;
      if (!obj.metadata.namespace)
        throw statusError(400, 'BadRequest', 'the server could not find the requested resource');
      this.checkNamespaceWritable(obj.metadata.namespace);
    } else delete obj.metadata.namespace;
    if (this.table(r).has(this.key(r, obj.metadata.namespace, name))) {
      throw statusError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, {
        name,
        group: r.group,
        kind: r.plural,
      });
    }
    obj.apiVersion = apiVersionOf(r);
    obj.kind = r.kind;
    if (r.statusSubresource && r.custom) delete obj.status;
    const meta = obj.metadata;
    meta.uid = randomUUID();
    meta.creationTimestamp = this.timestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (r.custom) meta.generation = 1;
    else delete meta.generation;
    if (r.plural === 'namespaces' && r.group === '') obj.status = { phase: 'Active' };
    if (!ctx.dryRun) trackUpdate(undefined, obj, ctx.fieldManager ?? 'unknown', this.ssaCtx(r, undefined));
    return ctx.dryRun ? obj : this.commit(r, 'ADDED', obj);
  }

  /** PUT (main resource or /status). */
  update(
    r: RegisteredResource,
    namespace: string | undefined,
    name: string,
    body: Obj,
    ctx: WriteContext & { subresource?: string } = {},
  ): KubeObject {
    const current = this.get(r, namespace, name);
    const incoming = structuredClone(body) as KubeObject;
    if (incoming.metadata?.name && incoming.metadata.name !== name) {
      throw statusError(
        400,
        'BadRequest',
        `the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    const rv = incoming.metadata?.resourceVersion;
    if (!rv && r.custom)
      throw invalid(r, name, 'metadata.resourceVersion', 'Invalid value: 0x0: must be specified for an update');
    if (rv && rv !== current.metadata.resourceVersion) throw conflict(r, name);
    return this.writeUpdate(r, current, incoming, ctx);
  }

  patch(
    r: RegisteredResource,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    contentType: string,
    ctx: WriteContext & { subresource?: string; force?: boolean } = {},
  ): KubeObject {
    const type = contentType.split(';')[0]!.trim();
    if (type === 'application/apply-patch+yaml') return this.apply(r, namespace, name, patch as Obj, ctx);
    const current = this.get(r, namespace, name);
    let patched: KubeObject;
    if (type === 'application/merge-patch+json' || (type === 'application/strategic-merge-patch+json' && !r.custom)) {
      if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
        throw statusError(400, 'BadRequest', 'patch body must be a JSON object');
      patched = mergePatch(structuredClone(current), patch) as KubeObject;
    } else if (type === 'application/json-patch+json') {
      if (!Array.isArray(patch)) throw statusError(400, 'BadRequest', 'json patch must be an array of operations');
      patched = structuredClone(current);
      const results = applyJsonPatch(patched, patch as Operation[]);
      const failed = results.find((e) => e !== null);
      if (failed) {
        if (failed.name === 'TestError')
          throw statusError(
            422,
            'Invalid',
            `the server rejected our request due to an error in our request: ${failed.message}`,
          );
        throw statusError(
          422,
          'Invalid',
          `the server rejected our request due to an error in our request: ${failed.message}`,
        );
      }
    } else {
      throw statusError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
      );
    }
    // A patch that carries metadata.resourceVersion is a precondition (optimistic concurrency).
    if (patched.metadata?.resourceVersion !== current.metadata.resourceVersion) throw conflict(r, name);
    return this.writeUpdate(r, current, patched, ctx);
  }

  delete(
    r: RegisteredResource,
    namespace: string | undefined,
    name: string,
    opts: { preconditions?: { uid?: string; resourceVersion?: string }; propagationPolicy?: string } = {},
  ): { obj: KubeObject; gone: boolean } {
    const current = this.get(r, namespace, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== current.metadata.uid) {
      throw statusError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${qualified(r)} "${name}": Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw statusError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${qualified(r)} "${name}": Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
      );
    }
    const isNamespace = r.group === '' && r.plural === 'namespaces';
    if ((current.metadata.finalizers?.length ?? 0) > 0 || isNamespace) {
      if (!current.metadata.deletionTimestamp) {
        const next = structuredClone(current);
        next.metadata.deletionTimestamp = this.timestamp();
        next.metadata.deletionGracePeriodSeconds = 0;
        if (next.metadata.generation !== undefined) next.metadata.generation++;
        if (isNamespace) next.status = { phase: 'Terminating' };
        const marked = this.commit(r, 'MODIFIED', next);
        if (isNamespace) this.terminateNamespace(name);
        const after = this.table(r).get(this.key(r, namespace, name));
        return after ? { obj: marked, gone: false } : { obj: marked, gone: true };
      }
      return { obj: current, gone: false };
    }
    const gone = this.remove(r, current);
    this.collectGarbage(current, opts.propagationPolicy);
    return { obj: gone, gone: true };
  }

  // ---- server-side apply ----

  private apply(
    r: RegisteredResource,
    namespace: string | undefined,
    name: string,
    body: Obj,
    ctx: WriteContext & { subresource?: string; force?: boolean },
  ): KubeObject {
    if (!ctx.fieldManager)
      throw statusError(422, 'Invalid', 'PATCH is invalid: fieldManager: Required value: is required for apply patch');
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw statusError(400, 'BadRequest', 'apply patch must be an object');
    const meta = (body.metadata ?? {}) as Obj;
    if (body.apiVersion !== apiVersionOf(r) || body.kind !== r.kind) {
      throw statusError(
        400,
        'BadRequest',
        `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersionOf(r)}) or kind ${String(body.kind)} is not ${r.kind}`,
      );
    }
    if (meta.name !== undefined && meta.name !== name)
      throw statusError(
        400,
        'BadRequest',
        `the name of the object (${JSON.stringify(meta.name)}) does not match the name on the URL (${name})`,
      );
    const existing = this.table(r).get(this.key(r, namespace, name));
    const ssaCtx = this.ssaCtx(r, ctx.subresource);
    try {
      if (!existing) {
        if (ctx.subresource) throw notFound(r, name);
        const created = ssaApply(
          undefined,
          { ...body, metadata: { ...meta, name, ...(r.namespaced ? { namespace } : {}) } },
          ctx.fieldManager,
          true,
          ssaCtx,
        );
        const managed = (created.metadata as Obj).managedFields;
        if (ctx.dryRun) return created as KubeObject;
        const obj = this.create(r, namespace, created, { fieldManager: ctx.fieldManager, dryRun: true });
        obj.metadata.managedFields = managed as KubeObject['metadata']['managedFields'];
        return this.commit(r, 'ADDED', obj);
      }
      if (typeof meta.resourceVersion === 'string' && meta.resourceVersion !== existing.metadata.resourceVersion)
        throw conflict(r, name);
      const merged = ssaApply(
        structuredClone(existing),
        body,
        ctx.fieldManager,
        ctx.force ?? false,
        ssaCtx,
      ) as KubeObject;
      return this.writeUpdate(r, structuredClone(existing), merged, { ...ctx, tracked: true });
    } catch (err) {
      if (err instanceof ApplyConflictError) {
        throw statusError(409, 'Conflict', err.message, {
          name,
          group: r.group,
          kind: r.plural,
          causes: err.conflicts.map((c) => ({
            reason: 'FieldManagerConflict',
            message: `conflict with "${c.manager}"`,
            field: c.field,
          })),
        });
      }
      throw err;
    }
  }

  // ---- the common update path ----

  private writeUpdate(
    r: RegisteredResource,
    current: KubeObject,
    incoming: KubeObject,
    ctx: WriteContext & { subresource?: string; tracked?: boolean },
  ): KubeObject {
    const name = current.metadata.name;
    let next: KubeObject;
    if (ctx.subresource === 'status') {
      next = structuredClone(current);
      if (incoming.status === undefined) delete next.status;
      else next.status = incoming.status;
      if (ctx.tracked) next.metadata.managedFields = incoming.metadata.managedFields;
    } else {
      next = structuredClone(incoming);
      next.apiVersion = current.apiVersion;
      next.kind = current.kind;
      const m = next.metadata;
      const c = current.metadata;
      m.name = c.name;
      if (c.namespace) m.namespace = c.namespace;
      m.uid = c.uid;
      m.creationTimestamp = c.creationTimestamp;
      m.resourceVersion = c.resourceVersion;
      if (c.generation !== undefined) m.generation = c.generation;
      else delete m.generation;
      if (c.deletionTimestamp) {
        m.deletionTimestamp = c.deletionTimestamp;
        m.deletionGracePeriodSeconds = c.deletionGracePeriodSeconds;
      } else {
        delete m.deletionTimestamp;
        delete m.deletionGracePeriodSeconds;
      }
      if (!ctx.tracked) m.managedFields = c.managedFields;
      if (r.statusSubresource) {
        if (current.status === undefined) delete next.status;
        else next.status = structuredClone(current.status);
      }
      if (c.deletionTimestamp) {
        const added = (m.finalizers ?? []).filter((f) => !(c.finalizers ?? []).includes(f));
        if (added.length)
          throw invalid(
            r,
            name,
            'metadata.finalizers',
            `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
          );
      }
    }
    if (!ctx.tracked) trackUpdate(current, next, ctx.fieldManager ?? 'unknown', this.ssaCtx(r, ctx.subresource));
    if (isDeepStrictEqual(next, current)) return current; // a no-op write changes nothing, not even the resourceVersion
    if (r.custom && !isDeepStrictEqual(specOf(next, r), specOf(current, r)))
      next.metadata.generation = (current.metadata.generation ?? 0) + 1;
    if (ctx.dryRun) return next;
    if (
      next.metadata.deletionTimestamp &&
      (next.metadata.finalizers?.length ?? 0) === 0 &&
      !(r.group === '' && r.plural === 'namespaces')
    ) {
      const gone = this.remove(r, next);
      this.collectGarbage(gone);
      return gone;
    }
    return this.commit(r, 'MODIFIED', next);
  }

  // ---- watches ----

  /**
   * Start a watch. Replays history after `resourceVersion` (or synthetic ADDED for everything without
   * one) before returning; then live events go to `sink` until the returned cancel() is called.
   * A compacted resourceVersion yields one ERROR 410 event and `ended: true`.
   */
  watch(
    r: ResourceRef,
    filter: WatchFilter & { resourceVersion?: string },
    sink: StoreWatcher,
  ): { cancel: () => void; ended: boolean } {
    const id = resourceId(r);
    const matches = this.matcher(r, filter);
    const inScope = (o: KubeObject): boolean => !filter.namespace || o.metadata.namespace === filter.namespace;
    const w: ActiveWatch = {
      resource: id,
      matches: (o) => inScope(o) && matches(o),
      namespace: filter.namespace,
      sink,
    };
    const fromRv =
      filter.resourceVersion && filter.resourceVersion !== '0' ? Number(filter.resourceVersion) : undefined;
    if (fromRv !== undefined && (!Number.isFinite(fromRv) || fromRv < this.compactedRv)) {
      sink.send({ type: 'ERROR', object: this.expired(filter.resourceVersion!) as unknown as KubeObject });
      return { cancel: () => undefined, ended: true };
    }
    if (fromRv === undefined) {
      const items = [...this.table(r).entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([, o]) => o)
        .filter(w.matches);
      for (const o of items) sink.send({ type: 'ADDED', object: structuredClone(o) });
    } else {
      for (const ev of this.history) if (ev.rv > fromRv && ev.resource === id) this.deliver(w, ev);
    }
    this.watches.add(w);
    return { cancel: () => this.watches.delete(w), ended: false };
  }

  /** A BOOKMARK with the current resourceVersion. */
  bookmark(r: ResourceRef): WatchEvent {
    return {
      type: 'BOOKMARK',
      object: { apiVersion: apiVersionOf(r), kind: r.kind, metadata: { name: '', resourceVersion: String(this.rv) } },
    };
  }

  private expired(rv: string): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `too old resource version: ${rv} (${this.compactedRv + 1})`,
      reason: 'Expired',
      code: 410,
    };
  }

  private deliver(w: ActiveWatch, ev: HistoryEvent): void {
    const now = w.matches(ev.obj);
    const before = ev.old ? w.matches(ev.old) : false;
    let type: WatchEvent['type'] | undefined;
    if (ev.type === 'ADDED') type = now ? 'ADDED' : undefined;
    else if (ev.type === 'DELETED') type = now || before ? 'DELETED' : undefined;
    else if (now && before) type = 'MODIFIED';
    else if (now) type = 'ADDED';
    else if (before) type = 'DELETED';
    if (type) w.sink.send({ type, object: structuredClone(ev.obj) });
  }

  // ---- tokens (TokenRequest / TokenReview) ----

  /** TokenRequest on a ServiceAccount: an RS256 JWT with the claims the apiserver puts in bound tokens. */
  issueToken(
    namespace: string,
    serviceAccount: string,
    spec: { audiences?: string[]; expirationSeconds?: number },
  ): { token: string; expirationTimestamp: string } {
    const sa = this.get(this.resource('', 'v1', 'serviceaccounts')!, namespace, serviceAccount);
    const exp = spec.expirationSeconds ?? 3600;
    if (exp < 600)
      throw statusError(
        422,
        'Invalid',
        `TokenRequest.authentication.k8s.io "${serviceAccount}" is invalid: spec.expirationSeconds: Invalid value: ${exp}: may not specify a duration less than 10 minutes`,
      );
    const iat = Math.floor(this.now() / 1000);
    const claims: TokenClaims = {
      iss: this.issuer,
      sub: `system:serviceaccount:${namespace}:${serviceAccount}`,
      aud: spec.audiences?.length ? spec.audiences : [this.issuer],
      exp: iat + exp,
      iat,
      nbf: iat,
      'kubernetes.io': { namespace, serviceaccount: { name: serviceAccount, uid: sa.metadata.uid! } },
    };
    const enc = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const unsigned = `${enc({ alg: 'RS256', kid: 'sim' })}.${enc(claims)}`;
    const sig = cryptoSign('sha256', Buffer.from(unsigned), this.tokenKey.privateKey).toString('base64url');
    return {
      token: `${unsigned}.${sig}`,
      expirationTimestamp: new Date((iat + exp) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
  }

  /** TokenReview: valid signature, not expired, audience intersects, ServiceAccount still the same. */
  reviewToken(token: string, audiences?: string[]): { authenticated: boolean; claims?: TokenClaims; error?: string } {
    const parts = token.split('.');
    if (parts.length !== 3) return { authenticated: false, error: 'invalid bearer token' };
    let alg: unknown;
    try {
      alg = (JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()) as { alg?: unknown }).alg;
    } catch {
      return { authenticated: false, error: 'invalid bearer token' };
    }
    if (
      alg !== 'RS256' ||
      !cryptoVerify(
        'sha256',
        Buffer.from(`${parts[0]}.${parts[1]}`),
        this.tokenKey.publicKey,
        Buffer.from(parts[2]!, 'base64url'),
      )
    ) {
      return { authenticated: false, error: 'invalid bearer token' };
    }
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as TokenClaims;
    if (claims.exp * 1000 <= this.now()) return { authenticated: false, error: 'token has expired' };
    if (audiences?.length && !claims.aud.some((a) => audiences.includes(a)))
      return { authenticated: false, error: 'token audiences do not match' };
    const ref = claims['kubernetes.io'];
    const sa = this.table(this.resource('', 'v1', 'serviceaccounts')!).get(
      `${ref.namespace}/${ref.serviceaccount.name}`,
    );
    if (!sa || sa.metadata.uid !== ref.serviceaccount.uid)
      return { authenticated: false, error: 'service account has been deleted' };
    return { authenticated: true, claims };
  }

  // ---- internals ----

  private table(r: ResourceRef): Map<string, KubeObject> {
    const t = this.objects.get(resourceId(r));
    if (!t) throw statusError(404, 'NotFound', 'the server could not find the requested resource');
    return t;
  }

  private key(r: ResourceRef, namespace: string | undefined, name: string): string {
    return r.namespaced ? `${namespace ?? ''}/${name}` : name;
  }

  private matcher(_r: ResourceRef, f: WatchFilter): (o: KubeObject) => boolean {
    try {
      const labels = parseLabelSelector(f.labelSelector);
      const fields = parseFieldSelector(f.fieldSelector);
      return (o) => matchesLabels(labels, o.metadata.labels) && fields(o);
    } catch (err) {
      if (err instanceof SelectorError) throw statusError(400, 'BadRequest', err.message);
      throw err;
    }
  }

  private ssaCtx(
    r: RegisteredResource,
    subresource: string | undefined,
  ): { apiVersion: string; now: string; subresource?: string; hasStatusSubresource: boolean } {
    return {
      apiVersion: apiVersionOf(r),
      now: this.timestamp(),
      subresource,
      hasStatusSubresource: r.statusSubresource,
    };
  }

  private timestamp(): string {
    return new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  private checkNamespaceWritable(ns: string): void {
    const nsObj = this.table(this.resource('', 'v1', 'namespaces')!).get(ns);
    if (!nsObj && this.implicitNamespaces) return;
    if (!nsObj) throw statusError(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
    if (nsObj.metadata.deletionTimestamp) {
      throw statusError(
        403,
        'Forbidden',
        `unable to create new content in namespace ${ns} because it is being terminated`,
      );
    }
  }

  private commit(r: ResourceRef, type: 'ADDED' | 'MODIFIED', obj: KubeObject): KubeObject {
    const key = this.key(r, obj.metadata.namespace, obj.metadata.name);
    const old = this.table(r).get(key);
    obj.metadata.resourceVersion = String(++this.rv);
    this.table(r).set(key, obj);
    this.record({ rv: this.rv, resource: resourceId(r), type, obj: structuredClone(obj), old });
    return structuredClone(obj);
  }

  private remove(r: ResourceRef, obj: KubeObject): KubeObject {
    const key = this.key(r, obj.metadata.namespace, obj.metadata.name);
    const old = this.table(r).get(key);
    this.table(r).delete(key);
    const gone = structuredClone(obj);
    gone.metadata.resourceVersion = String(++this.rv);
    this.record({ rv: this.rv, resource: resourceId(r), type: 'DELETED', obj: structuredClone(gone), old });
    if (obj.metadata.namespace) this.finishNamespaceIfEmpty(obj.metadata.namespace);
    return gone;
  }

  private record(ev: HistoryEvent): void {
    this.history.push(ev);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRv = dropped[dropped.length - 1]!.rv;
    }
    for (const w of this.watches) if (w.resource === ev.resource) this.deliver(w, ev);
  }

  /** Synchronous ownerReference GC: dependents whose owners are all gone are deleted (or orphaned). */
  private collectGarbage(owner: KubeObject, propagation?: string): void {
    const uid = owner.metadata.uid;
    if (!uid) return;
    for (const r of this.resources.values()) {
      for (const dep of [...this.table(r).values()]) {
        const refs = dep.metadata.ownerReferences ?? [];
        if (!refs.some((ref) => ref.uid === uid)) continue;
        if (propagation === 'Orphan') {
          const next = structuredClone(dep);
          next.metadata.ownerReferences = refs.filter((ref) => ref.uid !== uid);
          if (!next.metadata.ownerReferences.length) delete next.metadata.ownerReferences;
          this.commit(r, 'MODIFIED', next);
          continue;
        }
        const alive = refs.some((ref) => ref.uid !== uid && this.ownerExists(ref.uid));
        if (alive) continue;
        try {
          this.delete(r, dep.metadata.namespace, dep.metadata.name);
        } catch {
          // already removed by an earlier cascade
        }
      }
    }
  }

  private ownerExists(uid: string): boolean {
    for (const t of this.objects.values()) for (const o of t.values()) if (o.metadata.uid === uid) return true;
    return false;
  }

  private terminateNamespace(ns: string): void {
    for (const r of this.resources.values()) {
      if (!r.namespaced) continue;
      for (const o of [...this.table(r).values()]) if (o.metadata.namespace === ns) this.delete(r, ns, o.metadata.name);
    }
    this.finishNamespaceIfEmpty(ns);
  }

  private finishNamespaceIfEmpty(ns: string): void {
    const nsRes = this.resource('', 'v1', 'namespaces')!;
    const nsObj = this.table(nsRes).get(ns);
    if (!nsObj?.metadata.deletionTimestamp) return;
    for (const r of this.resources.values()) {
      if (!r.namespaced) continue;
      for (const o of this.table(r).values()) if (o.metadata.namespace === ns) return;
    }
    this.remove(nsRes, nsObj);
  }
}

/** Fields that count for metadata.generation: everything but metadata (and status with a status subresource). */
function specOf(o: KubeObject, r: RegisteredResource): Obj {
  const { metadata: _m, status, ...rest } = o;
  return r.statusSubresource ? rest : { ...rest, status };
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return structuredClone(patch);
  const out: Obj =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Obj) } : {};
  for (const [k, v] of Object.entries(patch as Obj)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
