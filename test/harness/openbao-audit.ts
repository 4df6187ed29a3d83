// Reading an OpenBao file audit device (one JSON object per line, a "request" and a "response" entry per
// call; tokens and accessors HMAC'd, auth metadata in clear). What the server itself saw is the ground
// truth for "who logged in" and "how many requests of which kind", instead of counters in our own code.
import { existsSync, readFileSync } from 'node:fs';

export interface AuditEntry {
  type: 'request' | 'response';
  time: string;
  error?: string;
  auth?: { accessor?: string; display_name?: string; policies?: string[]; metadata?: Record<string, string> };
  request: { id: string; operation: string; path: string; mount_type?: string };
  response?: { auth?: { accessor?: string; metadata?: Record<string, string>; policies?: string[] } };
}

/** Every complete entry of the log (a line being written is skipped). */
export function readAudit(path: string): AuditEntry[] {
  if (!existsSync(path)) return [];
  const out: AuditEntry[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const e = JSON.parse(line) as AuditEntry;
      if ((e.type === 'request' || e.type === 'response') && e.request?.path !== undefined) out.push(e);
    } catch {
      // the last line may be half-written
    }
  }
  return out;
}

export interface KubernetesLogin {
  ok: boolean;
  /** The role asked for (from the response's auth metadata; absent on a refused login). */
  role?: string;
  namespace?: string;
  serviceAccount?: string;
  /** The uid OpenBao took from the TokenReview (proof the apiserver vouched for the token). */
  uid?: string;
  /** OpenBao's error on a refused login. */
  error?: string;
}

/** kubernetes-auth logins on `mount`, successful or not, in order. */
export function kubernetesLogins(entries: readonly AuditEntry[], mount = 'kubernetes'): KubernetesLogin[] {
  return entries
    .filter((e) => e.type === 'response' && e.request.path === `auth/${mount}/login`)
    .map((e) => {
      const md = e.response?.auth?.metadata;
      if (!md || e.error) return { ok: false, ...(e.error ? { error: e.error } : {}) };
      return {
        ok: true,
        ...(md.role ? { role: md.role } : {}),
        ...(md.service_account_namespace ? { namespace: md.service_account_namespace } : {}),
        ...(md.service_account_name ? { serviceAccount: md.service_account_name } : {}),
        ...(md.service_account_uid ? { uid: md.service_account_uid } : {}),
      };
    });
}

/**
 * The kind of a request, for counting: `login`, `kv-read` (secret data), `kv-write`, `token` (lookup,
 * renew, revoke of the caller's own token), `policy-read|write|delete|list`, `role-read|write|...`,
 * `sys-other`, `other`.
 */
export function requestKind(e: AuditEntry): string {
  const { path, operation } = e.request;
  if (/^auth\/[^/]+\/login$/.test(path)) return 'login';
  if (path.startsWith('auth/token/')) return 'token';
  if (path.startsWith('sys/policies/acl')) return `policy-${operation}`;
  if (/^auth\/[^/]+\/role(\/|$)/.test(path)) return `role-${operation}`;
  if (path.startsWith('sys/')) return 'sys-other';
  if (e.request.mount_type === 'kv')
    return operation === 'read' || operation === 'list' ? `kv-${operation}` : 'kv-write';
  return 'other';
}

/** Requests (not responses) by kind. */
export function countByKind(entries: readonly AuditEntry[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries) {
    if (e.type !== 'request') continue;
    const k = requestKind(e);
    out[k] = (out[k] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}
