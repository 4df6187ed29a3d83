// KV secrets engines for the Vault simulator, following the KV v1 and v2 HTTP API
// (developer.hashicorp.com/vault/api-docs/secret/kv/kv-v1 and kv-v2): status codes, body shapes,
// check-and-set, versions with soft delete / undelete / destroy, custom_metadata, max_versions pruning.
import {
  SimError,
  badRequest,
  dataResponse,
  listChildren,
  noContent,
  noHandler,
  notFound,
  type SimOp,
  type SimResponse,
} from './vault-engine.ts';

export interface KvEngine {
  readonly version: 1 | 2;
  handle(op: SimOp, rest: string, body: Record<string, unknown>, query: URLSearchParams, fullPath: string): SimResponse;
  /** Vault's ExistenceCheck: decides whether a write needs `create` or `update`. */
  exists(rest: string): boolean;
}

export class KvV1Engine implements KvEngine {
  readonly version = 1 as const;
  private readonly store = new Map<string, Record<string, unknown>>();

  exists(rest: string): boolean {
    return this.store.has(rest);
  }

  handle(op: SimOp, rest: string, body: Record<string, unknown>): SimResponse {
    switch (op) {
      case 'read': {
        const data = this.store.get(rest);
        if (!data) throw notFound();
        // KV v1 reports the mount's default lease (32 days) as a refresh hint.
        return dataResponse(structuredClone(data), { lease_duration: 2764800 });
      }
      case 'list': {
        const keys = listChildren(this.store.keys(), rest);
        if (keys.length === 0) throw notFound();
        return dataResponse({ keys });
      }
      case 'create':
      case 'update':
        if (rest === '') throw badRequest('missing path');
        this.store.set(rest, structuredClone(body));
        return noContent();
      case 'delete':
        this.store.delete(rest);
        return noContent();
      default:
        throw new SimError(405, ['unsupported operation']);
    }
  }
}

interface Version {
  data: Record<string, unknown> | null;
  createdTime: string;
  deletionTime: string;
  destroyed: boolean;
}

interface Entry {
  versions: Map<number, Version>;
  currentVersion: number;
  /** 0 until max_versions pruning removes a version (as Vault reports it). */
  oldestVersion: number;
  maxVersions: number;
  casRequired: boolean;
  customMetadata: Record<string, string> | null;
  createdTime: string;
  updatedTime: string;
}

const DEFAULT_MAX_VERSIONS = 10;

export class KvV2Engine implements KvEngine {
  readonly version = 2 as const;
  private readonly store = new Map<string, Entry>();
  private config = { maxVersions: 0, casRequired: false };

  constructor(private readonly now: () => number = Date.now) {}

  exists(rest: string): boolean {
    const [, key] = split(rest);
    return key !== undefined && this.store.has(key);
  }

