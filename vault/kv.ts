// KV v1 and v2 over any VaultRequester. Keys are relative to the mount; `/data/` and `/metadata/` are
// inserted here for v2, as ESO's Vault provider does, so callers never build KV v2 paths by hand (where `/data/`
// goes confuses users: external-secrets/external-secrets#1333).
import { VaultError } from './errors.ts';
import { listKeys, readOrAbsent } from './sys.ts';
import type { KvApi, KvMetadata, KvMountRef, KvSecret, KvVersion, KvVersionMetadata, VaultRequester } from './types.ts';

/**
 * Split an ESO-style reference into mount + key, mirroring ESO's vault provider `buildPath`:
 * - with a store `path` (the mount): a key that already starts with `<mount>/` has it removed, and for
 *   v2 a following `data/` too (`secret/data/app/db` and `app/db` both mean key `app/db`);
 * - without a store path, v2: a key that already contains `/data/` is a full API path and is used as it is
 *   (ESO checks `strings.Contains(path, "/data/")`), so what precedes the first `/data/` is the mount,
 *   one segment or several (`team/kv/data/app/db` reads `app/db` on mount `team/kv`);
 * - otherwise the key's first segment is the mount (v2 inserts `data/` after it; v1 uses the key as is).
 * Known ESO quirk kept for compatibility: a secret whose own name begins with the mount name is cut too.
 */
export function resolveKvPath(
  storePath: string | undefined,
  version: KvVersion,
  key: string,
): { ref: KvMountRef; key: string } {
  let k = key.replace(/^\/+/, '');
  let mount = storePath?.replace(/^\/+|\/+$/g, '') ?? '';
  if (mount) {
    if (k.startsWith(`${mount}/`)) {
      k = k.slice(mount.length + 1);
      if (version === 2 && k.startsWith('data/')) k = k.slice('data/'.length);
    }
  } else {
    const data = version === 2 ? k.indexOf('/data/') : -1;
    const slash = data > 0 ? data : k.indexOf('/');
    if (slash <= 0)
      throw new VaultError('invalid', `kv: key ${JSON.stringify(key)} names no mount and the store has no path`);
    mount = k.slice(0, slash);
    k = k.slice(slash + (data > 0 ? '/data/'.length : 1));
  }
  return { ref: { mount, version }, key: k };
}

export function createKvApi(vault: VaultRequester, ref: KvMountRef): KvApi {
  const mount = ref.mount.replace(/^\/+|\/+$/g, '');
  const v2 = ref.version === 2;
  const clean = (key: string): string => key.replace(/^\/+/, '');
  const dataPath = (key: string): string => (v2 ? `${mount}/data/${clean(key)}` : `${mount}/${clean(key)}`);
  const metadataPath = (key: string): string => `${mount}/metadata/${clean(key)}`;
  const requireV2 = (operation: string): void => {
    if (!v2)
      throw new VaultError(
        'invalid',
        `${operation}: KV v1 mount ${JSON.stringify(mount)} has no metadata`,
        undefined,
        operation,
      );
  };

  return {
    ref: { mount, version: ref.version },

    async read(key, opts = {}) {
      if (!v2) {
        const res = await readOrAbsent(
          vault.request<{ data?: Record<string, unknown> }>({
            operation: 'kv.read',
            method: 'GET',
            path: dataPath(key),
          }),
        );
        return res?.data ? { data: res.data } : undefined;
      }
      const res = await readOrAbsent(
        vault.request<{ data?: { data?: Record<string, unknown> | null; metadata?: Record<string, unknown> } }>({
          operation: 'kv.read',
          method: 'GET',
          path: dataPath(key),
          ...(opts.version !== undefined ? { query: { version: opts.version } } : {}),
        }),
      );
      // A deleted or destroyed version answers 404 (or data: null with its metadata): absent either way.
      if (!res?.data?.data) return undefined;
      const secret: KvSecret = { data: res.data.data };
      if (res.data.metadata) secret.metadata = versionMetadata(res.data.metadata);
      return secret;
    },

    async write(key, data, opts = {}) {
      const sensitive = Object.values(data).filter((v): v is string => typeof v === 'string');
      if (!v2) {
        if (opts.cas !== undefined)
          throw new VaultError(
            'invalid',
            'kv.write: check-and-set is not supported with Vault KV version v1',
            undefined,
            'kv.write',
          );
        await vault.request({
          operation: 'kv.write',
          method: 'POST',
          path: dataPath(key),
          body: { ...data },
          sensitive,
        });
        return {};
      }
      const res = await vault.request<{ data?: { version?: unknown } }>({
        operation: 'kv.write',
        method: 'POST',
        path: dataPath(key),
        sensitive,
        body: { data, ...(opts.cas !== undefined ? { options: { cas: opts.cas } } : {}) },
      });
      const version = res?.data?.version;
      return typeof version === 'number' ? { version } : {};
    },

    async list(prefix) {
      const p = clean(prefix).replace(/\/+$/, '');
      const base = v2 ? `${mount}/metadata` : mount;
      return listKeys(vault.request({ operation: 'kv.list', method: 'LIST', path: p ? `${base}/${p}` : base }));
    },

    async readMetadata(key) {
      requireV2('kv.read_metadata');
      const res = await readOrAbsent(
        vault.request<{ data?: Record<string, unknown> }>({
          operation: 'kv.read_metadata',
          method: 'GET',
          path: metadataPath(key),
        }),
      );
      return res?.data ? metadata(res.data) : undefined;
    },

    async writeMetadata(key, meta) {
      requireV2('kv.write_metadata');
      await vault.request({
        operation: 'kv.write_metadata',
        method: 'POST',
        path: metadataPath(key),
        body: {
          ...(meta.customMetadata !== undefined ? { custom_metadata: meta.customMetadata } : {}),
          ...(meta.maxVersions !== undefined ? { max_versions: meta.maxVersions } : {}),
          ...(meta.casRequired !== undefined ? { cas_required: meta.casRequired } : {}),
        },
      });
    },

    async delete(key) {
      await readOrAbsent(vault.request({ operation: 'kv.delete', method: 'DELETE', path: dataPath(key) }));
    },

    async deleteAll(key) {
      await readOrAbsent(
        vault.request({ operation: 'kv.delete_all', method: 'DELETE', path: v2 ? metadataPath(key) : dataPath(key) }),
      );
    },
  };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/** created/deletion time and destroyed, as both a version's metadata and metadata's versions map carry them. */
function versionTimes(m: Record<string, unknown>): { createdTime: string; deletionTime: string; destroyed: boolean } {
  return { createdTime: str(m.created_time), deletionTime: str(m.deletion_time), destroyed: m.destroyed === true };
}

function versionMetadata(m: Record<string, unknown>): KvVersionMetadata {
  return { version: num(m.version), ...versionTimes(m), customMetadata: stringMap(m.custom_metadata) };
}

function metadata(d: Record<string, unknown>): KvMetadata {
  const versions: KvMetadata['versions'] = {};
  if (d.versions && typeof d.versions === 'object') {
    for (const [v, raw] of Object.entries(d.versions as Record<string, Record<string, unknown>>)) {
      versions[v] = versionTimes(raw);
    }
  }
  return {
    currentVersion: num(d.current_version),
    oldestVersion: num(d.oldest_version),
    maxVersions: num(d.max_versions),
    casRequired: d.cas_required === true,
    createdTime: str(d.created_time),
    updatedTime: str(d.updated_time),
    customMetadata: stringMap(d.custom_metadata),
    versions,
  };
}
