// vaultgate's own unsigned TTL fields ("90s", "1h30m", "1.5h"): the grammar the CRD schemas' pattern
// accepts (no sign, no µs, no bare ".5h"), valued by Go's rules (golang/duration.ts). Vault itself also
// takes bare seconds; the API does not.
import { parseGoDuration } from '../golang/index.ts';

export const DURATION_PATTERN = /^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$/;

/** Milliseconds of a vaultgate TTL field (the CRD pattern's grammar), or undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION_PATTERN.test(text)) return undefined;
  const r = parseGoDuration(text);
  return r.ok ? r.ms : undefined;
}

/** Seconds, rounded down, as Vault stores TTLs. */
export function durationSeconds(text: string): number | undefined {
  const ms = parseDuration(text);
  return ms === undefined ? undefined : Math.floor(ms / 1000);
}
