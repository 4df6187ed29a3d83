// Shared shapes of the Vault simulator's engines: one operation in, one response (or SimError) out.

export type SimOp = 'read' | 'list' | 'create' | 'update' | 'delete' | 'patch';

/** A Vault HTTP answer: 204 when body is undefined. */
export interface SimResponse {
  status: number;
  body?: unknown;
}

/** A Vault error answer: `{"errors": [...]}` with the given status. */
export class SimError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
  ) {
    super(errors[0] ?? `status ${status}`);
  }
}

export const noContent = (): SimResponse => ({ status: 204 });

/** Vault's envelope around `data` (request_id, lease fields, warnings…). */
export function dataResponse(data: unknown, extra: Record<string, unknown> = {}): SimResponse {
  return {
    status: 200,
    body: {
      request_id: crypto.randomUUID(),
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data,
      wrap_info: null,
      warnings: null,
      auth: null,
      ...extra,
    },
  };
}

/** 404 with an empty errors list: Vault's answer for a missing key, policy or role. */
export const notFound = (): SimError => new SimError(404, []);
export const badRequest = (msg: string): SimError => new SimError(400, [msg]);
/** Vault's ACL denial text (hashicorp/go-multierror formatting of logical.ErrPermissionDenied). */
/** An ACL refusal for a valid token (OpenBao wraps it in a multierror). */
export const permissionDenied = (): SimError => new SimError(403, ['1 error occurred:\n\t* permission denied\n\n']);
/** No token, an unknown token, or an unauthenticated call to a route that does not exist: OpenBao's plain text. */
export const badToken = (): SimError => new SimError(403, ['permission denied']);
export const noHandler = (path: string): SimError =>
  new SimError(404, [`no handler for route "${path}". route entry not found.`]);

/** Vault TTL fields accept integer seconds, numeric strings and Go durations. */
export function ttlSeconds(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.floor(v);
  if (typeof v === 'string') {
    if (/^\d+$/.test(v)) return Number(v);
    let total = 0;
    const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/g;
    let consumed = 0;
    for (const m of v.matchAll(re)) {
      const n = Number(m[1]);
      const unit = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 'ns'] ?? 1;
      total += n * unit;
      consumed += m[0].length;
    }
    if (consumed === v.length && consumed > 0) return Math.floor(total);
  }
  throw badRequest(`error parsing ${field}: invalid duration ${JSON.stringify(v)}`);
}

/** A list field given as a JSON array or a comma-separated string (Vault's TypeCommaStringSlice). */
export function stringList(v: unknown): string[] {
  if (Array.isArray(v))
    return v
      .filter((x): x is string => typeof x === 'string')
      .flatMap((x) => x.split(','))
      .map((x) => x.trim())
      .filter(Boolean);
  if (typeof v === 'string')
    return v
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  return [];
}

/** Children directly under `prefix` among `keys`: names, and `dir/` for deeper keys; sorted, unique. */
export function listChildren(keys: Iterable<string>, prefix: string): string[] {
  const p = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
  const out = new Set<string>();
  for (const k of keys) {
    if (!k.startsWith(p) || k === p) continue;
    const rest = k.slice(p.length);
    const slash = rest.indexOf('/');
    out.add(slash === -1 ? rest : rest.slice(0, slash + 1));
  }
  return [...out].sort();
}

/** Glob match as Vault's strutil.GlobbedStringsMatch: `*` only as a leading and/or trailing wildcard. */
export function globMatch(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  const lead = pattern.startsWith('*');
  const trail = pattern.endsWith('*') && pattern.length > 1;
  const core = pattern.slice(lead ? 1 : 0, trail ? -1 : undefined);
  if (lead && trail) return value.includes(core);
  if (lead) return value.endsWith(core);
  if (trail) return value.startsWith(core);
  return value === pattern;
}
