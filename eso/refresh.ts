// When an ExternalSecret fetches from Vault again: ESO's shouldRefresh (refreshPolicy CreatedOnce /
// Periodic / OnChange, refreshInterval "0s" = once, spec/label/annotation changes, the force-sync
// annotation) plus vaultgate's deterministic jitter: each object's interval is stretched or shrunk by
// up to ±10% from a hash of its uid, so 1,000 objects created together do not refresh in the same
// second (ESO declined jitter: external-secrets/external-secrets#4231).
import { createHash } from 'node:crypto';
import { parseGoDuration } from '../golang/index.ts';
import { nextAllowedAt, periodicRefreshAllowed, type SyncWindows } from './sync-windows.ts';
import { NEVER, ReconcileError } from '../kube/reconcile-error.ts';

export const DEFAULT_REFRESH_INTERVAL_MS = 3_600_000;
export const JITTER_FRACTION = 0.1;

export interface RefreshInput {
  uid: string;
  generation: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  refreshInterval?: string;
  refreshPolicy?: 'CreatedOnce' | 'Periodic' | 'OnChange';
  /** status.syncedResourceVersion */
  syncedResourceVersion?: string;
  /** status.refreshTime (RFC 3339) */
  refreshTime?: string | null;
  /** spec.syncWindows: when periodic refreshes may run (eso/sync-windows.ts). */
  syncWindows?: SyncWindows;
}

/**
 * ESO's getResourceVersion (pkg/controllers/util GetResourceVersion): generation plus a hash of labels
 * and annotations, so metadata edits (the force-sync annotation in particular) count as a change while
 * status writes do not. The hash is ESO's to the byte (sha3-224 of Go's `%+v` of
 * struct{annotations, labels map[string]string}, map keys sorted as fmt sorts them), so an ExternalSecret
 * ESO synced is not synced again when vaultgate takes it over.
 */
export function syncedResourceVersion(
  generation: number,
  labels?: Record<string, string>,
  annotations?: Record<string, string>,
): string {
  const goMap = (m?: Record<string, string>): string =>
    `map[${Object.entries(m ?? {})
      .sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      .map(([k, v]) => `${k}:${v}`)
      .join(' ')}]`;
  const h = createHash('sha3-224')
    .update(`{annotations:${goMap(annotations)} labels:${goMap(labels)}}`)
    .digest('hex');
  return `${generation}-${h}`;
}

export function refreshIntervalMs(text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_REFRESH_INTERVAL_MS;
  // A Go duration (metav1.Duration), as ESO and admission read it: ".5h", "+1h" and "1h.5m" included.
  const d = parseGoDuration(text);
  if (!d.ok) throw new ReconcileError('InvalidSpec', `spec.refreshInterval is not a duration: ${d.error}`, NEVER);
  if (d.ms < 0)
    throw new ReconcileError(
      'InvalidSpec',
      `spec.refreshInterval must not be negative (got ${JSON.stringify(text)}); use "0" to fetch once`,
      NEVER,
    );
  return d.ms;
}

/** A factor in [1 - JITTER_FRACTION, 1 + JITTER_FRACTION], fixed per uid. */
export function jitterFactor(uid: string): number {
  const n = createHash('sha256').update(uid).digest().readUInt32BE(0);
  return 1 + JITTER_FRACTION * ((n / 0xffffffff) * 2 - 1);
}

/** The object's own refresh interval after jitter (0 stays 0: "fetch once"). */
export function jitteredIntervalMs(input: Pick<RefreshInput, 'uid' | 'refreshInterval'>): number {
  const base = refreshIntervalMs(input.refreshInterval);
  return base <= 0 ? 0 : Math.round(base * jitterFactor(input.uid));
}

/** Whether to fetch from Vault now (ESO's shouldRefresh with the jittered interval). */
export function shouldRefresh(input: RefreshInput, nowMs: number): boolean {
  const current = syncedResourceVersion(input.generation, input.labels, input.annotations);
  const refreshed = input.refreshTime ? Date.parse(input.refreshTime) : NaN;
  const neverSynced = !input.syncedResourceVersion || Number.isNaN(refreshed);
  switch (input.refreshPolicy ?? 'Periodic') {
    case 'CreatedOnce':
      return neverSynced;
    case 'OnChange':
      return neverSynced || input.syncedResourceVersion !== current;
    default: {
      const interval = jitteredIntervalMs(input);
      if (interval <= 0 && input.syncedResourceVersion) return input.syncedResourceVersion !== current;
      if (input.syncedResourceVersion !== current) return true;
      if (Number.isNaN(refreshed)) return true;
      if (refreshed > nowMs) return true; // a refresh time in the future: clock skew, refresh
      // Sync windows gate only this last case: a due periodic refresh (ESO shouldRefreshPeriodic).
      return refreshed + interval <= nowMs && periodicRefreshAllowed(input.syncWindows, nowMs);
    }
  }
}

/** Delay until the next periodic refresh is due, or undefined when none will be (CreatedOnce, OnChange, "0s"). */
export function nextRefreshInMs(input: RefreshInput, nowMs: number): number | undefined {
  if ((input.refreshPolicy ?? 'Periodic') !== 'Periodic') return undefined;
  const interval = jitteredIntervalMs(input);
  if (interval <= 0) return undefined;
  const refreshed = input.refreshTime ? Date.parse(input.refreshTime) : NaN;
  if (Number.isNaN(refreshed)) return 0;
  const due = Math.max(nowMs, refreshed + interval);
  // A refresh that falls in a closed window waits for it to open (a day at most, then look again).
  const allowed = nextAllowedAt(input.syncWindows, due) ?? due + 86_400_000;
  return Math.min(allowed, due + 86_400_000) - nowMs;
}