  handle(
    op: SimOp,
    rest: string,
    body: Record<string, unknown>,
    query: URLSearchParams,
    fullPath: string,
  ): SimResponse {
    const [section, key = ''] = split(rest);
    switch (section) {
      case 'data':
        return this.data(op, key, body, query);
      case 'metadata':
        return this.metadata(op, key, body);
      case 'delete':
        return this.versionsOp(op, key, body, (v) => {
          if (!v.destroyed && !v.deletionTime) v.deletionTime = this.iso();
        });
      case 'undelete':
        return this.versionsOp(op, key, body, (v) => {
          if (!v.destroyed) v.deletionTime = '';
        });
      case 'destroy':
        return this.versionsOp(op, key, body, (v) => {
          v.destroyed = true;
          v.data = null;
        });
      case 'config':
        if (op === 'read')
          return dataResponse({
            cas_required: this.config.casRequired,
            delete_version_after: '0s',
            max_versions: this.config.maxVersions,
          });
        if (op === 'create' || op === 'update') {
          if (typeof body.max_versions === 'number') this.config.maxVersions = body.max_versions;
          if (typeof body.cas_required === 'boolean') this.config.casRequired = body.cas_required;
          return noContent();
        }
        throw new SimError(405, ['unsupported operation']);
      default:
        throw noHandler(fullPath);
    }
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private data(op: SimOp, key: string, body: Record<string, unknown>, query: URLSearchParams): SimResponse {
    if (key === '') throw noHandler('data/');
    const entry = this.store.get(key);
    switch (op) {
      case 'read': {
        if (!entry || entry.currentVersion === 0) throw notFound();
        const wanted = Number(query.get('version') ?? 0) || entry.currentVersion;
        const v = entry.versions.get(wanted);
        if (!v) throw notFound();
        const metadata = versionMeta(wanted, v, entry);
        // Deleted or destroyed: Vault answers 404 but still returns the version metadata and no errors.
        if (v.data === null || v.deletionTime)
          return { status: 404, body: { request_id: crypto.randomUUID(), data: { data: null, metadata } } };
        return dataResponse({ data: structuredClone(v.data), metadata });
      }
      case 'create':
      case 'update': {
        const data = body.data;
        if (data === undefined || data === null || typeof data !== 'object' || Array.isArray(data))
          throw badRequest('no data provided');
        const options = (body.options ?? {}) as { cas?: unknown };
        const cas =
          typeof options.cas === 'number'
            ? options.cas
            : typeof options.cas === 'string' && options.cas !== ''
              ? Number(options.cas)
              : undefined;
        const current = entry?.currentVersion ?? 0;
        if (cas === undefined && (entry?.casRequired || this.config.casRequired))
          throw badRequest('check-and-set parameter required for this call');
        if (cas !== undefined && cas !== current)
          throw badRequest('check-and-set parameter did not match the current version');
        const e = entry ?? this.newEntry(key);
        const version = current + 1;
        const createdTime = this.iso();
        e.versions.set(version, {
          data: structuredClone(data as Record<string, unknown>),
          createdTime,
          deletionTime: '',
          destroyed: false,
        });
        e.currentVersion = version;
        e.updatedTime = createdTime;
        const max = e.maxVersions || this.config.maxVersions || DEFAULT_MAX_VERSIONS;
        for (const n of [...e.versions.keys()]) {
          if (n > version - max) continue;
          e.versions.delete(n);
          e.oldestVersion = Math.min(...e.versions.keys());
        }
        return dataResponse({
          created_time: createdTime,
          custom_metadata: e.customMetadata,
          deletion_time: '',
          destroyed: false,
          version,
        });
      }
      case 'delete': {
        const v = entry?.versions.get(entry.currentVersion);
        if (v && !v.destroyed && !v.deletionTime) v.deletionTime = this.iso();
        return noContent();
      }
      case 'patch':
        throw new SimError(405, ['unsupported operation']);
      default:
        throw new SimError(405, ['unsupported operation']);
    }
  }

  private newEntry(key: string): Entry {
    const t = this.iso();
    const e: Entry = {
      versions: new Map(),
      currentVersion: 0,
      oldestVersion: 0,
      maxVersions: 0,
      casRequired: false,
      customMetadata: null,
      createdTime: t,
      updatedTime: t,
    };
    this.store.set(key, e);
    return e;
  }

  private metadata(op: SimOp, key: string, body: Record<string, unknown>): SimResponse {
    if (op === 'list') {
      const keys = listChildren(this.store.keys(), key);
      if (keys.length === 0) throw notFound();
      return dataResponse({ keys });
    }
    if (key === '') throw noHandler('metadata/');
    const entry = this.store.get(key);
    switch (op) {
      case 'read': {
        if (!entry) throw notFound();
        const versions: Record<string, unknown> = {};
        for (const [n, v] of entry.versions)
          versions[String(n)] = { created_time: v.createdTime, deletion_time: v.deletionTime, destroyed: v.destroyed };
        return dataResponse({
          cas_required: entry.casRequired,
          created_time: entry.createdTime,
          current_version: entry.currentVersion,
          custom_metadata: entry.customMetadata,
          delete_version_after: '0s',
          max_versions: entry.maxVersions,
          oldest_version: entry.oldestVersion,
          updated_time: entry.updatedTime,
          versions,
        });
      }
      case 'create':
      case 'update': {
        const cm = body.custom_metadata;
        if (cm !== undefined && cm !== null) {
          if (typeof cm !== 'object' || Array.isArray(cm) || Object.values(cm).some((v) => typeof v !== 'string')) {
            throw badRequest('custom_metadata must be a map of strings');
          }
          const pairs = Object.entries(cm as Record<string, string>);
          if (pairs.length > 64) throw badRequest('custom_metadata may contain at most 64 keys');
          for (const [k, v] of pairs) {
            if (k.length > 128)
              throw badRequest(`custom_metadata key ${JSON.stringify(k.slice(0, 20))}… is longer than 128 bytes`);
            if (v.length > 512)
              throw badRequest(`custom_metadata value of ${JSON.stringify(k)} is longer than 512 bytes`);
          }
        }
        const e = entry ?? this.newEntry(key);
        if (cm !== undefined) e.customMetadata = cm === null ? null : { ...(cm as Record<string, string>) };
        if (typeof body.max_versions === 'number') e.maxVersions = body.max_versions;
        if (typeof body.cas_required === 'boolean') e.casRequired = body.cas_required;
        e.updatedTime = this.iso();
        return noContent();
      }
      case 'delete':
        this.store.delete(key);
        return noContent();
      default:
        throw new SimError(405, ['unsupported operation']);
    }
  }

  private versionsOp(op: SimOp, key: string, body: Record<string, unknown>, apply: (v: Version) => void): SimResponse {
    if (op !== 'create' && op !== 'update') throw new SimError(405, ['unsupported operation']);
    const versions = Array.isArray(body.versions) ? body.versions.map(Number).filter((n) => Number.isInteger(n)) : [];
    if (versions.length === 0) throw badRequest('no version number provided');
    const entry = this.store.get(key);
    if (!entry) return noContent();
    for (const n of versions) {
      const v = entry.versions.get(n);
      if (v) apply(v);
    }
    return noContent();
  }
}

function split(rest: string): [string, string | undefined] {
  const slash = rest.indexOf('/');
  return slash === -1 ? [rest, undefined] : [rest.slice(0, slash), rest.slice(slash + 1)];
}

function versionMeta(n: number, v: Version, e: Entry): Record<string, unknown> {
  return {
    created_time: v.createdTime,
    custom_metadata: e.customMetadata,
    deletion_time: v.deletionTime,
    destroyed: v.destroyed,
    version: n,
  };
}
