// Go's time.ParseDuration, as ESO reads `refreshInterval` (metav1.Duration) and `retryInterval`:
// an optional sign, then one or more decimal numbers each with a unit (ns, us, µs, ms, s, m, h);
// "0" alone needs no unit. Error texts are Go's, so users searching them find the same meaning.
// (schemas/duration.ts covers vaultgate's own unsigned TTL fields; ESO manifests may carry a sign,
// which must parse so that "-1h" is reported as negative rather than as malformed.)

const UNIT_MS: Record<string, number> = {
  ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000,
};
/** Go's limit: durations are int64 nanoseconds (about 292 years). */
const MAX_MS = 9_223_372_036_854.775;

export type DurationResult = { ok: true; ms: number } | { ok: false; error: string };

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
