// Reads of Vault KV for ExternalSecrets, coalesced: ExternalSecrets that read the same path with the
// same store identity within a window share one request (in flight: single flight; finished: a cached
// answer no older than the window the caller accepts). With 1,000 ExternalSecrets over 100 paths this
// is 100 reads per refresh cycle, not 1,000 (refresh storms: external-secrets/external-secrets#4231).
// Cache keys include the session's identity, so a store never sees an answer fetched with another
// identity's permissions. Failures are never cached. Values stay in memory only for the window.
import { createKvApi, resolveKvPath } from '../../vault/kv.ts';
import type { KvApi, KvMountRef } from '../../vault/types.ts';
import type { SecretSource } from '../../eso/provider-data.ts';
import type { StoreConnection } from './store-connector.ts';

interface Entry {
  at: number;
  settled: boolean;
  value: Promise<unknown>;
  /** The force-sync request it was fetched for (see source()). */
  tag?: string;
}

/** How long a read fetched for one force-sync request serves the others of that request. */
export const FORCE_SYNC_SHARE_MS = 60_000;

export interface KvReaderOptions {
  /** Entries kept; least recently used beyond this are dropped. Default 20 000. */
  maxEntries?: number;
  now?: () => number;
}

export interface KvReaderStats {
  requests: number;
  coalesced: number;
}

export class CoalescingKvReader {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly now: () => number;
  readonly stats: KvReaderStats = { requests: 0, coalesced: 0 };

  constructor(opts: KvReaderOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 20_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * A SecretSource over `conn` that accepts cached answers up to `maxAgeMs` old (0 = only in-flight
   * sharing). `tag` names a force-sync request (the annotation's value): answers fetched for that same
   * request are shared up to FORCE_SYNC_SHARE_MS, since they were fetched after it was made. So one
   * `kubectl annotate --all` over 1,000 ExternalSecrets costs one read per identity and path, not one per
   * ExternalSecret, and every read is still newer than the request.
   */
  source(conn: StoreConnection, maxAgeMs: number, tag?: string): SecretSource {
    const apis = new Map<string, KvApi>();
    const api = (ref: KvMountRef): KvApi => {
      const id = `${ref.mount}|${ref.version}`;
      let a = apis.get(id);
      if (!a) apis.set(id, (a = createKvApi(conn.session, ref)));
      return a;
    };
    const resolve = (key: string): { ref: KvMountRef; key: string } =>
      resolveKvPath(conn.kv.storePath, conn.kv.version, key);
    const id = conn.session.key;
    return {
      kvVersion: conn.kv.version,
      read: async (key, version) => {
        const r = resolve(key);
        // ESO sends the version as written ("" = none); KV v1 ignores it.
        const v = await this.once(`${id}|read|${r.ref.mount}|${r.key}|${version ?? ''}`, maxAgeMs, tag, () =>
          api(r.ref).read(r.key, version ? { version } : {}),
        );
        return (v as Awaited<ReturnType<KvApi['read']>>)?.data;
      },
      readMetadata: async (key) => {
        const r = resolve(key);
        const m = (await this.once(`${id}|meta|${r.ref.mount}|${r.key}`, maxAgeMs, tag, () =>
          api(r.ref).readMetadata(r.key),
        )) as Awaited<ReturnType<KvApi['readMetadata']>>;
        // custom_metadata only, as ESO v0.16.2's readSecretMetadata (ESO v2.5+ adds created_time,
        // current_version and delete_version_after; README, ESO section).
        return m ? { ...m.customMetadata } : undefined;
      },
      list: async (path) => {
        const r = conn.kv.storePath
          ? { ref: { mount: conn.kv.storePath.replace(/^\/+|\/+$/g, ''), version: conn.kv.version }, key: path }
          : resolve(path);
        const names = (await this.once(`${id}|list|${r.ref.mount}|${r.key}`, maxAgeMs, tag, () =>
          api(r.ref).list(r.key),
        )) as string[];
        return names.length ? names : undefined;
      },
    };
  }

  /** Drop everything (e.g. on shutdown, so secret values do not linger). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private once(
    key: string,
    maxAgeMs: number,
    tag: string | undefined,
    fetch: () => Promise<unknown>,
  ): Promise<unknown> {
    const now = this.now();
    const hit = this.entries.get(key);
    const sameRequest = tag !== undefined && hit?.tag === tag && now - hit.at <= FORCE_SYNC_SHARE_MS;
    if (hit && (!hit.settled || now - hit.at <= maxAgeMs || sameRequest)) {
      this.stats.coalesced++;
      this.entries.delete(key); // LRU order
      this.entries.set(key, hit);
      return hit.value;
    }
    this.stats.requests++;
    const entry: Entry = { at: now, settled: false, value: Promise.resolve(), ...(tag !== undefined ? { tag } : {}) };
    entry.value = fetch().then(
      (v) => {
        entry.settled = true;
        entry.at = this.now();
        return v;
      },
      (err: unknown) => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
        throw err;
      },
    );
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return entry.value;
  }
}
