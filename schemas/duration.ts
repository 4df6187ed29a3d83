// Go duration strings, the one parser of the project:
// - parseGoDuration is Go's time.ParseDuration, as ESO reads `refreshInterval` (metav1.Duration) and
//   `retryInterval`: an optional sign, then one or more decimal numbers each with a unit (ns, us, µs, ms,
//   s, m, h); "0" alone needs no unit. Error texts are Go's, so users searching them find the same meaning.
// - parseDuration / durationSeconds read vaultgate's own unsigned TTL fields ("90s", "1h30m", "1.5h"):
//   the grammar the CRD schemas' pattern accepts (no sign, no µs, no bare ".5h"), valued by Go's rules.
//   Vault itself also takes bare seconds; the API does not.

export const DURATION_PATTERN = /^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$/;

const UNIT_MS: Record<string, number> = {
  ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000,
};
/** Go's limit: durations are int64 nanoseconds (about 292 years). */
const MAX_MS = 9_223_372_036_854.775;

export type DurationResult = { ok: true; ms: number } | { ok: false; error: string };

/** Go's time.ParseDuration: milliseconds (signed), or Go's error text. */
export function parseGoDuration(text: string): DurationResult {
  const quoted = JSON.stringify(text);
  const invalid: DurationResult = { ok: false, error: `time: invalid duration ${quoted}` };
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s.startsWith('-')) sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return { ok: true, ms: 0 };
  if (s === '') return invalid;
  let total = 0;
  while (s !== '') {
    const num = /^([0-9]*)(\.([0-9]*))?/.exec(s);
    const whole = num?.[1] ?? '';
    const frac = num?.[3] ?? '';
    if (!num || (whole === '' && frac === '')) return invalid;
    s = s.slice(num[0].length);
    const unit = /^[^0-9.]*/.exec(s)?.[0] ?? '';
    if (unit === '') return { ok: false, error: `time: missing unit in duration ${quoted}` };
    const factor = UNIT_MS[unit];
    if (factor === undefined) return { ok: false, error: `time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}` };
    s = s.slice(unit.length);
    total += Number(`${whole || '0'}.${frac || '0'}`) * factor;
    if (total > MAX_MS) return invalid;
  }
  return { ok: true, ms: sign * total };
}

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
